// Summaries of measured values, shared by the harness and its load-generating child processes.

export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** The value below which `p` per cent of the values lie (nearest rank); NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => percentile(sorted, p);
  return {
    count: sorted.length,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length ? sorted.reduce((sum, v) => sum + v, 0) / sorted.length : Number.NaN,
  };
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at once; each one's time in ms. */
export async function runConcurrent(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<{ latenciesMs: number[]; seconds: number; errors: string[] }> {
  const latenciesMs: number[] = [];
  const errors: string[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        try {
          await task(i);
          latenciesMs.push(performance.now() - t0);
        } catch (err) {
          errors.push(err instanceof Error ? err.message : String(err));
        }
      }
    }),
  );
  return { latenciesMs, seconds: (performance.now() - started) / 1000, errors };
}

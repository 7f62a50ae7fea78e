// Readiness as the API and the worker answer it (/readyz): every check at once, each given 3 s.
import type { Logger } from '../logger';
export type ReadinessCheck = () => Promise<void>;

/** A check's failure that says what the process itself is doing (`not polling: STOPPING`), as it is. */
export class NotReady extends Error {
  override readonly name = 'NotReady';
}

export interface Readiness {
  status: 'ready' | 'unavailable';
  /** Each check: `ok`, a NotReady's own words, or `unreachable` for a dependency (its reason is logged). */
  checks: Record<string, string>;
}

const CHECK_TIMEOUT_MS = 3_000;

/**
 * Runs every check. A dependency's reason for failing (a driver's or gRPC's message, which names
 * internal hosts and ports) goes to the log only: /readyz answers anyone, without a key.
 */
export async function checkReadiness(
  checks: Record<string, ReadinessCheck>,
  log: Pick<Logger, 'warn'>,
): Promise<Readiness> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(check(), CHECK_TIMEOUT_MS);
        return [name, 'ok'] as const;
      } catch (err) {
        if (err instanceof NotReady) return [name, err.message] as const;
        log.warn({ check: name, reason: err instanceof Error ? err.message : String(err) }, 'readiness check failed');
        return [name, 'unreachable'] as const;
      }
    }),
  );
  const ready = results.length > 0 && results.every(([, state]) => state === 'ok');
  return { status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(results) };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

// HTTP load from its own process: autocannon's command line, run as a child of the harness over
// loopback, its JSON result read back. Latencies are of 2xx answers only (autocannon's rule).
import path from 'node:path';
import { runChildForJson } from './child-json';

const CLI = path.join(path.dirname(require.resolve('autocannon/package.json')), 'autocannon.js');

export interface HttpLoad {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A file holding the request body (sent as is with every request). */
  bodyFile?: string;
  body?: string;
  /** Replace `[<id>]` in the body with a fresh id per request. */
  idReplacement?: boolean;
  connections: number;
  /** Stop after this many requests... */
  amount?: number;
  /** ...or after this many seconds. */
  durationSeconds?: number;
  /** Requests per second over all connections (a steady rate); unset: as fast as answered. */
  overallRate?: number;
  timeoutSeconds?: number;
}

export interface HttpLoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  seconds: number;
  /** 2xx answers per second over the whole run. */
  perSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

interface AutocannonJson {
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  statusCodeStats?: Record<string, { count: number }>;
  latency: { p50: number; p90: number; p99: number; max: number; average: number };
}

export async function runHttpLoad(load: HttpLoad): Promise<HttpLoadResult> {
  const args = [CLI, '--json', '--no-progress', '-c', String(load.connections), '-m', load.method ?? 'GET'];
  // Samples every 25 ms: autocannon closes the run at a sample tick, so its duration is that exact.
  args.push('-L', '25', '-t', String(load.timeoutSeconds ?? 120));
  if (load.amount !== undefined) args.push('-a', String(load.amount));
  else args.push('-d', String(load.durationSeconds ?? 10));
  if (load.overallRate !== undefined) args.push('-R', String(load.overallRate));
  for (const [name, value] of Object.entries(load.headers ?? {})) args.push('-H', `${name}=${value}`);
  if (load.bodyFile) args.push('-i', load.bodyFile);
  else if (load.body !== undefined) args.push('-b', load.body);
  if (load.idReplacement) args.push('-I');
  args.push(load.url);
  const parsed = await runChildForJson<AutocannonJson>(args, 'autocannon');
  const ok = parsed['2xx'];
  return {
    ok,
    non2xx: parsed.non2xx,
    errors: parsed.errors,
    timeouts: parsed.timeouts,
    statusCodes: Object.fromEntries(
      Object.entries(parsed.statusCodeStats ?? {}).map(([status, { count }]) => [status, count]),
    ),
    seconds: parsed.duration,
    perSecond: parsed.duration > 0 ? ok / parsed.duration : 0,
    latencyMs: {
      p50: parsed.latency.p50,
      p90: parsed.latency.p90,
      p99: parsed.latency.p99,
      max: parsed.latency.max,
      mean: parsed.latency.average,
    },
  };
}

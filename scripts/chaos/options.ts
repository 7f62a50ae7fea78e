// What a chaos run does and how big it is: the command line's options and the two sizes (the full
// run, about 10-15 minutes on 2 cores, and `--quick`, well under 2 minutes with server start).
import { parseArgs } from 'node:util';

export const SCENARIO_NAMES = [
  'worker-killed',
  'temporal-restarted',
  'database-down',
  'api-killed-mid-batch',
  'provider-faults',
  'webhook-receiver-down',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface ChaosOptions {
  quick: boolean;
  /** Calls per population scenario. */
  calls: number;
  /** Elements of the batch the API is killed under. */
  batchSize: number;
  only: ScenarioName[];
  /** Where to write the results as JSON, if anywhere. */
  jsonFile?: string;
  /** Keep the temporary folder (server data, each process's log) instead of removing it. */
  keep: boolean;
  /** Show every line the servers and service processes write. */
  verbose: boolean;
  /** A workflow bundle built already (the test suite's); otherwise one is built once per run. */
  workflowBundlePath?: string;
  /**
   * A compiled build's folder (`npm run build`'s `dist`, or the test suite's) to run the API, worker
   * and emulator from, as the deployment image runs them; otherwise their sources run through tsx.
   */
  dist?: string;
  /** Seeds the random choices (kill moments, emulator faults), so a run can be repeated. */
  seed: number;
  timing: Timing;
}

/** Durations of one run, in milliseconds. */
export interface Timing {
  /** How long the database stays down. */
  databaseOutageMs: number;
  /** How long the webhook receiver refuses deliveries (shorter than the retry schedule's 31 s). */
  receiverOutageMs: number;
  /** Between the two worker kills. */
  secondWorkerKillAfterMs: number;
  /** The batch request is killed as soon as its first records are stored (mid-write), at most this long after it was sent. */
  batchKillWithinMs: number;
  /** How long the retried batch request may take to get its 201 (past the API's 5-minute abandoned-key window in the full run). */
  batchRetryDeadlineMs: number;
  /** Scheduled calls fall due this far apart, from shortly after they are created: during the fault. */
  scheduleSpreadMs: number;
  /** After recovery, how long every call may take to end and its terminal event to arrive. */
  settleDeadlineMs: number;
  /** How long a call workflow may stay Running after its call ended before it counts as stuck. */
  workflowGraceMs: number;
  /** How long the emulator holds a dial's answer before dropping it (the `timeout` fault). */
  timeoutHoldMs: number;
  /** How long the API may take to be ready (`/readyz`) again once a server it needs is back. */
  recoveryDeadlineMs: number;
}

const FULL: Timing = {
  databaseOutageMs: 30_000,
  receiverOutageMs: 20_000,
  secondWorkerKillAfterMs: 10_000,
  batchKillWithinMs: 5_000,
  batchRetryDeadlineMs: 6 * 60_000,
  scheduleSpreadMs: 20_000,
  // Past every timer of the service a fault can leave a call waiting on: activity start-to-close
  // timeouts (20 s at most, capture 2 min), ring timeout and maximum duration (30 s here).
  settleDeadlineMs: 5 * 60_000,
  workflowGraceMs: 30_000,
  timeoutHoldMs: 5_000,
  recoveryDeadlineMs: 60_000,
};

const QUICK: Timing = {
  databaseOutageMs: 5_000,
  receiverOutageMs: 5_000,
  secondWorkerKillAfterMs: 1_500,
  batchKillWithinMs: 1_500,
  batchRetryDeadlineMs: 30_000,
  scheduleSpreadMs: 3_000,
  settleDeadlineMs: 150_000,
  workflowGraceMs: 10_000,
  timeoutHoldMs: 2_000,
  recoveryDeadlineMs: 30_000,
};

export function chaosOptions(input: Partial<Omit<ChaosOptions, 'timing'>> & { timing?: Partial<Timing> } = {}) {
  const quick = input.quick ?? false;
  return {
    quick,
    calls: input.calls ?? (quick ? 12 : 60),
    batchSize: input.batchSize ?? (quick ? 300 : 5000),
    only: input.only?.length ? input.only : [...SCENARIO_NAMES],
    jsonFile: input.jsonFile,
    keep: input.keep ?? false,
    verbose: input.verbose ?? false,
    workflowBundlePath: input.workflowBundlePath,
    dist: input.dist,
    seed: input.seed ?? Date.now() % 1_000_000,
    timing: { ...(quick ? QUICK : FULL), ...input.timing },
  } satisfies ChaosOptions;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `Usage: npm run chaos -- [--quick] [--calls N] [--batch N] [--only ${SCENARIO_NAMES.join(',')}]
                        [--json FILE] [--seed N] [--dist DIR] [--keep] [--verbose]`;

/** The command line's options (`npm run chaos -- ...`). */
export function parseChaosArgs(argv: string[]): ChaosOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        quick: { type: 'boolean' },
        calls: { type: 'string' },
        batch: { type: 'string' },
        only: { type: 'string' },
        json: { type: 'string' },
        seed: { type: 'string' },
        dist: { type: 'string' },
        keep: { type: 'boolean' },
        verbose: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  }
  if (values.help) throw new UsageError(USAGE);
  const count = (value: string | undefined, flag: string, max: number) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max)
      throw new UsageError(`${flag} must be a whole number from 1 to ${max}`);
    return n;
  };
  const only = values.only
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = only?.filter((name) => !(SCENARIO_NAMES as readonly string[]).includes(name)) ?? [];
  if (unknown.length)
    throw new UsageError(
      `--only: unknown scenario ${unknown.join(', ')}; the scenarios are ${SCENARIO_NAMES.join(', ')}`,
    );
  return chaosOptions({
    quick: values.quick ?? false,
    calls: count(values.calls, '--calls', 2000),
    batchSize: count(values.batch, '--batch', 10_000),
    only: only as ScenarioName[] | undefined,
    jsonFile: values.json,
    keep: values.keep ?? false,
    verbose: values.verbose ?? false,
    seed: count(values.seed, '--seed', 2 ** 31 - 1),
    dist: values.dist,
  });
}

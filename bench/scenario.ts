// What a scenario of `npm run bench` is, what it gets from the harness, what it reports, and the
// budgets every figure is judged by. A new scenario is a module exporting a BenchScenario, added with
// one line to the SCENARIOS list in bench/run.ts.
import type { Client } from '@temporalio/client';
import { requestJson, type HttpAnswer } from '../scripts/chaos/http';
import type { CpuUse } from './load/cpu';
import type { RssWindow } from './load/rss';

/** A number a scenario takes: its full-run and `--quick` values; `<scenario>.<name>=<value>` on the command line overrides. */
export interface BenchParam {
  full: number;
  quick: number;
  description: string;
}

/** A team on the bench stack with every provider on the emulator, a template and an API key with every scope. */
export interface BenchTeam {
  teamId: string;
  key: string;
  templateId: string;
}

export interface BenchContext {
  /** `--quick`: each scenario small (the params' quick values). */
  quick: boolean;
  /** This scenario's params, resolved (quick or full, then the command line's overrides). */
  params: Record<string, number>;
  /** The API, a process of its own (`http://127.0.0.1:<port>`). */
  apiUrl: string;
  /** The provider emulator, a process of its own, with its control API (`/emulator/calls`). */
  emulatorUrl: string;
  /** A team seeded at start; scenarios that need a team of their own call seedTeam(). */
  team: BenchTeam;
  /** Seeds another team (providers on the emulator); limits set its pacing (defaults: the service's). */
  seedTeam(name: string, limits?: { maxConcurrentCalls?: number; dialsPerSecond?: number }): Promise<BenchTeam>;
  /** The bench's own database on the MongoDB server (FerretDB here); the harness's mongoose is connected to it. */
  mongoUri: string;
  temporal: Client;
  temporalAddress: string;
  namespace: string;
  /** The service's task queue (the worker process polls it). */
  taskQueue: string;
  /** The bench-only worker's task queue (bench/baseline/), for baselines. */
  baselineTaskQueue: string;
  /** Process ids of the service's processes and the bench-only worker (RSS: /proc/<pid>/status). */
  /** `worker2`: the second worker process (--temporal-postgres), or null. */
  pids: { api: number; worker: number; worker2: number | null; emulator: number; baselineWorker: number };
  /** Opens a window collecting each process's peak RSS until closed (sampled every 250 ms). */
  memory(): RssWindow;
  /** Opens a window counting each process's CPU seconds until closed (to tell a scenario's sides apart). */
  cpu(): { close(): CpuUse };
  /** Waits until the machine is nearly idle (at most two minutes; --quick: 0.3 s), and logs how long. */
  settle(what: string): Promise<void>;
  /**
   * After bulk writes: the store's query planner has statistics of them, as a running service's would
   * within seconds. Answers how they were had.
   */
  freshStatistics(): Promise<string>;
  /** The environment the API and worker run with (for a CLI or another process over the same stack). */
  serviceEnv: NodeJS.ProcessEnv;
  /** The service's workflow bundle, built once at start. */
  workflowBundlePath: string;
  /** A temporary folder of this run (removed at the end). */
  workDir: string;
  log(line: string): void;
}

export interface BenchFigure {
  name: string;
  value: number;
  unit: string;
  /** The same measurement on raw Temporal, same servers, same run. */
  baseline?: number;
  /**
   * The baseline is a lower bound (its measurement was stopped at a cap), so the ratio is an upper
   * bound: sound for a budget of at most some times the baseline, and only for that.
   */
  baselineAtLeast?: true;
  /** value / baseline. */
  ratio?: number;
  /** The budget in words, and as data (from BUDGETS). */
  budget?: string;
  budgetRule?: BudgetRule;
  met?: boolean;
  note?: string;
}

export interface BenchScenario {
  name: string;
  /** One line: what it measures against what. */
  description: string;
  /** Run when no scenario is named on the command line. */
  defaultOn: boolean;
  params: Record<string, BenchParam>;
  run(ctx: BenchContext): Promise<BenchFigure[]>;
}

export type BudgetRule =
  | { kind: 'atLeastTimesBaseline'; factor: number }
  | { kind: 'atMostTimesBaseline'; factor: number }
  | { kind: 'atMost'; limit: number; unit: string };

/** Every budget of issue 16, in one place. */
export const BUDGETS = {
  /** POST /v1/phoneCalls at concurrency 16 against raw start + one insert. */
  createThroughput: { kind: 'atLeastTimesBaseline', factor: 0.7 },
  createP99: { kind: 'atMostTimesBaseline', factor: 2 },
  /** A batch of 10,000 accepted against 10,000 raw starts. */
  batchTime: { kind: 'atMostTimesBaseline', factor: 1.5 },
  /** Calls due at one instant: p99 lateness of the dial against raw sleeping workflows. */
  scheduleP99: { kind: 'atMostTimesBaseline', factor: 1.5 },
  /** Calls completed per second against raw workflows with as many no-op activities. */
  endToEndRate: { kind: 'atLeastTimesBaseline', factor: 0.6 },
  /** Status change to signed event at the receiver, at ~100 events/s. */
  webhookP99: { kind: 'atMost', limit: 1000, unit: 'ms' },
  /** The worker process with 10,000 sleeping calls. */
  workerRss: { kind: 'atMost', limit: 512, unit: 'MiB' },
  /** The API process under the create load. */
  apiRss: { kind: 'atMost', limit: 200, unit: 'MiB' },
  /** A list page against the raw find + sort + limit returning the same page, same store. */
  listVsRaw: { kind: 'atMostTimesBaseline', factor: 1.2 },
  /** A list page at 100,000 calls in one team on the embedded default (FerretDB on PostgreSQL). */
  listP99: { kind: 'atMost', limit: 150, unit: 'ms' },
  /** p99 at 100,000 calls over p99 at 10,000: well under the 10x of a linear cost. */
  listGrowth: { kind: 'atMost', limit: 2, unit: 'x' },
} as const satisfies Record<string, BudgetRule>;

export function budgetText(rule: BudgetRule): string {
  switch (rule.kind) {
    case 'atLeastTimesBaseline':
      return `>= ${rule.factor}x baseline`;
    case 'atMostTimesBaseline':
      return `<= ${rule.factor}x baseline`;
    case 'atMost':
      return `<= ${rule.limit} ${rule.unit}`;
  }
}

/** A figure, with its ratio to the baseline and, under a budget, whether it met it. */
export function figure(
  name: string,
  value: number,
  unit: string,
  extra: { baseline?: number; baselineAtLeast?: boolean; budget?: BudgetRule; note?: string } = {},
): BenchFigure {
  const out: BenchFigure = { name, value, unit };
  if (extra.baselineAtLeast && extra.budget?.kind !== 'atMostTimesBaseline')
    throw new Error(`${name}: a baseline known only as a lower bound can judge only an "at most" budget`);
  if (extra.baseline !== undefined) {
    out.baseline = extra.baseline;
    if (extra.baselineAtLeast) out.baselineAtLeast = true;
    out.ratio = extra.baseline !== 0 ? Math.round((value / extra.baseline) * 1000) / 1000 : Number.NaN;
  }
  const rule = extra.budget;
  if (rule) {
    out.budget = budgetText(rule);
    out.budgetRule = rule;
    const base = extra.baseline ?? Number.NaN;
    const met =
      rule.kind === 'atLeastTimesBaseline'
        ? value >= rule.factor * base
        : rule.kind === 'atMostTimesBaseline'
          ? value <= rule.factor * base
          : value <= rule.limit;
    // NaN anywhere (nothing measured) compares false: not met.
    out.met = met;
  }
  if (extra.note) out.note = extra.note;
  return out;
}

/** A /v1 request with a team's key (node:http: no client-side time limit short of `timeoutMs`). */
export function apiRequest<T = any>(
  ctx: Pick<BenchContext, 'apiUrl'>,
  key: string,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  body?: unknown,
  timeoutMs = 15 * 60_000,
): Promise<HttpAnswer<T>> {
  return requestJson<T>(`${ctx.apiUrl}${path}`, { method, body, headers: { 'service-api-key': key }, timeoutMs });
}

/** Throws with the answer unless it has the expected status. */
export function expectStatus<T>(answer: HttpAnswer<T>, status: number, what: string): T {
  if (answer.status !== status) {
    const error = answer.status === 0 ? answer.error : JSON.stringify(answer.body).slice(0, 500);
    throw new Error(`${what} answered ${answer.status}: ${error}`);
  }
  return answer.body;
}

/** Far ahead: calls that sleep for the whole run. */
export const FAR_AHEAD_MS = 200 * 86_400_000;

/** A number whose last four digits (2000-2999) the emulator gives no special outcome: a conversation. */
export function conversationNumber(i: number): string {
  // Exchanges 200-999: a NANP exchange never starts with 0 or 1.
  return `+1415${200 + (Math.floor(i / 1000) % 800)}${2000 + (i % 1000)}`;
}

/** A busy line (the emulator answers numbers ending 1486 with busy): the shortest call there is. */
export function busyNumber(i: number): string {
  return `+1415${200 + (i % 800)}1486`;
}

export const PROVIDER_ROTATION = ['twilio', 'vonage', 'telnyx'] as const;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const ms = (value: number) => Math.round(value * 10) / 10;

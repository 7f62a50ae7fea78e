// Start time and memory of the API and the worker, run the way a deployment's image runs them
// (compiled JavaScript, the workflow bundle built ahead of time by `npm run build`) against the way
// the image used to (`node --import tsx` on the TypeScript sources, the worker packing its workflow
// code with webpack at every start). Each process is started alone, one after another, on the same
// servers: the time runs from spawn until the API answers /readyz with 200, or until the worker logs
// that it runs (its pollers start); RSS is read from /proc a moment later.
//
//   npx tsx bench/startup.ts [--runs 3] [--build] [--ways tsx,compiled] [--root DIR]
//       [--mongo-uri URI --temporal-address HOST:PORT]
//
// Without servers given it starts its own FerretDB/PostgreSQL and Temporal dev server (as bench/run.ts
// does). `measureStartup()` answers the figures for the bench runner.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { procStatFields } from '../src/local/proc-stat';
import { freePort, freePorts, startMongoStack, startTemporal, type RunningServer } from '../src/local/servers';
import { runBuild } from './build';

const ROOT = path.resolve(__dirname, '..');

/**
 * - `tsx`: `node --import tsx src/main/<name>.ts` with tsx's cache off (a fresh container's first
 *   start), the worker bundling its workflow code at start: what the image did before.
 * - `tsx-cached`: the same with tsx's compile cache warm (a restarted container, or a developer's machine).
 * - `compiled-bundling`: compiled JavaScript, the worker still bundling at start (worker only).
 * - `compiled`: `node dist/src/main/<name>.js`, the worker loading dist/workflow-bundle.js: the image now.
 */
export type StartupWay = 'tsx' | 'tsx-cached' | 'compiled-bundling' | 'compiled';
export const STARTUP_WAYS: readonly StartupWay[] = ['tsx', 'tsx-cached', 'compiled-bundling', 'compiled'];

export type StartupProcess = 'api' | 'worker';

export interface StartupOptions {
  /** Starts per way and process (the median is reported). Default 3. */
  runs?: number;
  /** Default: every way. */
  ways?: readonly StartupWay[];
  /** Servers to use; without them this starts its own (and stops them at the end). */
  servers?: { mongoUri: string; temporalAddress: string; namespace?: string };
  /** Where `dist/` and the node_modules the compiled processes use live (an image's layout). Default: this checkout. */
  compiledRoot?: string;
  /** `always`: run `npm run build` first; `if-missing` (default): only when dist/ lacks an entry point or the bundle. */
  build?: 'always' | 'if-missing' | 'never';
  /** How long after ready the RSS is read. Default 2 s. */
  settleMs?: number;
  /** Per start. Default 120 s. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface StartupRun {
  /** Spawn until ready. */
  readyMs: number;
  /** RSS `settleMs` after ready, of the process and any it started (tsx's esbuild service). */
  rssMiB: number;
  /** The Node process's peak RSS until then (VmHWM). */
  peakRssMiB: number;
}

export interface StartupFigure {
  way: StartupWay;
  process: StartupProcess;
  command: string;
  runs: StartupRun[];
  medianReadyMs: number;
  medianRssMiB: number;
  medianPeakRssMiB: number;
}

export interface StartupResult {
  figures: StartupFigure[];
  /** `npm run build` when this run did it, in seconds. */
  buildSeconds: number | null;
  /** How long after ready the RSS was read. */
  settleMs: number;
  machine: { cpus: number; node: string; loadBefore: number[]; loadAfter: number[] };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The command line of one process started one way. */
function commandFor(way: StartupWay, name: StartupProcess, compiledRoot: string): { args: string[]; cwd: string } {
  if (way === 'tsx' || way === 'tsx-cached') {
    return { args: ['--import', 'tsx', path.join(ROOT, 'src', 'main', `${name}.ts`)], cwd: ROOT };
  }
  return { args: [path.join(compiledRoot, 'dist', 'src', 'main', `${name}.js`)], cwd: compiledRoot };
}

/**
 * RSS of every process in the group `pid` leads (tsx keeps an esbuild service process beside Node),
 * and the leader's peak RSS (VmHWM).
 */
async function memoryOf(pid: number): Promise<{ rssMiB: number; peakRssMiB: number }> {
  const kib = (status: string, field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  if (!existsSync('/proc/self/stat')) {
    // Not Linux: ps knows the leader's current RSS only.
    const { stdout } = await promisify(execFile)('ps', ['-o', 'rss=', '-p', String(pid)]);
    return { rssMiB: Number(stdout.trim()) / 1024, peakRssMiB: NaN };
  }
  let rssKiB = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(procStatFields(Number(entry))?.[2]) === pid)
        rssKiB += kib(await readFile(`/proc/${entry}/status`, 'utf8'), 'VmRSS');
    } catch {
      // gone meanwhile
    }
  }
  const leader = await readFile(`/proc/${pid}/status`, 'utf8');
  return { rssMiB: rssKiB / 1024, peakRssMiB: kib(leader, 'VmHWM') / 1024 };
}

interface Servers {
  mongoUri: string;
  temporalAddress: string;
  namespace: string;
}

/** Starts one process, waits until it is ready, reads its memory, and stops it. */
async function startOnce(
  way: StartupWay,
  name: StartupProcess,
  servers: Servers,
  options: { compiledRoot: string; settleMs: number; timeoutMs: number; encryptionKey: string },
): Promise<StartupRun> {
  const port = await freePort();
  const { args, cwd } = commandFor(way, name, options.compiledRoot);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    MONGODB_URI: servers.mongoUri,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    TEMPORAL_NAMESPACE: servers.namespace,
    // Its own task queue: no worker of an earlier start is still listed on it.
    TEMPORAL_TASK_QUEUE: `startup-${randomBytes(4).toString('hex')}`,
    ENCRYPTION_KEY: options.encryptionKey,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    WORKER_METRICS_PORT: '0',
    // The worker's readiness is an info line of the SDK's.
    LOG_LEVEL: 'info',
    ...(way === 'tsx' ? { TSX_DISABLE_CACHE: '1' } : {}),
    ...(way === 'compiled' && name === 'worker'
      ? { WORKFLOW_BUNDLE_PATH: path.join(options.compiledRoot, 'dist', 'workflow-bundle.js') }
      : {}),
  };
  let output = '';
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(`exited with ${signal ?? `code ${code}`}`)),
  );
  let running = false;
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
    // The SDK's line once the worker's pollers start (src/worker/create-worker.ts forwards its logs).
    if (/"msg":"Worker state changed"/.test(output) && /"state":"RUNNING"/.test(output)) running = true;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill('SIGKILL'), 15_000);
    kill('SIGTERM');
    await exited;
    clearTimeout(timer);
  };
  try {
    const ready =
      name === 'api'
        ? async () => {
            try {
              const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
              await res.arrayBuffer();
              return res.status === 200;
            } catch {
              return false;
            }
          }
        : async () => running;
    let gone: string | null = null;
    void exited.then((how) => (gone = how));
    const deadline = started + options.timeoutMs;
    while (!(await ready())) {
      if (gone) throw new Error(`${name} (${way}) ${gone} before it was ready`);
      if (performance.now() > deadline) throw new Error(`${name} (${way}) not ready within ${options.timeoutMs} ms`);
      await sleep(20);
    }
    const readyMs = performance.now() - started;
    await sleep(options.settleMs);
    if (gone) throw new Error(`${name} (${way}) ${gone} after it was ready`);
    return { readyMs, ...(await memoryOf(child.pid!)) };
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nIts last output:\n${output.slice(-4_000)}`, {
      cause: err,
    });
  } finally {
    await stop();
  }
}

async function startServers(
  dir: string,
  log: (line: string) => void,
): Promise<{ servers: Servers; stop(): Promise<void> }> {
  log('Starting FerretDB/PostgreSQL and the Temporal dev server...');
  const running: RunningServer[] = [];
  const stop = async () => {
    for (const server of running.reverse()) await server.stop().catch(() => undefined);
  };
  try {
    const [postgresPort, mongoPort, temporalPort] = (await freePorts(3)) as [number, number, number];
    const [mongo, temporal] = await Promise.all([
      startMongoStack({
        dataDir: path.join(dir, 'mongo'),
        postgresPort,
        mongoPort,
        log: () => undefined,
      }),
      startTemporal({
        dataDir: path.join(dir, 'temporal'),
        port: temporalPort,
        uiPort: 0,
        headless: true,
        log: () => undefined,
      }),
    ]);
    running.push(...[...mongo.servers].reverse(), temporal.server);
    return { servers: { mongoUri: mongo.uri, temporalAddress: temporal.address, namespace: 'default' }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Starts the API and the worker each way `runs` times, one process at a time, and answers the figures. */
export async function measureStartup(options: StartupOptions = {}): Promise<StartupResult> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const runs = options.runs ?? 3;
  const ways = options.ways ?? STARTUP_WAYS;
  const compiledRoot = path.resolve(options.compiledRoot ?? ROOT);
  const settings = {
    compiledRoot,
    settleMs: options.settleMs ?? 2_000,
    timeoutMs: options.timeoutMs ?? 120_000,
    encryptionKey: randomBytes(32).toString('base64'),
  };
  const loadBefore = os.loadavg();

  let buildSeconds: number | null = null;
  const wantsCompiled = ways.some((way) => way.startsWith('compiled'));
  const built = ['api.js', 'worker.js'].every((file) =>
    existsSync(path.join(compiledRoot, 'dist', 'src', 'main', file)),
  );
  const bundled = existsSync(path.join(compiledRoot, 'dist', 'workflow-bundle.js'));
  if (wantsCompiled && (options.build === 'always' || (options.build !== 'never' && !(built && bundled)))) {
    if (compiledRoot !== ROOT)
      throw new Error(`npm run build builds this checkout only: build ${compiledRoot} yourself`);
    log('npm run build...');
    buildSeconds = (await runBuild()).seconds;
    log(`npm run build: ${buildSeconds.toFixed(1)} s`);
  } else if (wantsCompiled && !(built && bundled)) {
    throw new Error(`${compiledRoot}/dist is incomplete: run npm run build`);
  }

  const dir = await mkdtemp(path.join(os.tmpdir(), 'oco-startup-'));
  await chmod(dir, 0o755);
  const own = options.servers ? null : await startServers(dir, log);
  const servers: Servers = options.servers ? { namespace: 'default', ...options.servers } : own!.servers;
  try {
    // Once untimed, so that the indexes exist and the servers have seen a client before any start counts.
    log('Warming up (one untimed start of each)...');
    const warmWay = ways.includes('compiled') ? 'compiled' : ways[0]!;
    for (const name of ['api', 'worker'] as const) await startOnce(warmWay, name, servers, settings);

    const figures = new Map<string, StartupFigure>();
    for (let run = 0; run < runs; run += 1) {
      // Interleaved, so that a change in the machine's load touches every way alike.
      for (const name of ['api', 'worker'] as const) {
        for (const way of ways) {
          if (way === 'compiled-bundling' && name === 'api') continue; // the API bundles nothing
          const figure = figures.get(`${way} ${name}`) ?? {
            way,
            process: name,
            command: `node ${commandFor(way, name, compiledRoot)
              .args.map((arg) => (path.isAbsolute(arg) ? path.relative(compiledRoot, arg) : arg))
              .join(' ')}`,
            runs: [],
            medianReadyMs: 0,
            medianRssMiB: 0,
            medianPeakRssMiB: 0,
          };
          figures.set(`${way} ${name}`, figure);
          const result = await startOnce(way, name, servers, settings);
          figure.runs.push(result);
          log(
            `run ${run + 1}/${runs} ${name} ${way}: ready in ${result.readyMs.toFixed(0)} ms, RSS ${result.rssMiB.toFixed(0)} MiB (peak ${result.peakRssMiB.toFixed(0)} MiB)`,
          );
        }
      }
    }
    for (const figure of figures.values()) {
      figure.medianReadyMs = median(figure.runs.map((r) => r.readyMs));
      figure.medianRssMiB = median(figure.runs.map((r) => r.rssMiB));
      figure.medianPeakRssMiB = median(figure.runs.map((r) => r.peakRssMiB));
    }
    return {
      figures: [...figures.values()],
      buildSeconds,
      settleMs: settings.settleMs,
      machine: { cpus: os.cpus().length, node: process.version, loadBefore, loadAfter: os.loadavg() },
    };
  } finally {
    await own?.stop();
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** How a process was started, in words (the API bundles nothing, so its ways differ only in the loader). */
function describe(way: StartupWay, name: StartupProcess): string {
  const loader = way === 'tsx' ? 'tsx, cache off' : way === 'tsx-cached' ? 'tsx, warm cache' : 'compiled JS';
  const bundle = name === 'api' ? '' : way === 'compiled' ? ', prebuilt bundle' : ', bundles at start';
  const note = way === 'tsx' ? ' (the image before)' : way === 'compiled' ? ' (the image now)' : '';
  return `${loader}${bundle}${note}`;
}

/** A Markdown table of the medians. */
export function startupTable(result: StartupResult): string {
  const load = (values: number[]) => values.map((v) => v.toFixed(2)).join(' ');
  const lines = [
    `| process | how | median start | median RSS after start | median peak RSS | starts (ms) |`,
    `|---|---|---|---|---|---|`,
    ...result.figures.map(
      (f) =>
        `| ${f.process} | ${describe(f.way, f.process)} | ${(f.medianReadyMs / 1000).toFixed(2)} s | ${f.medianRssMiB.toFixed(0)} MiB | ${f.medianPeakRssMiB.toFixed(0)} MiB | ${f.runs.map((r) => r.readyMs.toFixed(0)).join(', ')} |`,
    ),
    '',
    `Start: spawn until /readyz answers 200 (API) or the worker logs that it runs. RSS: the process group ${result.settleMs / 1000} s later; peak: the Node process's VmHWM.`,
    `${result.machine.cpus} CPUs, Node ${result.machine.node}; load average (1, 5, 15 min) before ${load(result.machine.loadBefore)}, after ${load(result.machine.loadAfter)}.` +
      (result.buildSeconds === null ? '' : ` npm run build took ${result.buildSeconds.toFixed(1)} s.`),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      build: { type: 'boolean', default: false },
      ways: { type: 'string' },
      root: { type: 'string' },
      'mongo-uri': { type: 'string' },
      'temporal-address': { type: 'string' },
    },
  });
  const ways = values.ways?.split(',').map((way) => way.trim()) as StartupWay[] | undefined;
  const unknown = ways?.filter((way) => !STARTUP_WAYS.includes(way));
  if (unknown?.length) throw new Error(`unknown way(s) ${unknown.join(', ')}; known: ${STARTUP_WAYS.join(', ')}`);
  if (Boolean(values['mongo-uri']) !== Boolean(values['temporal-address'])) {
    throw new Error('give both --mongo-uri and --temporal-address, or neither');
  }
  const result = await measureStartup({
    runs: Number(values.runs),
    ways,
    build: values.build ? 'always' : 'if-missing',
    compiledRoot: values.root,
    servers:
      values['mongo-uri'] && values['temporal-address']
        ? { mongoUri: values['mongo-uri'], temporalAddress: values['temporal-address'] }
        : undefined,
  });
  process.stdout.write(`\n${startupTable(result)}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

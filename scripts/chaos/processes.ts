// The service as deployed, each part its own process so that it can be killed: PostgreSQL with
// FerretDB and the Temporal dev server (its own, in a temporary folder, so that they can be stopped
// and started again on the same data and ports), and the provider emulator, the worker and the API
// as `npm start` runs them. Every service process is its own process group: a kill takes it whole.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import mongoose from 'mongoose';
import { withNodeProcessEnv } from '../../src/local/node-process-env';
import { freePorts, startMongoStack, startTemporal, type RunningServer } from '../../src/local/servers';
import { connectTemporalClient } from '../../src/temporal/connection';
import { requestJson, sleep } from './http';
import { OutputTail } from './output-tail';

const ROOT = path.resolve(__dirname, '..', '..');
/** Emulated time runs 20 times faster: a conversation lasts a second or two, a busy line a tenth. */
const EMULATOR_SPEED_FACTOR = '0.05';

type Log = (line: string) => void;

/** Process groups of service processes still running: killed if this process exits without stopping them. */
const liveGroups = new Set<number>();
process.on('exit', () => {
  for (const pid of liveGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * One service process that can be killed and started again: `node --import tsx src/main/<name>.ts`, or
 * for a compiled script (`dist/src/main/<name>.js`, as the deployment image runs) plain `node`.
 */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  /** Exits nobody asked for, said as they happened. */
  readonly unexpectedExits: string[] = [];

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: NodeJS.ProcessEnv,
    readonly tail: OutputTail,
    private readonly log: Log,
  ) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    const script = path.resolve(ROOT, this.script);
    const args = script.endsWith('.js') ? [script] : ['--import', 'tsx', script];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      // As the image and `npm start` run it.
      env: withNodeProcessEnv(this.env),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: a kill reaches whatever it started, and a Ctrl-C of ours does not reach it.
      detached: true,
    });
    this.child = child;
    if (child.pid) liveGroups.add(child.pid);
    this.tail.note(`started, pid ${child.pid}`);
    child.stdout?.on('data', (chunk: Buffer) => this.tail.add(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => this.tail.add(chunk.toString()));
    child.once('exit', (code, signal) => {
      if (child.pid) liveGroups.delete(child.pid);
      if (this.child !== child) return; // killed on purpose: kill() let go of it first
      this.child = null;
      const what = `${this.name} (pid ${child.pid}) exited unexpectedly with ${signal ?? `code ${code}`}`;
      this.unexpectedExits.push(what);
      this.log(`${what}; its last lines:\n${this.tail.text()}`);
    });
  }

  /** Kills the whole process group (SIGKILL: no shutdown at all), and waits until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL', graceMs = 20_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    this.child = null;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.tail.note(`${signal} to process group ${child.pid}`);
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        // already gone
      }
    };
    killGroup(signal);
    if (signal !== 'SIGKILL') {
      const timer = setTimeout(() => killGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    } else {
      await exited;
    }
  }
}

export interface ChaosStack {
  dir: string;
  mongoUri: string;
  apiUrl: string;
  emulatorUrl: string;
  taskQueue: string;
  namespace: string;
  encryptionKey: string;
  /** What a team's Vonage `signatureSecret` and Telnyx `publicKey` must be for the emulator's callbacks to verify. */
  vonageSignatureSecret: string;
  telnyxPublicKey: string;
  /** The harness's own client (the stuck-workflow sweep, readiness of workers). */
  temporal: Client;
  emulator: ServiceProcess;
  worker: ServiceProcess;
  api: ServiceProcess;
  /** Starts a worker and waits until it polls the task queue. */
  startWorker(): Promise<void>;
  startApi(): Promise<void>;
  stopDatabase(): Promise<void>;
  startDatabase(): Promise<void>;
  stopTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  /** Every exit of a service process that nobody asked for, so far. */
  unexpectedExits(): string[];
  /** The last lines of every process and server. */
  recentOutput(): string;
  stop(): Promise<void>;
}

/** Starts the servers, bundles the workflow code once, then the emulator, a worker and the API. */
export async function startChaosStack(options: {
  workflowBundlePath?: string;
  /** ChaosOptions' `dist`. */
  dist?: string;
  keep: boolean;
  verbose: boolean;
  log: Log;
}): Promise<ChaosStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'oco-chaos-'));
  // PostgreSQL runs as its own user (it refuses root) and must be able to reach its data folder.
  await chmod(dir, 0o755);
  const logDir = path.join(dir, 'logs');
  await mkdir(logDir);
  const echo = options.verbose ? options.log : null;
  const tail = (name: string) => new OutputTail(name, path.join(logDir, `${name}.log`), echo);
  const serverTail = tail('servers');
  const serverLog: Log = (line) => serverTail.add(line);

  // Chosen together: ports picked one at a time can repeat before the first is listened on (a CI run
  // handed FerretDB's port to the emulator as well).
  const chosen = (await freePorts(5)) as [number, number, number, number, number];
  const ports = { postgres: chosen[0], mongo: chosen[1], temporal: chosen[2], api: chosen[3], emulator: chosen[4] };
  const mongoOptions = {
    dataDir: path.join(dir, 'mongo'),
    postgresPort: ports.postgres,
    mongoPort: ports.mongo,
    log: serverLog,
  };
  const temporalOptions = {
    dataDir: path.join(dir, 'temporal'),
    port: ports.temporal,
    uiPort: 0,
    headless: true,
    log: serverLog,
  };
  let databaseServers: RunningServer[] = [];
  let temporalServer: RunningServer | null = null;
  let temporal: Client | null = null;
  const processes: ServiceProcess[] = [];

  const stopServers = async () => {
    for (const server of [temporalServer, ...databaseServers]) await server?.stop().catch(() => undefined);
    temporalServer = null;
    databaseServers = [];
  };
  const stop = async () => {
    for (const service of [...processes].reverse()) await service.kill('SIGKILL');
    await temporal?.connection.close().catch(() => undefined);
    await mongoose.disconnect().catch(() => undefined);
    await stopServers();
    for (const service of processes) await service.tail.close();
    await serverTail.close();
    if (options.keep) options.log(`Kept ${dir} (server data, and every process's log under logs/)`);
    else await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  };

  try {
    options.log('Starting PostgreSQL + FerretDB and the Temporal dev server, bundling the workflow code...');
    const [mongo, temporalStarted, bundlePath] = await Promise.all([
      startMongoStack(mongoOptions),
      startTemporal(temporalOptions),
      options.workflowBundlePath ?? bundle(path.join(dir, 'workflow-bundle.js')),
    ]);
    databaseServers = mongo.servers;
    temporalServer = temporalStarted.server;
    temporal = await connectTemporalClient({ address: temporalStarted.address, namespace: 'default' });

    const telnyxKeys = generateKeyPairSync('ed25519');
    const secrets = {
      encryptionKey: randomBytes(32).toString('base64'),
      vonageSignatureSecret: randomBytes(24).toString('base64url'),
      telnyxPrivateKeyPem: telnyxKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      telnyxPublicKey: telnyxKeys.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64'),
    };
    const apiUrl = `http://127.0.0.1:${ports.api}`;
    const emulatorUrl = `http://127.0.0.1:${ports.emulator}`;
    const taskQueue = `chaos-${randomBytes(4).toString('hex')}`;
    // As src/main/start.ts builds it, with the service's timers shortened to the emulator's pace.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MONGODB_URI: mongo.uri,
      TEMPORAL_ADDRESS: temporalStarted.address,
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
      LOG_LEVEL: 'warn',
      EMULATOR_PORT: String(ports.emulator),
      EMULATOR_HOST: '127.0.0.1',
      EMULATOR_SPEED_FACTOR,
      EMULATOR_CONTROL: '1',
      EMULATOR_CALLBACK_RETRIES: '3',
      EMULATOR_VONAGE_SIGNATURE_SECRET: secrets.vonageSignatureSecret,
      EMULATOR_TELNYX_PRIVATE_KEY: secrets.telnyxPrivateKeyPem,
      // The retry schedule's shape, in seconds instead of minutes and hours (31 s in all).
      WEBHOOK_RETRY_DELAYS: '1s,2s,4s,8s,16s',
      RECONCILE_AFTER_SECONDS: '5',
      RING_TIMEOUT_SECONDS: '30',
      // A call silent this long asks its provider how it stands (default 30 s; calls here last ~2 s).
      CALL_STATUS_POLL_SECONDS: '5',
    };
    const dist = options.dist;
    const main = (name: string) => (dist ? path.resolve(dist, 'src', 'main', `${name}.js`) : `src/main/${name}.ts`);
    const emulator = new ServiceProcess('emulator', main('emulator'), env, tail('emulator'), options.log);
    const worker = new ServiceProcess(
      'worker',
      main('worker'),
      { ...env, WORKFLOW_BUNDLE_PATH: bundlePath },
      tail('worker'),
      options.log,
    );
    const api = new ServiceProcess('api', main('api'), env, tail('api'), options.log);
    processes.push(emulator, worker, api);

    const client = temporal;
    const startWorker = async () => {
      worker.start();
      await waitForPoller(client, taskQueue, worker, 60_000);
    };
    const startApi = async () => {
      api.start();
      await waitForHttp(`${apiUrl}/readyz`, api, 60_000);
    };
    emulator.start();
    await waitForHttp(`${emulatorUrl}/healthz`, emulator, 60_000);
    await Promise.all([startWorker(), startApi()]);

    return {
      dir,
      mongoUri: mongo.uri,
      apiUrl,
      emulatorUrl,
      taskQueue,
      namespace: 'default',
      encryptionKey: secrets.encryptionKey,
      vonageSignatureSecret: secrets.vonageSignatureSecret,
      telnyxPublicKey: secrets.telnyxPublicKey,
      temporal: client,
      emulator,
      worker,
      api,
      startWorker,
      startApi,
      async stopDatabase() {
        serverTail.note('stopping FerretDB, then PostgreSQL');
        // FerretDB first, then PostgreSQL (the order startMongoStack gives them in).
        for (const server of databaseServers) await server.stop();
        databaseServers = [];
      },
      async startDatabase() {
        serverTail.note('starting PostgreSQL and FerretDB again on the same data and ports');
        databaseServers = (await startMongoStack(mongoOptions)).servers;
      },
      async stopTemporal() {
        serverTail.note('stopping the Temporal dev server');
        await temporalServer?.stop();
        temporalServer = null;
      },
      async startTemporal() {
        serverTail.note('starting the Temporal dev server again on the same database file and port');
        temporalServer = (await startTemporal(temporalOptions)).server;
      },
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

async function bundle(file: string): Promise<string> {
  const quiet = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet, log: quiet },
  });
  await writeFile(file, code);
  return file;
}

async function waitForHttp(url: string, owner: ServiceProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!owner.running) throw new Error(`${owner.name} exited before ${url} answered`);
    const answer = await requestJson(url, { timeoutMs: 5_000 });
    if (answer.status === 200) return;
    last = answer.status === 0 ? String(answer.error) : `${answer.status} ${JSON.stringify(answer.body)}`;
    await sleep(200);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s (last: ${last})`);
}

/**
 * A worker is up once it polls the task queue. Its identity is `<pid>@<host>` (the SDK's default), so
 * the new worker is told apart from a killed one that the server still lists for a while.
 */
export async function waitForPoller(
  client: Client,
  taskQueue: string,
  worker: ServiceProcess,
  timeoutMs: number,
): Promise<void> {
  const pid = worker.pid;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!worker.running || worker.pid !== pid) throw new Error(`the worker (pid ${pid}) exited before it polled`);
    try {
      const { pollers } = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      });
      if (pollers?.some((p) => p.identity?.startsWith(`${pid}@`))) return;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(250);
  }
  throw new Error(`the worker (pid ${pid}) did not poll ${taskQueue} within ${timeoutMs / 1000} s ${last}`);
}

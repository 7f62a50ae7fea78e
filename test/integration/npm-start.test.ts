// `npm start` as a person runs it (src/main/start.ts, from a shell with none of the service's variables
// but the suite's servers, free ports and a data folder of its own): it comes up Ready, its worker
// polling, with a curl that places a call. Killed outright, it leaves its processes running in their
// own process groups; the next `npm start` stops them and comes up, a second one beside it is
// refused, and a closed terminal (SIGHUP) stops everything in order. Run through npm itself, it stops
// in order on a SIGTERM sent to npm (a process manager's stop), and when its worker stops on a signal
// only the Temporal SDK heeds. Interrupted while it starts its own PostgreSQL and FerretDB, it stops
// them too; and one of them dying after Ready stops the rest, and npm start exits 1.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { processRecordPath, processStartedAt } from '../../src/local/leftover-processes';
import { freePorts } from '../../src/local/servers';
import { followOutput } from '../helpers/child-output';
import { withDatabase } from '../helpers/database-uri';
import { processesWithEnv } from '../helpers/processes';
import { expectWorkerReady } from '../helpers/worker-readiness';

const ROOT = path.resolve(__dirname, '..', '..');
let dataDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'oco-npm-start-'));
  await chmod(dataDir, 0o755);
  const [api, emulator, metrics] = (await freePorts(3)) as [number, number, number];
  const database = `npm_start_${randomBytes(4).toString('hex')}`;
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    OCO_DATA_DIR: dataDir,
    MONGODB_URI: withDatabase(inject('mongoUri'), database),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `test-${database}`,
    // The suite's bundle: the worker would otherwise bundle the workflow code at every start.
    WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    PORT: String(api),
    EMULATOR_PORT: String(emulator),
    WORKER_METRICS_PORT: String(metrics),
  };
});

afterAll(async () => {
  // Whatever a failed assertion left running goes with the test: every process with this data folder
  // (npm start passes it on to each).
  for (const pid of await processesWithEnv(`OCO_DATA_DIR=${dataDir}`)) process.kill(pid, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

/** The pids `npm start` recorded for its processes. */
function recordedPids(): number[] {
  const file = processRecordPath(dataDir);
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, 'utf8')) as { processes: Array<{ pid: number }> }).processes.map((p) => p.pid);
}

/** Runs `npm start` itself: npm, and its script (`exec tsx src/main/start.ts`) under npm's shell. */
function npmItself() {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...env, npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, ...followOutput(child) };
}

/** Waits until none of `pids` runs any more (it fails, naming the ones left, after `timeoutMs`). */
async function allGone(pids: number[], timeoutMs: number): Promise<void> {
  await expect
    .poll(() => pids.filter((pid) => processStartedAt(pid) !== null), { timeout: timeoutMs, interval: 250 })
    .toEqual([]);
}

/** Runs `npm start`'s script, as `npm start` does. */
function npmStart() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/start.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, ...followOutput(child) };
}

it('comes up again after being killed, stopping what it left running; refuses a second; stops on SIGHUP', async () => {
  const first = npmStart();
  const firstOutput = await first.until('Ctrl-C stops everything.');
  expect(firstOutput, firstOutput).toContain('Ready.');
  // Ready means the worker polls: its /readyz (on its metrics port, no token) says so for both its queues.
  await expectWorkerReady(`http://127.0.0.1:${env.WORKER_METRICS_PORT}`, env.TEMPORAL_TASK_QUEUE!);

  // The printed curl places a call.
  const curl = /curl -sS -X POST (\S+) -H 'content-type: application\/json' -H 'service-api-key: (\S+)' -d '(.+)'/.exec(
    firstOutput,
  );
  expect(curl, firstOutput).not.toBeNull();
  const [, url, key, body] = curl!;
  const created = await fetch(url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-api-key': key! },
    body,
  });
  expect(created.status).toBe(201);

  // Killed outright: its emulator, worker and API run on.
  const left = recordedPids();
  expect(left).toHaveLength(3);
  first.child.kill('SIGKILL');
  await first.exited;
  for (const pid of left) expect(processStartedAt(pid), `pid ${pid}`).not.toBeNull();

  const second = npmStart();
  const secondOutput = await second.until('Ctrl-C stops everything.');
  expect(secondOutput).toContain(
    `A previous npm start (pid ${first.child.pid}) ended without stopping its processes; stopping emulator (pid ${left[0]}), worker (pid ${left[1]}), api (pid ${left[2]})`,
  );
  expect(secondOutput, secondOutput).toContain('Ready.');
  for (const pid of left) expect(processStartedAt(pid), `pid ${pid}`).toBeNull();
  // The same demo key still works against the new processes.
  expect((await fetch(url!, { headers: { 'service-api-key': key! } })).status).toBe(200);

  const third = npmStart();
  expect(await third.exited).toBe(1);
  expect(third.output()).toContain(`npm start is already running (pid ${second.child.pid})`);
  // It started nothing, so it says nothing of stopping: that would read as if the running stack had stopped.
  expect(third.output()).not.toMatch(/Stopping|Stopped/);

  const running = recordedPids();
  expect(running).toHaveLength(3);
  second.child.kill('SIGHUP');
  expect(await second.exited).toBe(0);
  expect(second.output()).toContain('Stopped.');
  for (const pid of running) expect(processStartedAt(pid), `pid ${pid}`).toBeNull();
  expect(existsSync(processRecordPath(dataDir))).toBe(false);
}, 240_000);

it('stops in order on a SIGTERM sent to npm, and when its worker stops on a signal only the SDK heeds', async () => {
  // The Temporal SDK stops a worker on SIGUSR2 (and SIGQUIT, and a SIGTERM that comes while the worker
  // starts); the worker process then exits, and npm start stops the rest as for any process that exits.
  const first = npmItself();
  const firstOutput = await first.until('Ctrl-C stops everything.');
  expect(firstOutput, firstOutput).toContain('Ready.');
  const firstPids = recordedPids();
  expect(firstPids).toHaveLength(3);
  // Once it runs: a SIGUSR2 before the SDK listens for it would end the process by Node's default.
  await first.until('"msg":"worker running"');
  process.kill(firstPids[1]!, 'SIGUSR2'); // the worker (emulator, worker, api)
  await allGone(firstPids, 30_000);
  expect(await first.exited).toBe(1);
  expect(first.output()).toContain('A service process exited unexpectedly (code 0); stopping.');
  expect(first.output()).toContain('Stopped.');

  // A process manager stops npm, not its script: the signal must reach npm start through npm's shell.
  const second = npmItself();
  const secondOutput = await second.until('Ctrl-C stops everything.');
  expect(secondOutput, secondOutput).toContain('Ready.');
  const secondPids = recordedPids();
  expect(secondPids).toHaveLength(3);
  second.child.kill('SIGTERM');
  await allGone(secondPids, 45_000);
  await second.exited;
  expect(second.output()).toContain(`Stopped. Data is kept in ${dataDir}/ for the next npm start.`);
  expect(second.output()).not.toContain('exited unexpectedly');
  expect(existsSync(processRecordPath(dataDir))).toBe(false);
}, 240_000);

/** Whether something accepts connections on `port` (loopback). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The processes with `OCO_DATA_DIR=dir` in their environment whose command starts with `command`
 * (the binaries are named with their version: `ferretdb-v1.24.2`).
 */
async function processesOf(dir: string, command: string): Promise<number[]> {
  const pids = await processesWithEnv(`OCO_DATA_DIR=${dir}`);
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith(command);
    } catch {
      return false; // ended meanwhile
    }
  });
}

/**
 * Runs `npm start`'s script with database servers of its own (no MONGODB_URI), in a data folder of its
 * own; `cleanUp` kills whatever it left (PostgreSQL by its pid file) and removes the folder.
 */
async function npmStartWithOwnServers(prefix: string) {
  const ownDataDir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await chmod(ownDataDir, 0o755);
  const [postgresPort, mongoPort] = (await freePorts(2)) as [number, number];
  const { MONGODB_URI: _configured, ...rest } = env;
  const ownEnv = {
    ...rest,
    OCO_DATA_DIR: ownDataDir,
    LOCAL_POSTGRES_PORT: String(postgresPort),
    LOCAL_MONGO_PORT: String(mongoPort),
  };
  const postmasterPid = path.join(ownDataDir, 'mongo', 'postgres', 'postmaster.pid');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/start.ts'], {
    cwd: ROOT,
    env: ownEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const cleanUp = async () => {
    child.kill('SIGKILL');
    // A PostgreSQL left running (the assertions failed) goes with the test.
    if (existsSync(postmasterPid)) process.kill(Number(readFileSync(postmasterPid, 'utf8').split('\n')[0]), 'SIGKILL');
    for (const pid of await processesWithEnv(`OCO_DATA_DIR=${ownDataDir}`)) process.kill(pid, 'SIGKILL');
    await rm(ownDataDir, { recursive: true, force: true });
  };
  return { ownDataDir, postgresPort, mongoPort, postmasterPid, child, started: followOutput(child), cleanUp };
}

it.each([
  // FerretDB's indexes are being installed: FerretDB is not spawned yet.
  ['as PostgreSQL begins to listen', (_dir: string, postgresPort: number) => listening(postgresPort)],
  // FerretDB spawned, maybe not yet listening.
  ['once FerretDB is spawned', async (dir: string) => (await processesOf(dir, 'ferretdb')).length > 0],
])(
  'stops the PostgreSQL and FerretDB it is still starting when interrupted (Ctrl-C) %s',
  async (_moment, reached) => {
    // Its own database servers this time: a first start, so that PostgreSQL's initdb runs and FerretDB
    // starts only after PostgreSQL listens.
    const { ownDataDir, postgresPort, mongoPort, postmasterPid, child, started, cleanUp } =
      await npmStartWithOwnServers('oco-npm-start-servers-');
    try {
      await started.until('Starting PostgreSQL and FerretDB...');
      await expect.poll(() => reached(ownDataDir, postgresPort), { timeout: 60_000, interval: 20 }).toBe(true);
      child.kill('SIGINT');
      expect(await started.exited, started.output()).toBe(0);
      expect(started.output()).toContain('Stopped.');
      expect(started.output()).not.toContain('npm start failed');
      // Nothing more was started once the stop began.
      expect(started.output()).not.toMatch(/^\[(emulator|worker|api)\]/m);
      expect(await listening(postgresPort), 'PostgreSQL still listens').toBe(false);
      expect(await listening(mongoPort), 'FerretDB still listens').toBe(false);
      expect(existsSync(postmasterPid), 'PostgreSQL did not shut down').toBe(false);
      expect(await processesOf(ownDataDir, 'ferretdb'), 'FerretDB still runs').toEqual([]);
      expect(existsSync(processRecordPath(ownDataDir))).toBe(false);
    } finally {
      await cleanUp();
    }
  },
  120_000,
);

it('stops everything and exits 1 when one of its servers dies after Ready', async () => {
  // Its own PostgreSQL and FerretDB; FerretDB then killed outright, as the out-of-memory killer would.
  const { ownDataDir, postgresPort, started, cleanUp } = await npmStartWithOwnServers('oco-npm-start-crash-');
  try {
    const output = await started.until('Ctrl-C stops everything.');
    expect(output, output).toContain('Ready.');
    const [ferretdb] = await processesOf(ownDataDir, 'ferretdb');
    process.kill(ferretdb!, 'SIGKILL');
    expect(await started.exited, started.output()).toBe(1);
    expect(started.output()).toContain('The ferretdb server exited unexpectedly (signal SIGKILL); stopping.');
    expect(started.output()).toContain('Stopped.');
    expect(await listening(postgresPort), 'PostgreSQL still listens').toBe(false);
    expect(await processesWithEnv(`OCO_DATA_DIR=${ownDataDir}`)).toEqual([]);
  } finally {
    await cleanUp();
  }
}, 180_000);

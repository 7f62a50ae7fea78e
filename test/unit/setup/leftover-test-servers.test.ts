// The servers of a test run that Vitest ended without its teardown (Ctrl-C, a kill) are stopped and its
// folder removed: by a process that waits for the run to be gone, or by the next run's setup. A run
// still going keeps its servers and folder. Real processes stand in for the servers.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { processRecordPath, processStartedAt } from '../../../src/local/leftover-processes';
import { TEST_RUN_PREFIX, stopLeftTestServers, sweepEarlierTestRuns } from '../../../test/setup/leftover-test-servers';

let tmp: string;
const started: ChildProcess[] = [];

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'oco-sweep-'));
});
afterEach(async () => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(tmp, { recursive: true, force: true });
});

/** A process that runs `seconds` (for ever when left out), printing once it is up. */
async function running(seconds?: number): Promise<ChildProcess> {
  const script = seconds
    ? `console.log('up'); setTimeout(() => {}, ${seconds * 1000})`
    : `console.log('up'); setInterval(() => {}, 1000)`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  started.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child;
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

const identity = (pid: number) => ({ pid, startedAt: processStartedAt(pid)! });

/** A run's folder under `tmp`, with a record of `server` owned by `owner` (no record without a server). */
async function runFolder(name: string, owner: { pid: number; startedAt: number }, server?: ChildProcess) {
  const dir = path.join(tmp, name);
  await mkdir(dir);
  if (server) {
    const processes = [{ name: 'postgres', ...identity(server.pid!), signal: 'SIGINT' }];
    writeFileSync(processRecordPath(dir), JSON.stringify({ owner, processes }));
  }
  return dir;
}

const gone = { pid: 2 ** 22 + 17, startedAt: 1 };

it("sweeps the folders of runs that are gone, stopping their servers, and leaves running runs' alone", async () => {
  const leftServer = await running();
  const liveServer = await running();
  const left = await runFolder(`${TEST_RUN_PREFIX}left`, gone, leftServer);
  const live = await runFolder(`${TEST_RUN_PREFIX}live`, identity(process.pid), liveServer);
  const settingUp = await runFolder(`${TEST_RUN_PREFIX}setting-up`, gone);
  const other = await runFolder('someone-else', gone, liveServer);

  expect(await sweepEarlierTestRuns(tmp)).toBe(1);
  expect(existsSync(left)).toBe(false);
  await exited(leftServer);
  expect(leftServer.signalCode).toBe('SIGINT');
  for (const kept of [live, settingUp, other]) expect(existsSync(kept)).toBe(true);
  expect(processStartedAt(liveServer.pid!)).not.toBeNull();
});

it('waits for the run to be gone, then stops its servers and removes its folder', async () => {
  const run = await running(0.4);
  const server = await running();
  const dir = await runFolder(`${TEST_RUN_PREFIX}ending`, identity(run.pid!), server);
  // Not waiting: the run is still there.
  expect(await stopLeftTestServers(dir)).toBe(false);
  expect(existsSync(dir)).toBe(true);
  expect(await stopLeftTestServers(dir, 10_000)).toBe(true);
  expect(processStartedAt(run.pid!)).toBeNull();
  expect(existsSync(dir)).toBe(false);
  expect(processStartedAt(server.pid!)).toBeNull();
});

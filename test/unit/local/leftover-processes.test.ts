// What a killed `npm start` left running is stopped by the next one: real processes, recorded by pid
// and start time, stopped newest first with their own signal, SIGKILL for one that ignores it, and
// never a process that only reuses a recorded pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  StackRunningError,
  createProcessRecord,
  processRecordPath,
  processStartedAt,
  stopLeftoverProcesses,
} from '../../../src/local/leftover-processes';

let dir: string;
let file: string;
const started: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'oco-leftovers-'));
  file = processRecordPath(dir);
});
afterEach(async () => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/**
 * A process that runs until signalled. With `log`, it writes its name and the signal there as it
 * stops (so the order of stops shows); `ignoring` a signal, it must be killed.
 */
async function longRunning(
  options: { name?: string; log?: string; ignoring?: NodeJS.Signals } = {},
): Promise<ChildProcess & { exited: Promise<void> }> {
  const onSignal = options.ignoring
    ? `process.on('${options.ignoring}', () => {});`
    : options.log
      ? `for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { require('fs').appendFileSync(${JSON.stringify(options.log)}, ${JSON.stringify(options.name)} + ' ' + s + '\\n'); process.exit(0); });`
      : '';
  const script = `${onSignal} console.log('up'); setInterval(() => {}, 1000)`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  started.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return Object.assign(child, { exited });
}

/** A record as a killed npm start leaves it: its owner gone. */
function leftRecord(processes: Array<{ name: string; pid: number; startedAt: number; signal: NodeJS.Signals }>) {
  writeFileSync(file, JSON.stringify({ owner: { pid: 2 ** 22 + 17, startedAt: 1 }, processes }));
}

const identity = (child: ChildProcess) => ({ pid: child.pid!, startedAt: processStartedAt(child.pid!)! });

describe('stopLeftoverProcesses', () => {
  it('stops what a gone npm start recorded, newest first, says so, and forgets the record', async () => {
    const log = path.join(dir, 'stops.log');
    const server = await longRunning({ name: 'server', log });
    const service = await longRunning({ name: 'service', log });
    leftRecord([
      { name: 'server', ...identity(server), signal: 'SIGINT' },
      { name: 'service', ...identity(service), signal: 'SIGTERM' },
    ]);
    const said: string[] = [];
    expect(await stopLeftoverProcesses(file, (line) => said.push(line))).toEqual(['server', 'service']);
    // Each was gone before the next one was signalled.
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['service SIGTERM', 'server SIGINT']);
    expect(said.join('\n')).toContain(`stopping server (pid ${server.pid}), service (pid ${service.pid})`);
    expect(existsSync(file)).toBe(false);
  });

  it('kills one that does not stop on its signal', async () => {
    const stubborn = await longRunning({ ignoring: 'SIGTERM' });
    leftRecord([{ name: 'stubborn', ...identity(stubborn), signal: 'SIGTERM' }]);
    expect(await stopLeftoverProcesses(file, () => undefined, 300)).toEqual(['stubborn']);
    await stubborn.exited;
    expect(stubborn.signalCode).toBe('SIGKILL');
  });

  it('never signals a process that only has a recorded pid (started at another time)', async () => {
    const other = await longRunning();
    leftRecord([{ name: 'reused', pid: other.pid!, startedAt: identity(other).startedAt - 1, signal: 'SIGTERM' }]);
    const said: string[] = [];
    expect(await stopLeftoverProcesses(file, (line) => said.push(line))).toEqual([]);
    expect(said).toEqual([]);
    expect(processStartedAt(other.pid!)).toBe(identity(other).startedAt);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses while the npm start that wrote the record still runs, and keeps its record', async () => {
    const service = await longRunning();
    const record = createProcessRecord(file);
    record.add('service', service.pid);
    await expect(stopLeftoverProcesses(file, () => undefined)).rejects.toThrow(StackRunningError);
    await expect(stopLeftoverProcesses(file, () => undefined)).rejects.toThrow(
      `npm start is already running (pid ${process.pid})`,
    );
    expect(existsSync(file)).toBe(true);
    expect(processStartedAt(service.pid!)).not.toBeNull();
  });

  it('does nothing without a record, or with one it cannot read', async () => {
    expect(await stopLeftoverProcesses(file, () => undefined)).toEqual([]);
    writeFileSync(file, 'not json');
    expect(await stopLeftoverProcesses(file, () => undefined)).toEqual([]);
  });
});

describe('createProcessRecord', () => {
  it('records each process by pid, start time and signal, and removes only a record it wrote', async () => {
    const record = createProcessRecord(file);
    record.remove();
    record.add('nothing', undefined);
    expect(existsSync(file)).toBe(false);

    const service = await longRunning();
    record.add('postgres', service.pid, 'SIGINT');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      owner: { pid: process.pid, startedAt: processStartedAt(process.pid) },
      processes: [{ name: 'postgres', ...identity(service), signal: 'SIGINT' }],
    });
    record.remove();
    expect(existsSync(file)).toBe(false);
  });
});

it('reads a start time that stays with the process, and none for a pid nothing holds', () => {
  const own = processStartedAt(process.pid);
  expect(own).toBeGreaterThan(0);
  expect(processStartedAt(process.pid)).toBe(own);
  expect(processStartedAt(2 ** 22 + 17)).toBeNull();
});

// Ctrl-C on `npm run bench`: the processes it starts run in process groups of their own (so that the
// terminal's signal does not cut their ordered stop short), so the bench itself must stop them before
// it leaves. The bench runs here on the suite's servers, in a process group of its own, and gets
// SIGINT as a terminal's Ctrl-C would send it to that group; every process it started carries a mark
// in its environment, and none may be left afterwards.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { FERRETDB_VERSION, TEMPORAL_CLI_VERSION } from '../../src/local/binaries';
import { FERRETDB_GC_PERCENT } from '../../src/local/servers';
import { benchEnv, ROOT } from '../helpers/bench';
import { followOutput } from '../helpers/child-output';
import { processesWithEnv } from '../helpers/processes';

const MARK = `OCO_BENCH_INTERRUPT_MARK=${randomBytes(6).toString('hex')}`;

/** Process ids whose environment carries this test's mark. */
const markedProcesses = () => processesWithEnv(MARK);

afterAll(async () => {
  // Should the bench have left anything behind, the suite does not keep it.
  for (const pid of await markedProcesses()) process.kill(pid, 'SIGKILL');
});

/**
 * Runs the bench with `args` in a process group of its own, waits for `readyLine` in its output and
 * for at least `processes` marked processes, `settleMs` more, then sends the group SIGINT as a terminal's
 * Ctrl-C would (`twice`: again once the bench says it is stopping).
 */
async function interruptBench(
  args: string[],
  readyLine: string,
  processes: number,
  { env = {}, settleMs = 0, twice = false }: { env?: NodeJS.ProcessEnv; settleMs?: number; twice?: boolean } = {},
) {
  const [name, value] = MARK.split('=') as [string, string];
  const bench = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/run.ts', '--quick', '--dist', inject('compiledDistPath'), '--no-append', ...args],
    {
      cwd: ROOT,
      env: benchEnv({ ...env, [name]: value }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  const followed = followOutput(bench);
  const output = await followed.until(readyLine);
  let started: number[] = [];
  for (let tries = 0; tries < 50 && started.length < processes; tries++) {
    if (tries) await new Promise((resolve) => setTimeout(resolve, 100));
    started = await markedProcesses();
  }
  expect(started.length, output).toBeGreaterThanOrEqual(processes);
  const goServers = await goServersAmong(started);
  await new Promise((resolve) => setTimeout(resolve, settleMs));

  process.kill(-bench.pid!, 'SIGINT');
  if (twice) {
    // Ctrl-C again once the stop is under way, as an impatient person would.
    await followed.until('stopping every process and server');
    process.kill(-bench.pid!, 'SIGINT');
  }
  const code = await followed.exited;
  return { code, output: followed.output(), left: await markedProcesses(), goServers };
}

/** The Go servers among `pids` (by their executable's name), each with the GOGC it runs with. */
async function goServersAmong(pids: number[]): Promise<Array<{ name: string; gogc: string | undefined }>> {
  const found = [];
  for (const pid of pids) {
    const [command] = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    const name = path.basename(command ?? '');
    if (!/^(ferretdb|temporal)-/.test(name)) continue;
    const environ = (await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '')).split('\0');
    found.push({ name, gogc: environ.find((v) => v.startsWith('GOGC='))?.slice('GOGC='.length) });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

it('stops every process it started when interrupted, then exits with 130', async () => {
  // Webhooks at a modest rate for ten minutes: the interrupt lands while the load runs. By then the
  // bench, the emulator, the worker, the API, the bench-only worker and the load (autocannon, started
  // just after the line) at least.
  const args = ['webhooks', 'webhooks.modestRate=0', 'webhooks.rate=10', 'webhooks.seconds=600'];
  const { code, output, left } = await interruptBench(args, 'events/s for 600 s', 6);
  expect(code, output).toBe(130);
  expect(output).toContain('SIGINT: stopping every process and server of this run');
  expect(left, output).toEqual([]);
}, 180_000);

it('finishes its stop when calls of the interrupted scenario fail during it', async () => {
  // End to end waits on each call's workflow result (a long poll): the stop closes the Temporal
  // connection under those polls, whose retries then throw from their timers while the bench stops
  // its servers. Before the bench tolerated that, the process died there with exit code 1, leaving
  // FerretDB and its PostgreSQL running. So this run starts servers of its own (no URI, no address),
  // and places enough calls that the polls still wait a second after the batch was accepted. By then
  // the bench, its four processes, PostgreSQL, FerretDB and the Temporal dev server at least.
  // Ctrl-C comes twice: the second must neither cut the stop short nor count a failure twice.
  const args = ['end-to-end', 'end-to-end.calls=100'];
  const env = { MONGODB_URI: '', TEMPORAL_ADDRESS: '' };
  const { code, output, left, goServers } = await interruptBench(args, 'waiting for its calls to end', 8, {
    env,
    settleMs: 1_000,
    twice: true,
  });
  // The Go servers it started: FerretDB with its collector's target (src/local/servers.ts), the
  // Temporal dev server with Go's default.
  expect(goServers).toEqual([
    { name: `ferretdb-${FERRETDB_VERSION}`, gogc: process.env.GOGC || FERRETDB_GC_PERCENT },
    { name: `temporal-${TEMPORAL_CLI_VERSION}`, gogc: process.env.GOGC },
  ]);
  expect(code, output).toBe(130);
  expect(output).not.toContain('Channel has been shut down');
  expect(output.match(/SIGINT: stopping every process and server/g), output).toHaveLength(1);
  expect(output, output).toContain('SIGINT: already stopping');
  expect((output.match(/calls of the interrupted scenario failed/g) ?? []).length, output).toBeLessThanOrEqual(1);
  expect(left, output).toEqual([]);
}, 180_000);

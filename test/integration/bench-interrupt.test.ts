// Ctrl-C on `npm run bench`: the processes it starts run in process groups of their own (so that the
// terminal's signal does not cut their ordered stop short), so the bench itself must stop them before
// it leaves. The bench runs here on the suite's servers, in a process group of its own, and gets
// SIGINT as a terminal's Ctrl-C would send it to that group; every process it started carries a mark
// in its environment, and none may be left afterwards.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, expect, it } from 'vitest';
import { benchEnv, ROOT } from '../helpers/bench';

const MARK = `OCO_BENCH_INTERRUPT_MARK=${randomBytes(6).toString('hex')}`;

/** Process ids whose environment carries this test's mark. */
async function markedProcesses(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(MARK)) found.push(Number(entry));
  }
  return found;
}

afterAll(async () => {
  // Should the bench have left anything behind, the suite does not keep it.
  for (const pid of await markedProcesses()) process.kill(pid, 'SIGKILL');
});

it('stops every process it started when interrupted, then exits with 130', async () => {
  const [name, value] = MARK.split('=') as [string, string];
  // Webhooks at a modest rate for ten minutes: the interrupt lands while the load runs.
  const args = ['webhooks', 'webhooks.modestRate=0', 'webhooks.rate=10', 'webhooks.seconds=600'];
  const bench = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/run.ts', '--quick', '--tsx', '--no-append', ...args],
    {
      cwd: ROOT,
      env: benchEnv({ [name]: value }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  const exited = new Promise<number | null>((resolve) => bench.on('close', (code) => resolve(code)));
  const scenarioStarted = new Promise<void>((resolve) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      // The load has begun: the API, the worker, the emulator and autocannon are all up by then.
      if (output.includes('events/s for 600 s')) resolve();
    };
    bench.stdout.on('data', read);
    bench.stderr.on('data', read);
  });
  await Promise.race([scenarioStarted, exited]);
  // The bench, the emulator, the worker, the API, the bench-only worker and the load (autocannon,
  // started just after the line) at least.
  let started: number[] = [];
  for (let tries = 0; tries < 50 && started.length < 6; tries++) {
    if (tries) await new Promise((resolve) => setTimeout(resolve, 100));
    started = await markedProcesses();
  }
  expect(started.length, output).toBeGreaterThanOrEqual(6);

  process.kill(-bench.pid!, 'SIGINT');
  expect(await exited, output).toBe(130);
  expect(output).toContain('SIGINT: stopping every process and server of this run');
  expect(await markedProcesses(), output).toEqual([]);
}, 180_000);

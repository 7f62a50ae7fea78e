// A build command (`go build`, minutes long on a first start) ends with the process that ran it:
// `npm start` stopped during a first build exits from its own signal handler, and the command would
// otherwise build on, orphaned.
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);

/** The pids of processes whose command line is exactly `command`. */
function pidsOf(command: string): number[] {
  const found = spawnSync('pgrep', ['-f', `^${command}$`], { encoding: 'utf8' });
  return found.stdout.split('\n').filter(Boolean).map(Number);
}

describe('a build command', () => {
  it('is stopped when the process that ran it exits first', { timeout: 30_000 }, async () => {
    // A duration nothing else runs: the command is found by its whole command line.
    const seconds = `61.${process.pid}`;
    const script = `
      const { run } = require(${JSON.stringify(path.resolve('src/local/binaries.ts'))});
      run('sleep', [${JSON.stringify(seconds)}], { capture: true, progress: () => undefined }).catch(() => undefined);
      setTimeout(() => process.exit(0), 2_000);
    `;
    try {
      const ran = execFileAsync(process.execPath, ['--import', 'tsx', '-e', script]);
      // Seen running while its process lives, so that its absence after says something.
      await expect.poll(() => pidsOf(`sleep ${seconds}`).length, { timeout: 10_000, interval: 50 }).toBe(1);
      await ran;
      await expect.poll(() => pidsOf(`sleep ${seconds}`), { timeout: 5_000, interval: 50 }).toEqual([]);
    } finally {
      for (const pid of pidsOf(`sleep ${seconds}`)) process.kill(pid, 'SIGKILL');
    }
  });
});

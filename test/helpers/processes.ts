// Processes found by what their environment holds: a test marks the processes it starts (through
// their environment, which their children inherit) and finds every one of them afterwards (Linux).
import { readFile, readdir } from 'node:fs/promises';

/** Ids of the processes other than this one whose environment holds `entry` (`NAME=value`). */
export async function processesWithEnv(entry: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(entry)) found.push(Number(pid));
  }
  return found;
}

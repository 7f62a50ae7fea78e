// What `npm start` left running when it was killed (kill -9, a crash, the OOM killer): its servers and
// service processes run in process groups of their own, so that a Ctrl-C reaches only `npm start`,
// which then stops them in order; nothing else stops them when it cannot. So `npm start` records each
// process it started in the data folder, and the next `npm start` stops those still running before it
// starts anew, instead of failing on ports they hold.
//
// A process is known by its pid and its start time (`/proc/<pid>/stat`): a pid the kernel has since
// handed to another process is never signalled. Without /proc (not Linux) nothing is recorded.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { procStatFields } from './proc-stat';

export interface RecordedProcess {
  name: string;
  pid: number;
  /** The process's start, in clock ticks since boot: with the pid, who it is. */
  startedAt: number;
  /** What stops it in order (PostgreSQL: SIGINT, its fast shutdown). */
  signal: NodeJS.Signals;
}

interface ProcessRecordFile {
  /** The `npm start` that started them. */
  owner: { pid: number; startedAt: number };
  /** In the order they started: stopped in reverse. */
  processes: RecordedProcess[];
}

export function processRecordPath(dataDir: string): string {
  return path.join(dataDir, 'local-processes.json');
}

/**
 * A process's start time in clock ticks since boot, or null when it is gone, has ended and waits to be
 * reaped (a zombie), or there is no /proc.
 */
export function processStartedAt(pid: number): number | null {
  const fields = procStatFields(pid);
  if (!fields || fields[0] === 'Z' || fields[0] === 'X') return null;
  const startedAt = Number(fields[19]);
  return Number.isFinite(startedAt) ? startedAt : null;
}

function isStill(proc: { pid: number; startedAt: number }): boolean {
  return processStartedAt(proc.pid) === proc.startedAt;
}

function readRecord(file: string): ProcessRecordFile | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as ProcessRecordFile;
    return Array.isArray(parsed.processes) && parsed.owner ? parsed : null;
  } catch {
    return null;
  }
}

/** This process's record of what it starts: written as each one starts, removed once all have stopped. */
export function createProcessRecord(file: string) {
  const ownStart = processStartedAt(process.pid);
  const record: ProcessRecordFile = { owner: { pid: process.pid, startedAt: ownStart ?? 0 }, processes: [] };
  let written = false;
  return {
    add(name: string, pid: number | undefined, signal: NodeJS.Signals = 'SIGTERM'): void {
      const startedAt = pid === undefined ? null : processStartedAt(pid);
      if (ownStart === null || pid === undefined || startedAt === null) return;
      record.processes.push({ name, pid, startedAt, signal });
      writeFileSync(file, JSON.stringify(record, null, 2));
      written = true;
    },
    /** Once every process has stopped. Only this record: another npm start's is never removed here. */
    remove(): void {
      if (written) rmSync(file, { force: true });
    },
  };
}

/** A previous `npm start` is still running: the ports are its, and its processes too. */
export class StackRunningError extends Error {
  override readonly name = 'StackRunningError';
}

/**
 * Stops the processes a previous `npm start` recorded and left running, newest first, each with its
 * own signal and then SIGKILL after `timeoutMs`; throws StackRunningError when that `npm start` is
 * still running. Returns the names of those it stopped.
 */
export async function stopLeftoverProcesses(
  file: string,
  say: (line: string) => void,
  timeoutMs = 30_000,
): Promise<string[]> {
  const record = readRecord(file);
  if (!record) return [];
  if (isStill(record.owner)) {
    throw new StackRunningError(
      `npm start is already running (pid ${record.owner.pid}) on this data folder: stop it first (Ctrl-C in its terminal), ` +
        'use its stack as it is, or give a second stack a data folder and ports of its own (OCO_DATA_DIR, PORT, ...).',
    );
  }
  const left = record.processes.filter(isStill);
  if (left.length) {
    say(
      `A previous npm start (pid ${record.owner.pid}) ended without stopping its processes; stopping ${left
        .map((p) => `${p.name} (pid ${p.pid})`)
        .join(', ')}...`,
    );
  }
  for (const proc of [...left].reverse()) await stopRecorded(proc, timeoutMs);
  rmSync(file, { force: true });
  return left.map((p) => p.name);
}

async function stopRecorded(proc: RecordedProcess, timeoutMs: number): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    // Checked again at every signal: the pid may have been reused the moment it ended.
    if (!isStill(proc)) return;
    try {
      process.kill(proc.pid, sig);
    } catch {
      // Gone meanwhile.
    }
  };
  const gone = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (isStill(proc) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    return !isStill(proc);
  };
  signal(proc.signal);
  if (await gone(timeoutMs)) return;
  signal('SIGKILL');
  if (!(await gone(5_000))) throw new Error(`${proc.name} (pid ${proc.pid}) did not stop, even on SIGKILL`);
}

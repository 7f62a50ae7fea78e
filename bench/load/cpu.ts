// CPU time per process (and its children) and of the whole machine, read from /proc (Linux): what
// each scenario cost each process, so that a report can say where the cores went.
import { readFileSync, readdirSync } from 'node:fs';
import { procStatFields } from '../../src/local/proc-stat';

interface ProcStat {
  ppid: number;
  /** utime + stime, seconds. */
  own: number;
  /** `own` and the same of its children that have exited and were waited for, seconds. */
  seconds: number;
}

/** Clock ticks per second of /proc's figures (USER_HZ, 100 on Linux). */
const TICKS = 100;

function readStat(pid: number): ProcStat | null {
  const fields = procStatFields(pid);
  if (!fields) return null; // gone meanwhile
  const own = (Number(fields[11]) + Number(fields[12])) / TICKS;
  return { ppid: Number(fields[1]), own, seconds: own + (Number(fields[13]) + Number(fields[14])) / TICKS };
}

/** User + system CPU time of `pid` itself in seconds, or null when it is gone (or this is not Linux). */
export function cpuSeconds(pid: number): number | null {
  return readStat(pid)?.own ?? null;
}

/** Every process's stat, once: for the descendants of several roots in one pass. */
function allStats(): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return stats; // not Linux
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.set(Number(entry), stat);
  }
  return stats;
}

/** Busy CPU time of the whole machine (all cores), seconds, from /proc/stat. */
export function machineBusySeconds(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    // cpu user nice system idle iowait irq softirq steal ...
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user! + nice! + system! + irq! + softirq! + steal!) / TICKS;
  } catch {
    return null;
  }
}

/**
 * Waits until the machine is nearly idle: under `busyCores` of its cores busy over a second (over
 * `maxMs` when that is shorter), or until `maxMs` passed. A side of a scenario (a baseline's raw
 * starts) leaves work behind (the workflow tasks its worker has not run yet) that would otherwise be
 * billed to the side measured after it. Answers how long it waited, and whether the machine went quiet.
 */
export async function settle(
  options: { busyCores?: number; maxMs?: number } = {},
): Promise<{ waitedMs: number; quiet: boolean }> {
  const busyCores = options.busyCores ?? 0.3;
  const started = Date.now();
  const deadline = started + (options.maxMs ?? 120_000);
  // Sampled a second at a time, or over the whole wait when it is shorter (a quick run's moment).
  const sampleMs = Math.min(1000, options.maxMs ?? 1000);
  for (;;) {
    const before = machineBusySeconds();
    await new Promise((resolve) => setTimeout(resolve, sampleMs));
    const after = machineBusySeconds();
    if (before === null || after === null) return { waitedMs: Date.now() - started, quiet: false }; // not Linux
    if (after - before < (busyCores * sampleMs) / 1000) return { waitedMs: Date.now() - started, quiet: true };
    if (Date.now() >= deadline) return { waitedMs: Date.now() - started, quiet: false };
  }
}

/** CPU seconds of each named root process together with all its descendants (a server's workers). */
export function treeCpuSeconds(roots: Record<string, number | null>): Record<string, number | null> {
  const stats = allStats();
  const children = new Map<number, number[]>();
  for (const [pid, stat] of stats) {
    const siblings = children.get(stat.ppid);
    if (siblings) siblings.push(pid);
    else children.set(stat.ppid, [pid]);
  }
  const sum = (pid: number): number =>
    (stats.get(pid)?.seconds ?? 0) + (children.get(pid) ?? []).reduce((total, child) => total + sum(child), 0);
  return Object.fromEntries(
    Object.entries(roots).map(([name, pid]) => [name, pid !== null && stats.has(pid) ? sum(pid) : null]),
  );
}

export interface CpuUse {
  /** CPU seconds each process (with its children) used while the window was open. */
  seconds: Record<string, number | null>;
  /** What the machine's cores used in all, and what no named process accounts for (load, kernel). */
  machineSeconds: number | null;
  otherSeconds: number | null;
}

/** Opens a window now; its `close()` answers what each process used since. */
export function cpuWindow(roots: () => Record<string, number | null>): { close(): CpuUse } {
  const before = treeCpuSeconds(roots());
  const machineBefore = machineBusySeconds();
  return {
    close() {
      const after = treeCpuSeconds(roots());
      const machineAfter = machineBusySeconds();
      const seconds = Object.fromEntries(
        Object.entries(after).map(([name, value]) => {
          const start = before[name];
          return [name, value === null || start === null || start === undefined ? null : round(value - start)];
        }),
      );
      const machineSeconds =
        machineAfter === null || machineBefore === null ? null : round(machineAfter - machineBefore);
      const named = Object.values(seconds).reduce<number>((total, value) => total + (value ?? 0), 0);
      return { seconds, machineSeconds, otherSeconds: machineSeconds === null ? null : round(machineSeconds - named) };
    },
  };
}

/** One line for the log: each process's CPU seconds, the busiest first. */
export function describeCpu(cpu: CpuUse): string {
  const named = Object.entries(cpu.seconds).flatMap(([name, value]) =>
    typeof value === 'number' ? [[name, value] as const] : [],
  );
  named.sort((a, b) => b[1] - a[1]);
  const parts = named.map(([name, value]) => `${name} ${value}`);
  if (cpu.otherSeconds !== null) parts.push(`other ${cpu.otherSeconds}`);
  return `${parts.join(', ')}${cpu.machineSeconds !== null ? ` (machine ${cpu.machineSeconds})` : ''}`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

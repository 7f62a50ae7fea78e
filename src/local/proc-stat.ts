// A process's line in /proc/<pid>/stat (Linux), split into fields. The command name (field 2) is in
// parentheses and may hold spaces and parentheses itself, so the fields are those after its last ')':
// index 0 is the state (field 3 of the line), 1 the parent pid, 2 the process group, 11 and 12 user and
// system time, 19 the start time in clock ticks since boot (field 22).
import { readFileSync } from 'node:fs';

/** The fields after the command name, or null when the process is gone (or there is no /proc). */
export function procStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

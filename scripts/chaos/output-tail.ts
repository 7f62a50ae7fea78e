// The last lines a process wrote, kept to show when it dies or a scenario fails; every line also goes
// to the process's log file in the run's folder (kept with --keep).
import { createWriteStream, type WriteStream } from 'node:fs';

export class OutputTail {
  private readonly lines: string[] = [];
  private readonly file: WriteStream;

  constructor(
    readonly name: string,
    logFile: string,
    private readonly echo: ((line: string) => void) | null,
    private readonly keep = 60,
  ) {
    this.file = createWriteStream(logFile, { flags: 'a' });
    // A log file that cannot be written must not stop the run: the tail in memory still works.
    this.file.on('error', () => undefined);
  }

  add(text: string): void {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      this.lines.push(line);
      if (this.lines.length > this.keep) this.lines.shift();
      this.file.write(`${new Date().toISOString()} ${line}\n`);
      this.echo?.(`[${this.name}] ${line}`);
    }
  }

  /** A marker in the log (a kill, a restart), so the log reads as the run went. */
  note(text: string): void {
    this.add(`--- ${text} ---`);
  }

  text(): string {
    return this.lines.map((line) => `  [${this.name}] ${line}`).join('\n');
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.file.end(() => resolve()));
  }
}

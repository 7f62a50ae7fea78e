// Memory (VmRSS) of the service processes, read from /proc (Linux), sampled through the whole run so
// that each scenario can report the peak of each process while it ran.
import { readFileSync } from 'node:fs';

/** Resident set size of `pid` in MiB, or null when the process is gone (or this is not Linux). */
export function rssMiB(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

export interface RssPeaks {
  /** Highest RSS seen per process while the window was open, MiB. */
  peakMiB: Record<string, number | null>;
  /** RSS per process when the window closed, MiB. */
  endMiB: Record<string, number | null>;
}

export class RssWindow {
  private readonly peaks = new Map<string, number>();
  private closed: RssPeaks | null = null;

  constructor(private readonly sampler: RssSampler) {}

  record(name: string, mib: number): void {
    if (this.closed) return;
    this.peaks.set(name, Math.max(this.peaks.get(name) ?? 0, mib));
  }

  /** The peak of one process so far (or at close). */
  peak(name: string): number | null {
    return this.peaks.get(name) ?? null;
  }

  close(): RssPeaks {
    if (this.closed) return this.closed;
    this.sampler.sampleNow();
    const names = this.sampler.names();
    this.closed = {
      peakMiB: Object.fromEntries(names.map((n) => [n, this.peaks.get(n) ?? null])),
      endMiB: Object.fromEntries(names.map((n) => [n, this.sampler.current(n)])),
    };
    this.sampler.forget(this);
    return this.closed;
  }
}

/** Samples every named process every `intervalMs` into every open window. */
export class RssSampler {
  private readonly windows = new Set<RssWindow>();
  private readonly latest = new Map<string, number | null>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly pids: () => Record<string, number | null>,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    this.sampleNow();
    this.timer = setInterval(() => this.sampleNow(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  names(): string[] {
    return Object.keys(this.pids());
  }

  current(name: string): number | null {
    return this.latest.get(name) ?? null;
  }

  sampleNow(): void {
    for (const [name, pid] of Object.entries(this.pids())) {
      const mib = pid === null ? null : rssMiB(pid);
      this.latest.set(name, mib);
      if (mib !== null) for (const window of this.windows) window.record(name, mib);
    }
  }

  /** A window that collects peaks from now until it is closed. */
  open(): RssWindow {
    const window = new RssWindow(this);
    this.windows.add(window);
    this.sampleNow();
    return window;
  }

  forget(window: RssWindow): void {
    this.windows.delete(window);
  }
}

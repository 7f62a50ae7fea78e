// A per-key request limit, counted across every API process: a burst per second and a sustained
// rate per minute, each a fixed window shared through MongoDB. No request waits for the database:
// each process counts locally and every `syncIntervalMs` stores its count for each window in a
// document of its own and reads the window's documents of every process (a window with nothing new
// from this process is read once a second). One writer per document: FerretDB 1.x applies an update
// by reading the document and writing it back whole, so processes adding to one shared counter
// ($inc) lost each other's counts there, and racing upserts of it failed as duplicates. So the limit
// holds across processes to within what the others let through since this one last read their
// counts, and a request costs no I/O.
import { randomBytes } from 'node:crypto';
import { RateLimitWindow } from '../data/models/rate-limit-window';
import type { ApiContext } from './state';
import { authOf } from './auth';
import { HttpError } from './errors';

export interface RateLimitSettings {
  /** Sustained requests per second per key, held over a minute (0: no limit). */
  perSecond: number;
  /** Requests per key within any one second. */
  burst: number;
}

/** The shared windows, one document per window and process: store this process's count, sum them all. */
export interface WindowStore {
  /**
   * Stores `count` (when given) as this process's count in the window, and answers the window's total
   * over every process, this one's stored count included.
   */
  report(windowId: string, processId: string, count: number | null, expiresAt: Date): Promise<number>;
  removeEnded(before: Date): Promise<void>;
}

export const mongoWindowStore: WindowStore = {
  async report(windowId, processId, count, expiresAt) {
    if (count !== null) {
      await RateLimitWindow.updateOne(
        { _id: `${windowId}:${processId}` },
        { $set: { window: windowId, count, expiresAt } },
        { upsert: true },
      );
    }
    const counts = await RateLimitWindow.find({ window: windowId }, { count: 1 }).lean();
    return counts.reduce((total, doc) => total + doc.count, 0);
  },
  async removeEnded(before) {
    await RateLimitWindow.deleteMany({ expiresAt: { $lt: before } });
  },
};

const CLEANUP_EVERY_MS = 60_000;
const IDLE_READ_EVERY_MS = 1_000;

interface Window {
  /** Requests this process let through in the window. */
  mine: number;
  /** Of those, how many this process's document holds. */
  stored: number;
  /** What the other processes had counted at the last sync. */
  others: number;
  limit: number;
  endsAt: number;
  /** When the shared total was last read. */
  readAt: number;
}

export type RateVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number; limit: string };

export interface RateLimiter {
  take(keyId: string): RateVerdict;
  /** For an authenticated request: a 429 with Retry-After, in the error shape, once its key has used its share. */
  check(ctx: ApiContext): void;
  /** Stores this process's new counts and learns the others'; run by the timer, and by tests. */
  sync(): Promise<void>;
  stop(): void;
}

export function createRateLimiter(
  settings: RateLimitSettings,
  options: {
    store?: WindowStore;
    /** Names this process's documents (random by default: one per process start). */
    processId?: string;
    syncIntervalMs?: number;
    now?: () => number;
    onSyncError?: (err: unknown) => void;
  } = {},
): RateLimiter {
  const store = options.store ?? mongoWindowStore;
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();
  const spans = [
    { name: 's', ms: 1_000, limit: settings.burst, describe: `${settings.burst} requests per second` },
    {
      name: 'm',
      ms: 60_000,
      limit: Math.round(settings.perSecond * 60),
      describe: `${settings.perSecond} requests per second over a minute`,
    },
  ];

  function windowOf(keyId: string, span: (typeof spans)[number], at: number): [string, Window] {
    const start = Math.floor(at / span.ms) * span.ms;
    const id = `${keyId}:${span.name}:${start}`;
    let window = windows.get(id);
    if (!window) {
      window = { mine: 0, stored: 0, others: 0, limit: span.limit, endsAt: start + span.ms, readAt: 0 };
      windows.set(id, window);
    }
    return [id, window];
  }

  let cleanedAt = now();
  const timer = setInterval(() => {
    limiter.sync().catch((err: unknown) => options.onSyncError?.(err));
    if (now() - cleanedAt >= CLEANUP_EVERY_MS) {
      cleanedAt = now();
      store.removeEnded(new Date(cleanedAt)).catch((err: unknown) => options.onSyncError?.(err));
    }
  }, options.syncIntervalMs ?? 200);
  timer.unref();

  const processId = options.processId ?? randomBytes(6).toString('hex');
  let syncing: Promise<void> | null = null;
  async function syncWindows(): Promise<void> {
    const at = now();
    await Promise.all(
      [...windows].map(async ([id, window]) => {
        if (window.endsAt <= at) {
          windows.delete(id);
          return;
        }
        // Nothing new from here: the others' counts are read again once a second, not at every sync.
        const unchanged = window.mine === window.stored;
        if (unchanged && at - window.readAt < IDLE_READ_EVERY_MS) return;
        const storing = window.mine;
        // Kept a minute past its end: the TTL monitor removes it.
        const total = await store.report(id, processId, unchanged ? null : storing, new Date(window.endsAt + 60_000));
        window.stored = storing;
        window.others = Math.max(0, total - storing);
        window.readAt = at;
      }),
    );
  }

  const limiter: RateLimiter = {
    take(keyId) {
      if (settings.perSecond <= 0) return { allowed: true };
      const at = now();
      const current = spans.map((span) => ({ span, window: windowOf(keyId, span, at)[1] }));
      for (const { span, window } of current) {
        if (window.mine + window.others >= window.limit) {
          return {
            allowed: false,
            retryAfterSeconds: Math.max(1, Math.ceil((window.endsAt - at) / 1000)),
            limit: span.describe,
          };
        }
      }
      for (const { window } of current) window.mine += 1;
      return { allowed: true };
    },

    check(ctx) {
      const verdict = limiter.take(authOf(ctx).keyId);
      if (verdict.allowed) return;
      // The header travels with the error: an answer that ends otherwise (auth.ts) does not carry it.
      throw new HttpError(
        429,
        [`rate limit exceeded: this API key may send ${verdict.limit}; retry after ${verdict.retryAfterSeconds} s`],
        { 'Retry-After': String(verdict.retryAfterSeconds) },
      );
    },

    sync() {
      // One pass at a time: a slow one is not overlapped by the timer's next.
      syncing ??= syncWindows().finally(() => {
        syncing = null;
      });
      return syncing;
    },

    stop() {
      clearInterval(timer);
    },
  };
  return limiter;
}

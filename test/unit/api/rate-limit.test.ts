// The per-key limit's counting: a burst per second, a sustained rate per minute, and counts shared
// between processes through the store (here in memory; the integration test uses MongoDB).
import { afterEach, describe, expect, it } from 'vitest';
import { createRateLimiter, type RateLimiter, type WindowStore } from '../../../src/api/rate-limit';

function memoryStore() {
  /** By window: each process's count, and when the window's documents expire. */
  const windows = new Map<string, { counts: Map<string, number>; expiresAt: Date }>();
  const total = (id: string) => [...(windows.get(id)?.counts.values() ?? [])].reduce((sum, n) => sum + n, 0);
  const store: WindowStore = {
    async report(id, processId, count, expiresAt) {
      const window = windows.get(id) ?? { counts: new Map<string, number>(), expiresAt };
      windows.set(id, window);
      if (count !== null) window.counts.set(processId, count);
      return total(id);
    },
    async removeEnded(before) {
      for (const [id, window] of windows) if (window.expiresAt < before) windows.delete(id);
    },
  };
  return { ...store, windows, total };
}

let clock = 0;
const limiters: RateLimiter[] = [];
const make = (settings: { perSecond: number; burst: number }, store: WindowStore) => {
  const limiter = createRateLimiter(settings, { store, now: () => clock, syncIntervalMs: 60_000 });
  limiters.push(limiter);
  return limiter;
};
afterEach(() => {
  for (const limiter of limiters.splice(0)) limiter.stop();
});

const allowedOf = (limiter: RateLimiter, key: string, n: number) =>
  Array.from({ length: n }, () => limiter.take(key)).filter((v) => v.allowed).length;

describe('the per-key rate limit', () => {
  it('lets a burst through within a second, then refuses until the next second', () => {
    clock = 10_000_250;
    const limiter = make({ perSecond: 100, burst: 5 }, memoryStore());
    expect(allowedOf(limiter, 'k1', 8)).toBe(5);
    expect(limiter.take('k1')).toEqual({
      allowed: false,
      retryAfterSeconds: 1,
      limit: '5 requests per second',
    });
    // Another key has its own share.
    expect(allowedOf(limiter, 'k2', 5)).toBe(5);
    clock += 750;
    expect(allowedOf(limiter, 'k1', 8)).toBe(5);
  });

  it('holds the sustained rate over a minute, naming when to come back', () => {
    clock = 60_000 * 1000 + 10_000; // 10 s into a minute
    const limiter = make({ perSecond: 0.5, burst: 100 }, memoryStore());
    expect(allowedOf(limiter, 'k', 40)).toBe(30);
    expect(limiter.take('k')).toMatchObject({ allowed: false, retryAfterSeconds: 50 });
    clock += 50_000;
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('counts across processes: each learns the others at its sync', async () => {
    clock = 120_000 * 1000 + 1_000;
    const store = memoryStore();
    const first = make({ perSecond: 0.2, burst: 100 }, store); // 12 a minute
    const second = make({ perSecond: 0.2, burst: 100 }, store);
    expect(allowedOf(first, 'k', 10)).toBe(10);
    await first.sync();
    // The second process has not counted anything for the key yet: its first request goes through,
    // and its sync then tells it what the first one let through.
    expect(second.take('k').allowed).toBe(true);
    await second.sync();
    expect(allowedOf(second, 'k', 5)).toBe(1);
    await second.sync();
    // The first has nothing new to send: it reads the others' total again once a second.
    await first.sync();
    expect(first.take('k').allowed).toBe(true);
    clock += 1_000;
    await first.sync();
    expect(first.take('k').allowed).toBe(false);
    await first.sync();
    expect(store.total(`k:m:${120_000 * 1000}`)).toBe(13);
  });

  it('keeps counts that could not be sent, and sends them at the next sync', async () => {
    clock = 180_000 * 1000;
    const store = memoryStore();
    let down = true;
    const flaky: WindowStore = {
      report: (id, processId, count, at) =>
        down ? Promise.reject(new Error('database down')) : store.report(id, processId, count, at),
      removeEnded: (before) => store.removeEnded(before),
    };
    const limiter = make({ perSecond: 10, burst: 100 }, flaky);
    allowedOf(limiter, 'k', 3);
    await expect(limiter.sync()).rejects.toThrow('database down');
    down = false;
    await limiter.sync();
    expect(store.total(`k:s:${180_000 * 1000}`)).toBe(3);
    expect(store.total(`k:m:${180_000 * 1000}`)).toBe(3);
  });

  it('forgets ended windows', async () => {
    clock = 240_000 * 1000;
    const store = memoryStore();
    const limiter = make({ perSecond: 10, burst: 100 }, store);
    limiter.take('k');
    await limiter.sync();
    expect(store.windows.size).toBe(2);
    clock += 2 * 60_000 + 1;
    await store.removeEnded(new Date(clock));
    expect(store.windows.size).toBe(0);
  });
});

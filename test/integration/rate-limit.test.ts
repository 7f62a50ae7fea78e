// The per-key rate limit through the real API: 429 in the error shape with Retry-After once a key has
// used its share, other keys unaffected, and the count shared with a second API process over the
// same database.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey } from '../../src/admin/commands';
import { errorBody } from '../../src/api/errors';
import { createRateLimiter, mongoWindowStore } from '../../src/api/rate-limit';
import { RateLimitWindow } from '../../src/data/models/rate-limit-window';
import { createLogger } from '../../src/logger';
import { createApiApp, listen } from '../../src/main/api';
import { apiClient, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

// 12 requests a minute per key (0.2 per second), bursts far above: the minute window is the one met.
const PER_MINUTE = 12;
let stack: TestStack;
let second: Server;
let secondUrl: string;
beforeAll(async () => {
  stack = await startTestStack({ env: { RATE_LIMIT_PER_SECOND: String(PER_MINUTE / 60), RATE_LIMIT_BURST: '1000' } });
  second = await listen(
    createApiApp({ config: stack.config, logger: createLogger('silent', 'test'), temporal: stack.temporal }),
    0,
    '127.0.0.1',
  );
  secondUrl = `http://127.0.0.1:${(second.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => second?.close(resolve));
  await stack?.stop();
});

/** What every process has stored for the window. */
async function windowTotal(windowId: string): Promise<number> {
  const counts = await RateLimitWindow.find({ window: windowId }).lean();
  return counts.reduce((total, doc) => total + doc.count, 0);
}

it('answers 429 with Retry-After past the key’s share, counted across API processes, other keys unaffected', async () => {
  // Fixed one-minute windows: start with 18 s of one left at least, so that the whole test (3.5 s
  // alone, 2.5 s of it a fixed wait) stays inside it.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 42_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
  const { key, keyId } = await createKey({ team: stack.team.teamId, name: 'limited' });
  const first = apiClient(stack.baseUrl, key);
  // The shared minute window (src/api/rate-limit.ts): each process stores what it let through at its
  // next sync (every 200 ms, later on a loaded machine) and learns the total of every process's.
  const windowId = `${keyId}:m:${Math.floor(Date.now() / 60_000) * 60_000}`;
  const sharedCount = (count: number) =>
    eventually(
      async () => ((await windowTotal(windowId)) >= count ? true : undefined),
      20_000,
      `the shared window to count ${count}`,
    );

  const statuses: number[] = [];
  for (let i = 0; i < PER_MINUTE - 2; i += 1) statuses.push((await first.get('/v1/voices')).status);
  expect(statuses).toEqual(Array(PER_MINUTE - 2).fill(200));
  await sharedCount(PER_MINUTE - 2);

  // The second process learns the first's count when it sends its own first request's.
  const other = apiClient(secondUrl, key);
  expect((await other.get('/v1/voices')).status).toBe(200);
  await sharedCount(PER_MINUTE - 1);
  const fromSecond: number[] = [];
  for (let i = 0; i < 3; i += 1) fromSecond.push((await other.get('/v1/voices')).status);
  expect(fromSecond).toEqual([200, 429, 429]);

  // The first process, with nothing new to send, reads the total again once a second.
  await sharedCount(PER_MINUTE);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const refused = await first.get('/v1/voices');
  expect(refused.status).toBe(429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(refused.body).toEqual(
    errorBody(429, [
      `rate limit exceeded: this API key may send 0.2 requests per second over a minute; retry after ${retryAfter} s`,
    ]),
  );
  // Refused before the body is read or anything is done: not even a bad body gets a 400.
  expect((await first.post('/v1/phoneCalls', { nonsense: true })).status).toBe(429);

  // The team's other key has a share of its own.
  expect((await apiClient(stack.baseUrl, stack.team.key).get('/v1/voices')).status).toBe(200);
});

it('loses no count when processes sync at the same instant (each writes only its own document)', async () => {
  // Four processes' limiters on the real store, letting requests of one key through and syncing at
  // once. One shared counter lost counts here: FerretDB applies an update by reading the document
  // and writing it back whole, and racing upserts of it failed as duplicates.
  const keyId = `concurrent-${Date.now()}`;
  const limiters = Array.from({ length: 4 }, () =>
    createRateLimiter({ perSecond: 1, burst: 1000 }, { store: mongoWindowStore, syncIntervalMs: 60_000 }),
  );
  // Well inside one minute window, as the first test.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
  const windowId = `${keyId}:m:${Math.floor(Date.now() / 60_000) * 60_000}`;
  try {
    // Rounds of one request each and a sync of all at once, as busy processes sync every 200 ms.
    for (let round = 1; round <= 10; round += 1) {
      for (const limiter of limiters) expect(limiter.take(keyId).allowed).toBe(true);
      await Promise.all(limiters.map((limiter) => limiter.sync()));
      expect(await windowTotal(windowId)).toBe(4 * round);
    }
  } finally {
    for (const limiter of limiters) limiter.stop();
  }
});

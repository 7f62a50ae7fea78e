// The per-key rate limit through the real API: 429 in the error shape with Retry-After once a key has
// used its share, other keys unaffected, and the count shared with a second API process over the
// same database.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey } from '../../src/admin/commands';
import { errorBody } from '../../src/api/errors';
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

it('answers 429 with Retry-After past the key’s share, counted across API processes, other keys unaffected', async () => {
  // Fixed one-minute windows: start early in one, so that the whole test stays inside it.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
  const { key, keyId } = await createKey({ team: stack.team.teamId, name: 'limited' });
  const first = apiClient(stack.baseUrl, key);
  // The shared minute window (src/api/rate-limit.ts): each process adds what it let through at its
  // next sync (every 200 ms, later on a loaded machine) and learns the total in the answer.
  const windowId = `${keyId}:m:${Math.floor(Date.now() / 60_000) * 60_000}`;
  const sharedCount = (count: number) =>
    eventually(
      async () => (((await RateLimitWindow.findById(windowId).lean())?.count ?? 0) >= count ? true : undefined),
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

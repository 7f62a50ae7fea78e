// A client that leaves while a streamed answer (a batch's) is being written is not the server's fault:
// logged at info, not as an error.
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Router from '@koa/router';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../../src/api/app';
import type { RequestState } from '../../../src/api/state';
import { streamedDataAnswer } from '../../../src/api/streamed-answer';
import { createLogger } from '../../../src/logger';
import { createApiMetrics } from '../../../src/observability/metrics';

const lines: Array<{ level: number; msg: string }> = [];
const destination = new Writable({
  write(chunk, _encoding, done) {
    lines.push(JSON.parse(String(chunk)));
    done();
  },
});
let server: Server;

beforeAll(async () => {
  const router = new Router<RequestState>();
  router.get('/big', (ctx) => {
    // About 20 MB: far more than the sockets' buffers hold, so the client leaves mid-answer.
    ctx.body = streamedDataAnswer(
      Array.from({ length: 20_000 }, (_, i) => i),
      (i) => ({ i, padding: 'x'.repeat(1_000) }),
    );
    ctx.type = 'application/json';
  });
  const app = createApp({
    logger: createLogger('info', 'api', { destination }),
    metrics: createApiMetrics(),
    bodyLimit: '1mb',
    publicRouters: [router],
    v1Routers: [],
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

it('logs a client gone mid-answer at info, not as an error', async () => {
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/big' }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
  const deadline = Date.now() + 5_000;
  while (!lines.some((line) => line.msg.includes('closed the connection')) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  // Koa may report the one close twice (the pipe's end and the response's): each at info.
  const gone = lines.filter((line) => line.msg.includes('closed the connection'));
  expect(gone.length).toBeGreaterThan(0);
  expect(gone.every((line) => line.level === 30)).toBe(true);
  expect(lines.filter((line) => line.level >= 50)).toEqual([]);
});

// What operators rely on: health and readiness, request ids on log lines, and no key in any log.
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Logger } from '../../src/logger';
import { createApiApp, listen } from '../../src/main/api';
import { connectTemporalClient } from '../../src/temporal/connection';
import { apiClient } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function appWith(logger: Logger, temporal = stack.temporal) {
  const server = await listen(createApiApp({ config: stack.config, logger, temporal }), 0, '127.0.0.1');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

it('answers /healthz always and /readyz 200 with both servers, 503 naming the one that is down', async () => {
  const ready = await fetch(`${stack.baseUrl}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: 'ready', checks: { mongodb: 'ok', temporal: 'ok' } });
  expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200);

  const temporal = await connectTemporalClient({ address: stack.config.TEMPORAL_ADDRESS, namespace: 'default' });
  await temporal.connection.close();
  const { server, url } = await appWith(pino({ level: 'silent' }), temporal);
  try {
    const notReady = await fetch(`${url}/readyz`);
    expect(notReady.status).toBe(503);
    const body = (await notReady.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('unavailable');
    expect(body.checks.mongodb).toBe('ok');
    // The reason (gRPC's message, naming the server's address) is not told to whoever asks.
    expect(body.checks.temporal).toBe('unreachable');
    expect(JSON.stringify(body)).not.toContain(stack.config.TEMPORAL_ADDRESS);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  } finally {
    server.close();
  }
});

it('logs JSON with a request id on every request line and never the API key', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const { server, url } = await appWith(pino({ level: 'info' }, sink));
  try {
    const api = apiClient(url, stack.team.key);
    const created = await api.post('/v1/phoneCalls', {
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: '+14155557701',
      promptVariableValues: [{ key: 'firstName', value: 'Log' }],
      callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await api.get('/v1/phoneCalls/not-an-id');
    await api.get('/v1/phoneCalls', { key: `${stack.team.key}x` });
    await api.get('/v1/voices', { headers: { 'x-request-id': 'trace-me-123' } });
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = records.filter((r) => r.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(4);
    for (const record of requests) expect(record.requestId).toBeTypeOf('string');
    // The access line carries the status the client got, errors included.
    expect(requests.map((r) => r.status)).toEqual(expect.arrayContaining([201, 404, 401, 200]));
    expect(requests.some((r) => r.requestId === 'trace-me-123')).toBe(true);
    // The secret is everything after `oco_<keyId>_` (it may hold `_` itself, even first).
    const secret = /^oco_[0-9a-f]{24}_(.+)$/.exec(stack.team.key)![1]!;
    expect(secret).toHaveLength(43);
    expect(lines.join('\n')).not.toContain(secret);
  } finally {
    server.close();
  }
});

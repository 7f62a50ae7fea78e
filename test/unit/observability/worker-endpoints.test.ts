// The worker's small HTTP server: /healthz and /readyz without the metrics token, /readyz following the
// states of the process's Temporal workers (here a state the test sets; the real worker's are read in
// test/integration/metrics.test.ts and npm-start.test.ts).
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger';
import { startWorkerMetricsServer, workerReadiness } from '../../../src/observability/metrics-endpoint';

describe('workerReadiness', () => {
  it('is ready only while every worker polls', () => {
    expect(workerReadiness({ calls: 'RUNNING', 'calls-webhooks': 'RUNNING' })).toEqual({
      status: 'ready',
      checks: { calls: 'ok', 'calls-webhooks': 'ok' },
    });
    expect(workerReadiness({ calls: 'RUNNING', 'calls-webhooks': 'STOPPING' })).toEqual({
      status: 'unavailable',
      checks: { calls: 'ok', 'calls-webhooks': 'not polling: STOPPING' },
    });
    expect(workerReadiness({})).toEqual({ status: 'unavailable', checks: {} });
  });
});

describe("the worker's endpoints", () => {
  let state = 'INITIALIZED';
  let server: Awaited<ReturnType<typeof startWorkerMetricsServer>>;
  let base: string;
  beforeAll(async () => {
    server = await startWorkerMetricsServer({
      host: '127.0.0.1',
      port: 0,
      token: 'metrics-token-for-the-test-0123456789',
      registry: new Registry(),
      sdkMetricsUrl: null,
      logger: createLogger('silent', 'worker'),
      workerStates: () => ({ calls: state }),
    });
    base = server.url.replace(/\/metrics$/, '');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers /readyz 503 until its worker polls, 200 while it does, 503 from its shutdown on; no token asked', async () => {
    const readiness = async () => {
      const res = await fetch(`${base}/readyz`);
      return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as unknown };
    };
    expect(await readiness()).toEqual({
      status: 503,
      type: 'application/json; charset=utf-8',
      body: { status: 'unavailable', checks: { calls: 'not polling: INITIALIZED' } },
    });
    state = 'RUNNING';
    expect(await readiness()).toMatchObject({ status: 200, body: { status: 'ready', checks: { calls: 'ok' } } });
    state = 'DRAINING';
    expect(await readiness()).toMatchObject({ status: 503, body: { checks: { calls: 'not polling: DRAINING' } } });
  });

  it('answers /healthz 200 whatever the worker does, and keeps /metrics behind the token', async () => {
    state = 'STOPPED';
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).toBe(404);
  });
});

// Readiness as both processes answer it, what the worker's checks say while it starts and stops, and
// the worker's small HTTP server: /healthz and /readyz without the metrics token, /readyz answering
// what its checks say (the worker's real checks, all passing, are read in
// test/integration/metrics.test.ts and npm-start.test.ts).
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger';
import { startWorkerMetricsServer } from '../../../src/observability/metrics-endpoint';
import { checkReadiness, NotReady } from '../../../src/observability/readiness';
import { workerReadinessChecks } from '../../../src/worker/readiness';

const noLog = { warn: () => undefined };

describe('checkReadiness', () => {
  it('is ready only when every check passes; says a dependency is unreachable (its reason only to the log), and what the process does as it is', async () => {
    const logged: unknown[][] = [];
    const log = { warn: (...line: unknown[]) => void logged.push(line) };
    expect(await checkReadiness({ mongodb: async () => undefined, temporal: async () => undefined }, log)).toEqual({
      status: 'ready',
      checks: { mongodb: 'ok', temporal: 'ok' },
    });
    expect(
      await checkReadiness(
        {
          mongodb: async () => {
            throw new Error('MongoDB is not connected');
          },
          'phone-calls': async () => {
            throw new NotReady('not polling: STOPPING');
          },
        },
        log,
      ),
    ).toEqual({
      status: 'unavailable',
      checks: { mongodb: 'unreachable', 'phone-calls': 'not polling: STOPPING' },
    });
    expect(logged).toEqual([[{ check: 'mongodb', reason: 'MongoDB is not connected' }, 'readiness check failed']]);
    expect(await checkReadiness({}, log)).toEqual({ status: 'unavailable', checks: {} });
  });
});

describe('workerReadinessChecks', () => {
  it('says what a starting worker waits for, and which of its workers does not poll', async () => {
    expect(await checkReadiness(workerReadinessChecks({ mongodb: false, client: null, worker: null }), noLog)).toEqual({
      status: 'unavailable',
      checks: {
        mongodb: 'connecting',
        temporal: 'connecting',
        worker: 'starting: connecting, loading its workflow code',
      },
    });
    // Its workers' states as the SDK reports them: one stopping is not ready.
    const worker = {
      run: async () => undefined,
      shutdown: () => undefined,
      states: () => ({ 'phone-calls': 'RUNNING' as const, 'phone-calls-webhooks': 'STOPPING' as const }),
    };
    const { checks } = await checkReadiness(workerReadinessChecks({ mongodb: false, client: null, worker }), noLog);
    expect(checks).toMatchObject({ 'phone-calls': 'ok', 'phone-calls-webhooks': 'not polling: STOPPING' });
    expect(checks).not.toHaveProperty('worker');
  });
});

describe("the worker's endpoints", () => {
  let polling = false;
  let server: Awaited<ReturnType<typeof startWorkerMetricsServer>>;
  let base: string;
  beforeAll(async () => {
    server = await startWorkerMetricsServer({
      host: '127.0.0.1',
      port: 0,
      token: 'metrics-token-for-the-test-0123456789',
      registry: new Registry(),
      sdkMetricsUrl: () => null,
      logger: createLogger('silent', 'worker'),
      readiness: () =>
        checkReadiness(
          {
            calls: async () => {
              if (!polling) throw new NotReady('starting');
            },
          },
          noLog,
        ),
    });
    base = server.url.replace(/\/metrics$/, '');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers /readyz 503 naming what is not ready, 200 once everything is; no token asked', async () => {
    const readiness = async () => {
      const res = await fetch(`${base}/readyz`);
      return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as unknown };
    };
    expect(await readiness()).toEqual({
      status: 503,
      type: 'application/json; charset=utf-8',
      body: { status: 'unavailable', checks: { calls: 'starting' } },
    });
    polling = true;
    expect(await readiness()).toMatchObject({ status: 200, body: { status: 'ready', checks: { calls: 'ok' } } });
  });

  it('answers /healthz 200 whatever the worker does, and keeps /metrics behind the token', async () => {
    polling = false;
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).toBe(404);
  });
});

// Outside /v1 and without a key: liveness and readiness.
import Router from '@koa/router';
import type { z } from 'zod';
import type { healthSchema, readinessSchema } from '../../schemas/responses';
import type { RequestState } from '../state';

export function createHealthRouter(deps: { checks: Record<string, () => Promise<void>> }): Router {
  const router = new Router<RequestState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' } satisfies z.output<typeof healthSchema>;
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(
      Object.entries(deps.checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), 3_000);
          return [name, 'ok'] as const;
        } catch (err) {
          return [name, `unreachable: ${err instanceof Error ? err.message : String(err)}`] as const;
        }
      }),
    );
    const failing = results.filter(([, state]) => state !== 'ok');
    ctx.status = failing.length ? 503 : 200;
    ctx.body = {
      status: failing.length ? 'unavailable' : 'ready',
      checks: Object.fromEntries(results),
    } satisfies z.output<typeof readinessSchema>;
  });
  return router;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

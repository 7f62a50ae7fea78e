// Outside /v1 and without a key: liveness and readiness.
import Router from '@koa/router';
import type { z } from 'zod';
import { checkReadiness, type ReadinessCheck } from '../../observability/readiness';
import type { healthSchema, readinessSchema } from '../../schemas/responses';
import type { RequestState } from '../state';

export function createHealthRouter(deps: { checks: Record<string, ReadinessCheck> }): Router {
  const router = new Router<RequestState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' } satisfies z.output<typeof healthSchema>;
  });
  router.get('/readyz', async (ctx) => {
    const readiness = await checkReadiness(deps.checks, ctx.state.log);
    ctx.status = readiness.status === 'ready' ? 200 : 503;
    ctx.body = readiness satisfies z.output<typeof readinessSchema>;
  });
  return router;
}

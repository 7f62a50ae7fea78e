// Outside /v1 and without an API key: Prometheus scrapes /metrics (with METRICS_BEARER_TOKEN set,
// only with that bearer token).
import Router from '@koa/router';
import { metricsAuthorized } from '../../observability/metrics-endpoint';
import type { ApiMetrics } from '../../observability/metrics';
import { HttpError } from '../errors';
import type { RequestState } from '../state';

export function createMetricsRouter(deps: { metrics: ApiMetrics; token: string | undefined }): Router<RequestState> {
  const router = new Router<RequestState>();
  router.get('/metrics', async (ctx) => {
    if (!metricsAuthorized(ctx.get('authorization') || undefined, deps.token)) {
      throw new HttpError(401, ['/metrics needs the bearer token set in METRICS_BEARER_TOKEN'], {
        'WWW-Authenticate': 'Bearer',
      });
    }
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
  return router;
}

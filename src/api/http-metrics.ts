// Counts and times every request by its route template, so that ids never become label values.
import type { ApiMetrics } from '../observability/metrics';
import type { ApiMiddleware } from './state';

export function httpMetrics(metrics: ApiMetrics): ApiMiddleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // @koa/router names the matched layer's path (with its router's prefix); nothing matched: one label.
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      metrics.request(
        ctx.method,
        typeof route === 'string' ? route : 'unmatched',
        ctx.status,
        (performance.now() - started) / 1000,
      );
    }
  };
}

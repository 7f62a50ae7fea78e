// Answers a method a path does not have, before the router runs: 405 with `Allow` (also for methods
// @koa/router has never heard of, such as TRACE, which its own allowedMethods() answers with 501),
// and 204 with `Allow` for OPTIONS. A path spelled out in a route wins over a pattern, so that
// `DELETE /v1/phoneCalls/batch` is a 405 rather than a lookup of a call with the id "batch".
import type Router from '@koa/router';
import { HttpError } from './errors';
import type { ApiMiddleware, RequestState } from './state';

export function allowedMethods(router: Router<RequestState>): ApiMiddleware {
  return async (ctx, next) => {
    const routes = router.match(ctx.path, ctx.method).path.filter((layer) => layer.methods.length > 0);
    if (routes.length === 0) return next(); // not one of this router's paths
    const literal = routes.filter((layer) => layer.paramNames.length === 0);
    const allowed = [...new Set((literal.length > 0 ? literal : routes).flatMap((layer) => layer.methods))];
    if (allowed.includes(ctx.method)) return next();
    const allow = allowed.join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      ctx.status = 204;
      return;
    }
    throw new HttpError(405, [`${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`], { Allow: allow });
  };
}

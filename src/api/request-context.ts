// Request id and one access log line per request; the id is on every log line of the request.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger';
import type { ApiMiddleware } from './state';

export function requestContext(logger: Logger): ApiMiddleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', requestId);
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    const started = performance.now();
    try {
      await next();
    } finally {
      // The path only: query strings may carry cursors, never keys, but keep lines short.
      ctx.state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, durationMs: Math.round(performance.now() - started) },
        'request',
      );
    }
  };
}

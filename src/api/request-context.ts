// Request id and one access log line per request; the id is on every log line of the request.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger';
import type { ApiMiddleware } from './state';

/**
 * Path segments that are the only credential of what they serve (a recording's token: anyone holding
 * its URL may play it; a voice sample's): the access log names them by the route's parameter. Matched
 * as the router matches, whatever the case and with or without a trailing slash.
 */
const TOKEN_SEGMENTS: ReadonlyArray<[RegExp, string]> = [
  [/^\/recordings\/[^/]+/i, '/recordings/:file'],
  [/^\/voices\/[^/]+(?=\/)/i, '/voices/:token'],
];

/** The path as the access log writes it: a token in it replaced by its parameter's name. */
export function loggedPath(path: string): string {
  for (const [pattern, route] of TOKEN_SEGMENTS) if (pattern.test(path)) return path.replace(pattern, route);
  return path;
}

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
        {
          method: ctx.method,
          path: loggedPath(ctx.path),
          status: ctx.status,
          durationMs: Math.round(performance.now() - started),
        },
        'request',
      );
    }
  };
}

// Request id and one access log line per request; the id is on every log line of the request.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger';
import type { ApiMiddleware } from './state';

/**
 * Paths whose segment is the only credential of what it serves (a recording's token: anyone holding its
 * URL may play it; a voice sample's): the access log names the route, never the token.
 */
const TOKEN_PATHS: ReadonlyArray<[RegExp, string]> = [
  [/^\/recordings\/[^/]*$/, '/recordings/:file'],
  [/^\/voices\/[^/]*\/sample\.wav$/, '/voices/:token/sample.wav'],
];

/** The path as the access log writes it: a token-bearing path by its route alone. */
export function loggedPath(path: string): string {
  for (const [pattern, route] of TOKEN_PATHS) if (pattern.test(path)) return route;
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

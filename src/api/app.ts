// The Koa application: error handler first, request context, then the routers. Dependencies come in
// from the entry point (src/main/api.ts) or a test.
import bodyParser from '@koa/bodyparser';
import type Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from '../logger';
import type { ApiMetrics } from '../observability/metrics';
import { allowedMethods } from './allowed-methods';
import { requireApiKey } from './auth';
import { errorHandler } from './error-handler';
import { HttpError, invalidInput } from './errors';
import { httpMetrics } from './http-metrics';
import type { RateLimiter } from './rate-limit';
import { requestContext } from './request-context';
import type { RequestState } from './state';
import { refusedJsonProblems } from './validation';

export interface AppOptions {
  logger: Logger;
  metrics: ApiMetrics;
  bodyLimit: string;
  /** Routers outside /v1 that need no key (health, media, provider callbacks). */
  publicRouters: Router<RequestState>[];
  /** Routers under /v1; every one of them sits behind the API key. */
  v1Routers: Router<RequestState>[];
  /** The per-key request limit of /v1 (none when left out). */
  rateLimiter?: RateLimiter;
  /**
   * TRUST_PROXY: read the client's address, protocol and host from the X-Forwarded-* headers of the
   * one reverse proxy in front (off when left out: anyone can write those headers).
   */
  trustProxy?: boolean;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

export function createApp(options: AppOptions): Koa {
  // Only ctx.ip reads the proxy headers here (log lines): callback URLs and every address the service
  // hands out are built on PUBLIC_BASE_URL, never on the request's host or protocol. Behind the proxy,
  // the last X-Forwarded-For entry is the one it appended; earlier ones are the client's to write.
  const trustProxy = options.trustProxy === true;
  const app = new Koa({ proxy: trustProxy, maxIpsCount: trustProxy ? 1 : 0 });
  // Outermost, like the access log: every request is counted with the status it finally got.
  app.use(httpMetrics(options.metrics));
  // Request context outside the error handler, so that the access log sees the final status.
  app.use(requestContext(options.logger));
  app.use(errorHandler());
  for (const router of options.publicRouters) app.use(allowedMethods(router)).use(router.routes());

  const parseJson = bodyParser({ enableTypes: ['json'], jsonLimit: options.bodyLimit, encoding: 'utf-8' });
  app.use(async (ctx, next) => {
    // Letter case as the routers match paths (case-insensitively): `/V1/voices` is a /v1 request too.
    const path = ctx.path.toLowerCase();
    if (path !== '/v1' && !path.startsWith('/v1/')) return next();
    // The key first: a request without valid credentials is a 401 whatever else is wrong with it.
    await requireApiKey()(ctx, async () => {
      // Before the body is read: a key over its limit costs no parsing.
      if (options.rateLimiter) options.rateLimiter.check(ctx);
      if (METHODS_WITH_BODY.has(ctx.method) && ctx.request.length !== 0 && ctx.is('application/json') === false) {
        throw new HttpError(415, ['content-type must be application/json']);
      }
      // A body that cannot be read as sent (e.g. a Content-Encoding it does not have) fails before the
      // route runs, with an error that carries no HTTP status: it is the client's, a 400.
      let read = false;
      try {
        await parseJson(ctx, () => {
          read = true;
          return next();
        });
      } catch (err) {
        if (read) throw err;
        const { status, statusCode, body } = err as { status?: number; statusCode?: number; body?: unknown };
        // Refused though it is JSON (`null`, a `__proto__` key): said as what it is, not as malformed.
        const problems = status === 400 && typeof body === 'string' ? refusedJsonProblems(body) : [];
        if (problems.length) throw invalidInput(problems);
        if ((status ?? statusCode) !== undefined) throw err;
        throw new HttpError(400, ['request body could not be read as sent (check its Content-Encoding)']);
      }
    });
  });
  for (const router of options.v1Routers) app.use(allowedMethods(router)).use(router.routes());
  app.on('error', (err: unknown) => {
    // A client gone before it read a streamed answer (a batch's) ends the pipe early: not a fault here.
    if (clientWentAway(err)) options.logger.info({ err }, 'the client closed the connection before the answer ended');
    else options.logger.error({ err }, 'koa error');
  });
  return app;
}

const CLIENT_GONE_CODES = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE']);

function clientWentAway(err: unknown): boolean {
  return CLIENT_GONE_CODES.has((err as { code?: unknown } | null)?.code as string);
}

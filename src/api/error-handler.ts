// Mounted first: every failure leaves in the documented shape; the unexpected is logged and hidden
// behind a generic 500, so no stack trace reaches a client.
import type { Logger } from '../logger';
import { HttpError, sendError } from './errors';
import type { ApiMiddleware } from './state';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

export function errorHandler(): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      // Anything that set an error status without a body of the documented shape gets one.
      if (ctx.status === 404 && ctx.body == null) {
        sendError(ctx, 404, [`no route for ${ctx.method} ${ctx.path}`]);
      } else if (ctx.status === 405 && typeof ctx.body !== 'object') {
        sendError(ctx, 405, [`${ctx.method} is not allowed on ${ctx.path}`]);
      } else if (ctx.status >= 400 && (ctx.body == null || typeof ctx.body === 'string')) {
        sendError(ctx, ctx.status, [
          typeof ctx.body === 'string' && ctx.body ? ctx.body : ctx.message || 'request failed',
        ]);
      }
    } catch (err) {
      const log: Logger | undefined = ctx.state.log;
      if (err instanceof HttpError) {
        for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
        sendError(ctx, err.status, err.messages);
        return;
      }
      const httpLike = err as HttpLikeError;
      const status = httpLike.status ?? httpLike.statusCode;
      if (status && status >= 400 && status < 500) {
        // Errors raised by the body parser and router (malformed JSON, too large, ...).
        const message =
          httpLike.type === 'entity.too.large'
            ? 'request body is too large'
            : httpLike.type === 'entity.parse.failed' || (status === 400 && /json/i.test(httpLike.message ?? ''))
              ? 'request body is not valid JSON'
              : status === 415 && /content-encoding/i.test(httpLike.message ?? '')
                ? unsupportedEncoding(ctx.get('content-encoding'))
                : (httpLike.expose && httpLike.message) || 'invalid request';
        sendError(ctx, status, [message]);
        return;
      }
      log?.error({ err }, 'unhandled error');
      sendError(ctx, 500, ['internal error']);
    }
  };
}

/**
 * The body parser refuses an encoding it cannot undo with a plain Error (not exposed): the answer
 * names the encoding sent (cut short) and those taken.
 */
function unsupportedEncoding(sent: string): string {
  const shown = sent.length > 60 ? `${sent.slice(0, 60)}...` : sent;
  return `content-encoding ${JSON.stringify(shown)} is not supported: send the body as is (identity), or gzip, deflate or br`;
}

// Inbound provider callbacks: /telephony/{provider}/events?callId=..., outside /v1 and without an
// API key. The provider's own signature is the authentication: the call id in the URL only picks
// whose credentials verify it, and nothing changes unless the adapter accepts the signature.
import type { Context } from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import { PROVIDERS, type ProviderEvent, type ProviderName } from '../../contracts/providers';
import { CALLBACK_ROUTE, trimBase } from '../../telephony/callback-url';
import { CALL_ID_PARAM } from '../../telephony/http';
import type { CallbackProvider } from '../../calls/provider-events';
import { SecretBoxError } from '../../crypto/secret-box';
import { CallbackSignatureError } from '../../telephony/provider';
import { ProviderNotConfiguredError } from '../../telephony/team-providers';
import type { RequestState } from '../state';
import { parseQueryOrThrow } from '../validation';

export interface CallbackLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface TelephonyCallbackRouterDeps {
  /** The service's public origin (and path prefix, if any) as providers reach it. */
  publicBaseUrl: string;
  /**
   * The adapter holding the credentials of the team that owns `callId`, and whether it was remembered
   * rather than built from the team's current credentials (`fresh` asks for those); null when there is
   * no such call.
   */
  resolveProvider(
    provider: ProviderName,
    callId: string,
    options?: { fresh?: boolean },
  ): Promise<CallbackProvider | null>;
  onEvents(events: ProviderEvent[]): Promise<void>;
  logger: CallbackLogger;
}

const MAX_BODY_BYTES = 1024 * 1024;
// The call id is loose on purpose: it only has to be safe to log and to look up; the store decides if
// it exists. Other parameters a provider might add are left alone.
const callbackQuerySchema = z.object({
  [CALL_ID_PARAM]: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -'),
});

class BodyTooLargeError extends Error {}

/** The call's team has no credentials that could verify the callback: it is answered as unverifiable (401). */
class UnusableCredentialsError extends Error {}

/**
 * Why a failed lookup of the team's adapter means its stored credentials cannot verify anything, or
 * null for any other failure (a database error stays a 500). Never the text of a JSON parse error:
 * it may quote the opened credentials.
 */
function unusableCredentialsReason(err: unknown): string | null {
  if (err instanceof ProviderNotConfiguredError) return err.message;
  if (err instanceof SecretBoxError) return `the stored credentials could not be opened (${err.message})`;
  if (err instanceof SyntaxError) return 'the stored credentials are not readable';
  return null;
}

async function readRawBody(ctx: Context): Promise<Buffer> {
  // Should a body parser run first after all, it keeps the exact text it consumed.
  const parsed = (ctx.request as { rawBody?: unknown }).rawBody;
  if (typeof parsed === 'string') return Buffer.from(parsed, 'utf8');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError();
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

type CallbackRequest = Parameters<CallbackProvider['adapter']['parseCallback']>[0];

/**
 * The callback's events, as the adapter verifies and parses them. A remembered adapter may hold
 * credentials the team has since rotated: a signature it refuses is checked once more with the team's
 * current ones (`current`).
 */
async function parseVerified(
  resolved: CallbackProvider,
  request: CallbackRequest,
  current: () => Promise<CallbackProvider | null>,
): Promise<ProviderEvent[]> {
  try {
    return await resolved.adapter.parseCallback(request);
  } catch (err) {
    if (!(err instanceof CallbackSignatureError) || !resolved.remembered) throw err;
    const fresh = await current();
    if (!fresh) throw err;
    return await fresh.adapter.parseCallback(request);
  }
}

export function createTelephonyCallbackRouter(deps: TelephonyCallbackRouterDeps): Router {
  const router = new Router<RequestState>();

  router.post(CALLBACK_ROUTE, async (ctx) => {
    // The request's own logger (with its request id) when the app provides one.
    const logger = ctx.state.log ?? deps.logger;
    const provider = ctx.params.provider as ProviderName;
    if (!(PROVIDERS as readonly string[]).includes(provider)) {
      ctx.status = 404;
      return;
    }
    let callId: string;
    try {
      callId = parseQueryOrThrow(callbackQuerySchema, ctx.query)[CALL_ID_PARAM];
    } catch (err) {
      logger.warn({ provider, url: ctx.originalUrl }, 'telephony callback without a usable call id');
      throw err;
    }
    let rawBody: Buffer;
    try {
      rawBody = await readRawBody(ctx);
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      ctx.status = 413;
      return;
    }
    // The team's adapter; credentials removed or unreadable since the call was made verify nothing.
    const resolve = async (options?: { fresh?: boolean }) => {
      try {
        return await deps.resolveProvider(provider, callId, options);
      } catch (err) {
        const reason = unusableCredentialsReason(err);
        if (reason === null) throw err;
        throw new UnusableCredentialsError(reason);
      }
    };
    const unverifiable = (err: UnusableCredentialsError) => {
      logger.warn(
        { provider, callId, reason: err.message, ip: ctx.ip },
        'telephony callback rejected: no usable credentials to verify it',
      );
      ctx.status = 401;
    };
    let resolved: CallbackProvider | null;
    try {
      resolved = await resolve();
    } catch (err) {
      if (!(err instanceof UnusableCredentialsError)) throw err;
      unverifiable(err);
      return;
    }
    if (!resolved) {
      // Answered as a bad signature is: a caller without the provider's key learns nothing of which calls exist.
      logger.warn({ provider, callId }, 'telephony callback for an unknown call');
      ctx.status = 401;
      return;
    }
    const request = {
      method: ctx.method,
      // Exactly the URL the provider called (Twilio signs it), rebuilt on our public base.
      url: trimBase(deps.publicBaseUrl) + ctx.originalUrl,
      headers: ctx.headers,
      rawBody,
    };

    let events: ProviderEvent[];
    try {
      events = await parseVerified(resolved, request, () => resolve({ fresh: true }));
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof UnusableCredentialsError) {
        // A remembered adapter refused the signature and the team's current credentials are gone.
        unverifiable(err);
      } else if (err instanceof CallbackSignatureError) {
        logger.warn({ provider, callId, reason, ip: ctx.ip }, 'telephony callback rejected: bad signature');
        ctx.status = 401;
      } else {
        logger.warn({ provider, callId, reason }, 'telephony callback rejected: malformed');
        ctx.status = 400;
      }
      return;
    }
    // The URL picked the credentials; a signed event naming another call is not to be trusted.
    const foreign = events.find((e) => e.callId !== callId);
    if (foreign) {
      logger.warn({ provider, callId, eventCallId: foreign.callId }, 'telephony callback rejected: call id mismatch');
      ctx.status = 400;
      return;
    }
    if (events.length > 0) {
      await deps.onEvents(events);
      logger.info(
        { provider, callId, kinds: events.map((e) => e.kind), providerStatus: events.map((e) => e.providerStatus) },
        'telephony callback accepted',
      );
    }
    ctx.status = 204;
  });

  return router;
}

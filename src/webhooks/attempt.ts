// One HTTP attempt of one webhook delivery (decisions.md "Webhooks"). The retry schedule lives in
// the delivery workflow; this only makes the request and reports what happened, never throwing for
// anything the receiver or the network did, so every attempt can be recorded.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  BlockedUrlError,
  resolvePublicAddress,
  type HostLookup,
  type ResolvedAddress,
  type VettedUrl,
} from './ssrf-guard';
import { signWebhook } from './signing';

export const DEFAULT_ATTEMPT_TIMEOUT_MS = 15_000;
export const WEBHOOK_USER_AGENT = 'outbound-call-orchestrator-webhooks/1.0';
// Receivers' answers are not used; read a little so a small reply completes cleanly, then hang up.
const MAX_RESPONSE_BYTES = 4 * 1024;
const MAX_STATUS_TEXT = 100;

export interface WebhookEventPayload {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface DeliveryAttemptRequest {
  url: string;
  method: 'GET' | 'POST';
  secret: string;
  /** Unique per event and the same on every retry, so receivers can deduplicate. */
  webhookId: string;
  event: WebhookEventPayload;
  /** GET only: the query parameters to send; defaults to buildGetQuery(event). */
  getQuery?: Record<string, string>;
  /** Deadline for the whole attempt, DNS included. */
  timeoutMs?: number;
  /** ALLOW_PRIVATE_WEBHOOK_URLS. */
  allowPrivate: boolean;
  now?: () => Date;
  /** Replaces the system resolver, for tests. */
  lookup?: HostLookup;
}

export interface AttemptResult {
  /** A 2xx answer arrived within the timeout. */
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** 410 Gone: the receiver asks for no more retries of this delivery. */
  gone: boolean;
  attemptedAt: string;
}

/** The GET form of an event (decisions.md): type, timestamp, phoneCallId, status, in that order. */
export function buildGetQuery(event: WebhookEventPayload): Record<string, string> {
  const { data } = event;
  // A call's own id is `_id`; a transcript points at its call with `phoneCallId`.
  const phoneCallId = typeof data.phoneCallId === 'string' ? data.phoneCallId : data._id;
  const query: Record<string, string> = { type: event.type, timestamp: event.timestamp };
  if (typeof phoneCallId === 'string') query.phoneCallId = phoneCallId;
  if (typeof data.status === 'string') query.status = data.status;
  return query;
}

export async function attemptDelivery(input: DeliveryAttemptRequest): Promise<AttemptResult> {
  const now = input.now ?? (() => new Date());
  const attemptedAt = now();
  const started = performance.now();
  const timeoutMs = input.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const finish = (outcome: { statusCode: number | null; error: string | null }): AttemptResult => {
    const { statusCode } = outcome;
    return {
      ok: statusCode !== null && statusCode >= 200 && statusCode < 300,
      statusCode,
      durationMs: Math.round(performance.now() - started),
      error: outcome.error,
      gone: statusCode === 410,
      attemptedAt: attemptedAt.toISOString(),
    };
  };

  let vetted: VettedUrl;
  try {
    vetted = await withDeadline(
      resolvePublicAddress(input.url, { allowPrivate: input.allowPrivate, lookup: input.lookup }),
      timeoutMs,
    );
  } catch (err) {
    // Refused: the guard would not connect there. A name that did not resolve (a name server down,
    // a name not yet registered) is a failure to retry like any other, not a refusal.
    const prefix = err instanceof BlockedUrlError && err.reason !== 'unresolvable' ? 'refused: ' : '';
    return finish({ statusCode: null, error: prefix + describe(err) });
  }

  let prepared: PreparedRequest;
  try {
    prepared = prepareRequest(input, vetted.url, now());
  } catch (err) {
    // Only a bad secret lands here; the API validates secrets, so this is a data problem to record.
    return finish({ statusCode: null, error: describe(err) });
  }

  const remainingMs = Math.max(0, timeoutMs - (performance.now() - started));
  try {
    const answer = await send(vetted, prepared, remainingMs, timeoutMs);
    const error =
      answer.statusCode >= 200 && answer.statusCode < 300
        ? null
        : `receiver answered ${answer.statusCode}${answer.statusText ? ` ${answer.statusText}` : ''}`;
    return finish({ statusCode: answer.statusCode, error });
  } catch (err) {
    return finish({ statusCode: null, error: describe(err) });
  }
}

interface PreparedRequest {
  method: 'GET' | 'POST';
  /** Path and query exactly as they go on the request line. */
  path: string;
  headers: Record<string, string>;
  body: string | null;
}

/** A query part's name as a receiver reads it (`+` a space, percent escapes decoded where valid). */
function decodeQueryName(part: string): string {
  const name = part.split('=')[0]!.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function prepareRequest(input: DeliveryAttemptRequest, url: URL, signedAt: Date): PreparedRequest {
  const target = new URL(url.href);
  target.hash = '';
  let content: string;
  let body: string | null = null;
  if (input.method === 'POST') {
    const { type, timestamp, data } = input.event;
    body = JSON.stringify({ type, timestamp, data });
    content = body;
  } else {
    // Whatever query the registered URL already had is sent as registered (searchParams would write it
    // again: `a%20b` as `a+b`), so it is signed as well; a parameter of its own named as one of the
    // event's gives way to the event's.
    const event = new URLSearchParams(input.getQuery ?? buildGetQuery(input.event));
    const own = target.search
      .replace(/^\?/, '')
      .split('&')
      .filter((part) => part !== '' && !event.has(decodeQueryName(part)));
    content = [...own, event.toString()].join('&');
    target.search = `?${content}`;
  }

  const timestamp = Math.floor(signedAt.getTime() / 1000);
  const headers: Record<string, string> = {
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': input.webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook({ secret: input.secret, id: input.webhookId, timestamp, content }),
  };
  if (body !== null) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return { method: input.method, path: target.pathname + target.search, headers, body };
}

class AttemptTimeoutError extends Error {
  constructor(ms: number) {
    super(`no response within ${ms} ms`);
  }
}

/** `timeoutMs` is what is left of the attempt's `attemptTimeoutMs`, which the timeout error names. */
function send(
  vetted: VettedUrl,
  prepared: PreparedRequest,
  timeoutMs: number,
  attemptTimeoutMs: number,
): Promise<{ statusCode: number; statusText: string }> {
  const { url } = vetted;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let statusCode: number | null = null;
    let statusText = '';
    let settled = false;
    // Set once the request exists; settle() may run before that, so it cannot be a const.
    // eslint-disable-next-line prefer-const
    let timer: NodeJS.Timeout | undefined;
    // Once a status line is in, it is the verdict: a slow or broken body afterwards does not change it.
    const settle = (err: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (statusCode !== null) resolve({ statusCode, statusText });
      else reject(err);
    };

    const request = transport.request({
      method: prepared.method,
      hostname: vetted.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: prepared.path,
      headers: prepared.headers,
      auth: url.username === '' ? undefined : `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
      // Connect only to the addresses the guard vetted (DNS rebinding), and never reuse a socket.
      lookup: pinnedLookup(vetted.addresses),
      agent: false,
    });
    timer = setTimeout(() => {
      const err = new AttemptTimeoutError(Math.round(attemptTimeoutMs));
      settle(err);
      request.destroy(err);
    }, timeoutMs);

    request.on('error', settle);
    request.on('response', (response) => {
      statusCode = response.statusCode ?? 0;
      statusText = (response.statusMessage ?? '').slice(0, MAX_STATUS_TEXT);
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) response.destroy();
      });
      response.on('error', settle);
      response.on('end', settle);
      response.on('close', settle);
    });
    request.end(prepared.body ?? undefined);
  });
}

function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : [...addresses];
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`no vetted IPv${family} address`);
      err.code = 'ENOTFOUND';
      callback(err, '');
      return;
    }
    // Node's happy-eyeballs connect asks for every address at once; a plain connect wants one.
    if (options.all) callback(null, usable);
    else callback(null, usable[0].address, usable[0].family);
  };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AttemptTimeoutError(ms)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function describe(err: unknown): string {
  // Trying several addresses fails with an AggregateError whose own message is empty.
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.map(describe).join('; ');
  }
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = err.message || err.name;
    return code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
  }
  return String(err);
}

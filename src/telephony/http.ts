// The one HTTP client the adapters share: a timeout on every request, network failures and 5xx as
// plain (retryable) errors, and the dial refusal rule in one function.
import type { ProviderName } from '../contracts/providers';
import { ProviderRateLimitedError, ProviderRejectedError } from './provider';

/** How long one provider request may take: a dial places its call only with this much of its try left. */
export const REQUEST_TIMEOUT_MS = 15_000;
const MAX_DETAIL_CHARS = 300;
/** A 429 that does not say how long to wait. */
const DEFAULT_RETRY_AFTER_MS = 1_000;
/** A wait longer than this is read as a mistake (or a date far off) and capped. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** The query parameter that carries our call id on every status-callback URL. */
export const CALL_ID_PARAM = 'callId';

export interface ProviderResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** A provider answered with an unexpected status; the caller may retry (it is not a refusal). */
export class ProviderHttpError extends Error {
  override readonly name = 'ProviderHttpError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export async function send(provider: ProviderName, url: string, init: RequestInit): Promise<ProviderResponse> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`${provider} request ${init.method ?? 'GET'} ${new URL(url).pathname} failed: ${reason}`, {
      cause: err,
    });
  }
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

export function isSuccess(res: ProviderResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/** The response text, shortened for an error message. */
export function detailOf(res: ProviderResponse): string {
  const text = res.body.toString('utf8').trim();
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text;
}

export function parseJson<T>(provider: ProviderName, res: ProviderResponse): T {
  try {
    return JSON.parse(res.body.toString('utf8')) as T;
  } catch {
    throw new Error(`${provider} answered ${res.status} with a body that is not JSON: ${detailOf(res)}`);
  }
}

export function unexpected(provider: ProviderName, what: string, res: ProviderResponse): ProviderHttpError {
  return new ProviderHttpError(`${provider} ${what} answered ${res.status}: ${detailOf(res)}`, res.status);
}

/**
 * Why a dial was not accepted. 400/422 is the provider refusing this request for good: an
 * invalid destination when the provider says the problem is the `to` number, otherwise our own
 * setup (e.g. a caller ID the account does not own). 401/403/404 are wrong credentials or
 * account ids, which a retry cannot fix either. 429 is the account's dial rate: dial again after
 * the wait the provider gives. Anything else (408, 5xx) may pass: retry.
 */
export function dialFailure(provider: ProviderName, res: ProviderResponse, destinationProblem: boolean): Error {
  const detail = `${provider} refused the call (${res.status}): ${detailOf(res)}`;
  if (res.status === 400 || res.status === 422) {
    return new ProviderRejectedError(detail, destinationProblem ? 'invalid-number' : 'provider-error');
  }
  if (res.status === 401 || res.status === 403 || res.status === 404) {
    return new ProviderRejectedError(detail, 'provider-error');
  }
  if (res.status === 429) return new ProviderRateLimitedError(detail, retryAfterMs(res.headers));
  return unexpected(provider, 'dial', res);
}

/**
 * How long a 429 asks us to wait: `Retry-After` (seconds or an HTTP date; Twilio, Vonage) or
 * Telnyx's `x-ratelimit-reset` (seconds until its window resets).
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number {
  const parse = (value: string | null): number | undefined => {
    if (!value) return undefined;
    const trimmed = value.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
    const date = Date.parse(trimmed);
    return Number.isNaN(date) ? undefined : date - now;
  };
  const wait = parse(headers.get('retry-after')) ?? parse(headers.get('x-ratelimit-reset'));
  if (wait === undefined) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(wait, 0), MAX_RETRY_AFTER_MS);
}

export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The status callback URL with our call id in its query string (kept if the caller put it there). */
export function withCallId(url: string, callId: string): string {
  const parsed = new URL(url);
  if (parsed.searchParams.get(CALL_ID_PARAM) === callId) return url;
  parsed.searchParams.set(CALL_ID_PARAM, callId);
  return parsed.toString();
}

/** Our call id from a callback or status-callback URL, if it carries one. */
export function callIdFromUrl(url: string): string | undefined {
  try {
    return new URL(url).searchParams.get(CALL_ID_PARAM) ?? undefined;
  } catch {
    return undefined;
  }
}

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

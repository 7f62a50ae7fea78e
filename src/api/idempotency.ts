// `Idempotency-Key` (decisions.md): a retry with the same key and body within 24 h gets the first
// answer and creates nothing; the same key with another body is a 400. One conditional insert per
// key claims it, so two concurrent requests with one key cannot both create (no transactions).
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyRecord } from '../data/models/idempotency-record';
import { badRequest, HttpError } from './errors';
import { isDuplicateKeyOnly } from '../data/duplicate-key';

export interface StoredResponse {
  status: number;
  body: unknown;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** How long a retry waits for the first request with its key to finish before it is told to come back. */
const IN_FLIGHT_WAIT_MS = 10_000;
/** A key still `pending` after this long belongs to a request whose process died: it may be retried. */
const ABANDONED_AFTER_MS = 5 * 60 * 1000;

type Identity = { teamId: string; scope: string; key: string };

/** Claims the key for this request, or finds the first request's answer to replay. */
async function claimKey(
  identity: Identity,
  requestHash: string,
  now: Date,
): Promise<{ kind: 'claimed' } | { kind: 'replay'; response: StoredResponse }> {
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    try {
      await IdempotencyRecord.create({ ...identity, requestHash, state: 'pending', createdAt: now });
      return { kind: 'claimed' };
    } catch (err) {
      if (!isDuplicateKeyOnly(err)) throw err;
    }
    const existing = await IdempotencyRecord.findOne(identity).lean();
    if (!existing) continue; // the first request failed and freed the key: try again
    const expired = existing.createdAt.getTime() < now.getTime() - IDEMPOTENCY_WINDOW_MS;
    const abandoned = existing.state === 'pending' && existing.createdAt.getTime() < now.getTime() - ABANDONED_AFTER_MS;
    if (expired || abandoned) {
      // Take over an expired or abandoned key with a conditional update, so only one request wins it.
      const claimed = await IdempotencyRecord.findOneAndUpdate(
        { ...identity, createdAt: existing.createdAt },
        { $set: { requestHash, state: 'pending', createdAt: now }, $unset: { responseStatus: 1, responseBody: 1 } },
      );
      if (claimed) return { kind: 'claimed' };
      continue;
    }
    if (existing.requestHash !== requestHash)
      throw badRequest('Idempotency-Key was already used with a different request body');
    if (existing.state === 'done')
      return { kind: 'replay', response: { status: existing.responseStatus ?? 200, body: existing.responseBody } };
    if (Date.now() > deadline) {
      throw new HttpError(429, ['a request with this Idempotency-Key is still being processed; retry shortly'], {
        'Retry-After': '2',
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function withIdempotency(
  ctx: Context,
  options: { teamId: string; scope: string; body: unknown },
  handler: () => Promise<StoredResponse>,
): Promise<void> {
  const key = ctx.get('idempotency-key');
  const respond = (response: StoredResponse) => {
    ctx.status = response.status;
    ctx.body = response.body;
  };
  // A header sent empty is a mistake, not "no key": the retry it was meant to make safe would not be.
  const sent = ctx.headers['idempotency-key'] !== undefined;
  if (!sent) return respond(await handler());
  if (key.length < 1 || key.length > 255) throw badRequest('Idempotency-Key must be 1 to 255 characters');

  const requestHash = createHash('sha256').update(canonical(options.body)).digest('hex');
  const identity = { teamId: options.teamId, scope: options.scope, key };
  const now = new Date();
  const claim = await claimKey(identity, requestHash, now);
  if (claim.kind === 'replay') {
    ctx.set('Idempotent-Replayed', 'true');
    return respond(claim.response);
  }

  let response: StoredResponse;
  try {
    response = await handler();
  } catch (err) {
    // Nothing was created: free the key so that the client may retry it.
    await IdempotencyRecord.deleteOne({ ...identity, createdAt: now });
    throw err;
  }
  await IdempotencyRecord.updateOne(
    { ...identity, createdAt: now },
    { $set: { state: 'done', responseStatus: response.status, responseBody: response.body } },
  );
  respond(response);
}

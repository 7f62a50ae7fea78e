// `Idempotency-Key` (decisions.md): a retry with the same key and body within 24 h gets the first
// answer and creates nothing; the same key with another body is a 400. One conditional insert per
// key claims it, so two concurrent requests with one key cannot both create (no transactions).
// The claim holds a lease the request extends while it works and names the dispatch batch it
// writes its calls under: should its process die, a retry takes the key over once the lease has run
// out (of retries arriving together, the one that inserts the takeover claim) and finishes or
// discards that batch (the route decides), so the client still gets one batch.
// A batch is kept only while such a retry may ask for it: a request without a key has no retry to
// serve, and one with a key stops needing it once its answer is stored (`forgetBatch`).
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Types } from 'mongoose';
import { batchRecordState } from '../calls/dispatch';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyRecord, IdempotencyTakeover } from '../data/models/idempotency-record';
import { badRequest, HttpError } from './errors';
import { isDuplicateKeyOnly } from '../data/duplicate-key';
import type { ApiContext } from './state';

export interface StoredResponse {
  status: number;
  body: unknown;
  /**
   * The batch whose calls the answer names, when not the request's own: an abandoned request's that
   * it took over (not stored; the key's record names it should the answer not be stored).
   */
  batchId?: Types.ObjectId;
}

/**
 * A create failed and could not clean up after itself: whether its calls were written is unknown. The
 * key is not freed (a retry would write them again): it stays pending, and once its lease runs out a
 * retry takes the batch over, answering with its calls when all were written, else discarding them.
 */
export class CreateOutcomeUnknown extends Error {
  constructor(
    readonly failure: unknown,
    cleanupFailure: unknown,
  ) {
    super(`create failed (${String(failure)}) and its cleanup too: ${String(cleanupFailure)}`, { cause: failure });
  }
}

/**
 * The body as JSON with every object's keys sorted. Written without recursion: a body refused later
 * (a key nested 100,000 deep parses, and is hashed first when it carries an Idempotency-Key, to look
 * for a stored answer) overflowed the stack, and was answered 500 instead of its 400.
 */
function canonical(root: unknown): string {
  const out: string[] = [];
  // What is left to write, last first: text as it is, or a value to write.
  const work: Array<{ text: string } | { value: unknown }> = [{ value: root }];
  for (let item = work.pop(); item; item = work.pop()) {
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const { value } = item;
    let pieces: Array<{ text: string } | { value: unknown }>;
    if (Array.isArray(value)) {
      pieces = value.flatMap((v, i) => (i ? [{ text: ',' }, { value: v }] : [{ value: v }]));
      pieces = [{ text: '[' }, ...pieces, { text: ']' }];
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
      pieces = entries.flatMap(([k, v], i) => [{ text: `${i ? ',' : ''}${JSON.stringify(k)}:` }, { value: v }]);
      pieces = [{ text: '{' }, ...pieces, { text: '}' }];
    } else {
      out.push(JSON.stringify(value) ?? 'null');
      continue;
    }
    for (let i = pieces.length - 1; i >= 0; i -= 1) work.push(pieces[i]!);
  }
  return out.join('');
}

/** What a key's record keeps of its request's body: a retry must send the same. */
export function requestHashOf(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

/** How long a retry waits for the first request with its key to finish before it is told to come back. */
const IN_FLIGHT_WAIT_MS = 10_000;
/** How long a claim holds without being extended, and how often the request holding it extends it. */
const LEASE_MS = 15_000;
const LEASE_RENEW_MS = 5_000;
/** A `pending` key from before leases is abandoned after this long. */
const UNLEASED_ABANDONED_AFTER_MS = 5 * 60 * 1000;

type Identity = { teamId: string; scope: string; key: string };

/** What a create request writes its calls under, and what a request that died before it left. */
export interface CreateWork {
  /** The dispatch batch to open for this request's calls. */
  batchId: Types.ObjectId;
  /** The batch of the request whose abandoned key this one took over: to finish or discard first. */
  abandonedBatchId: Types.ObjectId | null;
  /**
   * Whether a retry under this request's Idempotency-Key may take its batch over should the process
   * die before the answer is stored: then the batch is kept once its calls started, else removed.
   */
  retryMayTakeOver: boolean;
  /**
   * Whether the answer is stored for the key's retries (a key was sent): its body must then be a value
   * to store. Without a key it may be a stream of JSON text (streamed-answer.ts).
   */
  answerStored: boolean;
  /**
   * Names this request's own batch on the key. A takeover's key names the abandoned batch until then
   * (should this request die too, the next retry takes that batch over): the route calls it once the
   * abandoned batch is discarded, before it writes a batch of its own.
   */
  nameOwnBatch(): Promise<void>;
  /**
   * Whether this request still holds its key (always, without one), its lease extended if so. Asked
   * once its calls are written, before their workflows start: a request stalled past its lease (the
   * store stuck for 15 s) may have been taken over by a retry, and starting these calls too could ring
   * people twice. Taken over, it waits for the retry to settle this request's batch (up to
   * TAKEOVER_SETTLE_WAIT_MS): the retry starts it whole, or discards it and names its own. A discard
   * may have come before this request's last insert landed, so a batch discarded is `replaced` even
   * while the key still names it: the calls left are this request's to remove, or they would stay
   * queued with no batch and no workflow.
   */
  stillHolds(): Promise<KeyHold>;
}

/**
 * `held`; or taken over by a retry, which has this request's batch (`adopted`), discarded it (`replaced`),
 * or was still settling it when the wait ended (`unsettled`: the batch is pending, so the reconciler
 * or a later retry settles it).
 */
export type KeyHold = 'held' | 'adopted' | 'replaced' | 'unsettled';

/** How long a request taken over waits for the retry to settle its batch, and how often it looks. */
const TAKEOVER_SETTLE_WAIT_MS = 15_000;
const TAKEOVER_SETTLE_POLL_MS = 200;

type Claim =
  { kind: 'claimed'; abandonedBatchId: Types.ObjectId | null } | { kind: 'replay'; response: StoredResponse };

function isAbandoned(record: { state: string; leaseUntil?: Date | null; createdAt: Date }, now: Date): boolean {
  if (record.state !== 'pending') return false;
  const until = record.leaseUntil?.getTime() ?? record.createdAt.getTime() + UNLEASED_ABANDONED_AFTER_MS;
  return until < now.getTime();
}

/** Claims the key for this request, or finds the first request's answer to replay. */
async function claimKey(identity: Identity, requestHash: string, now: Date, batchId: Types.ObjectId): Promise<Claim> {
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  const leaseUntil = () => new Date(Date.now() + LEASE_MS);
  for (;;) {
    try {
      await IdempotencyRecord.create({
        ...identity,
        requestHash,
        state: 'pending',
        createdAt: now,
        leaseUntil: leaseUntil(),
        dispatchBatchId: batchId,
      });
      return { kind: 'claimed', abandonedBatchId: null };
    } catch (err) {
      if (!isDuplicateKeyOnly(err)) throw err;
    }
    const existing = await IdempotencyRecord.findOne(identity).lean();
    if (!existing) continue; // the first request failed and freed the key: try again
    const expired = existing.createdAt.getTime() < now.getTime() - IDEMPOTENCY_WINDOW_MS;
    const abandoned = isAbandoned(existing, new Date());
    // Past its 24 hours a key is free for any body, also one whose request died (FerretDB keeps such a
    // record for ever: it has no TTL indexes, so the key would otherwise be refused for good).
    if (abandoned && !expired && existing.requestHash !== requestHash)
      throw badRequest('Idempotency-Key was already used with a different request body');
    if (expired || abandoned) {
      // Take over an expired or abandoned key: the one retry that inserts the takeover claim rewrites
      // the record (conditionally, should the request it replaces have finished meanwhile); the
      // others see the new claim at their next look.
      const takeoverId = `${identity.teamId}:${identity.scope}:${identity.key}:${existing.createdAt.getTime()}`;
      try {
        await IdempotencyTakeover.create({ _id: takeoverId, createdAt: new Date() });
      } catch (err) {
        if (!isDuplicateKeyOnly(err)) throw err;
        // Another retry is rewriting the record, or died before it could: its claim, held for one
        // write, is stale after a lease and goes (conditionally: a claim made anew since stays), so
        // the key is not wedged where claims never expire (FerretDB 1.x has no TTL indexes).
        await IdempotencyTakeover.deleteOne({ _id: takeoverId, createdAt: { $lt: new Date(Date.now() - LEASE_MS) } });
        throwIfPast(deadline);
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      // An abandoned request's batch stays named until this request has dealt with it (nameOwnBatch).
      const abandonedBatchId = abandoned && !expired ? (existing.dispatchBatchId ?? null) : null;
      const claimed = await IdempotencyRecord.findOneAndUpdate(
        { ...identity, createdAt: existing.createdAt, state: existing.state },
        {
          $set: {
            requestHash,
            state: 'pending',
            createdAt: now,
            leaseUntil: leaseUntil(),
            dispatchBatchId: abandonedBatchId ?? batchId,
          },
          $unset: { responseStatus: 1, responseBody: 1 },
        },
      ).finally(() => IdempotencyTakeover.deleteOne({ _id: takeoverId }).catch(() => undefined));
      // An expired key's request is a day old: the reconciler finished or discarded its batch long
      // ago, and the sweep of started batches may have removed it since (dispatch.ts).
      if (claimed) return { kind: 'claimed', abandonedBatchId };
      continue;
    }
    if (existing.requestHash !== requestHash)
      throw badRequest('Idempotency-Key was already used with a different request body');
    if (existing.state === 'done')
      return { kind: 'replay', response: { status: existing.responseStatus ?? 200, body: existing.responseBody } };
    throwIfPast(deadline);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * What the retry that took the key over did with `batchId`, the batch of the request it took over,
 * once it shows (key and batch read afresh until then): answered with it, or started it (`adopted`);
 * named a batch of its own, or discarded this one (`replaced`).
 */
async function takeoverOutcome(identity: Identity, batchId: Types.ObjectId): Promise<KeyHold> {
  const deadline = Date.now() + TAKEOVER_SETTLE_WAIT_MS;
  for (;;) {
    // The batch before the key: a retry that answered with the batch stores its answer (`done`) and
    // only then removes the batch, so a batch found gone and then a key not yet `done` was discarded.
    const batch = await batchRecordState(batchId);
    const taken = await IdempotencyRecord.findOne(identity, { dispatchBatchId: 1, state: 1 }).lean();
    if (!taken?.dispatchBatchId?.equals(batchId)) return 'replaced';
    if (taken.state === 'done') return 'adopted';
    if (batch === 'started') return 'adopted';
    if (batch === 'gone') return 'replaced';
    if (Date.now() >= deadline) return 'unsettled';
    await new Promise((resolve) => setTimeout(resolve, TAKEOVER_SETTLE_POLL_MS));
  }
}

/** A retry that has waited its while for the key's first request gets 429, to come back shortly. */
function throwIfPast(deadline: number): void {
  if (Date.now() <= deadline) return;
  throw new HttpError(429, ['a request with this Idempotency-Key is still being processed; retry shortly'], {
    'Retry-After': '2',
  });
}

/**
 * Answers with the stored answer of a finished request under this Idempotency-Key and body, if there is
 * one (true), for a request about to be refused by checks that run before the key is looked at: one
 * of them depends on DNS (a webhook host's addresses, which may have come to be private), and a retry
 * of a request that succeeded must get its answer, not a 400 its first try never got.
 */
export async function replayStoredAnswer(
  ctx: ApiContext,
  options: { teamId: string; scope: string; body: unknown },
): Promise<boolean> {
  const key = ctx.get('idempotency-key');
  if (ctx.headers['idempotency-key'] === undefined || key.length < 1 || key.length > 255) return false;
  const stored = await IdempotencyRecord.findOne({
    teamId: options.teamId,
    scope: options.scope,
    key,
    state: 'done',
    requestHash: requestHashOf(options.body),
  }).lean();
  if (!stored || stored.createdAt.getTime() < Date.now() - IDEMPOTENCY_WINDOW_MS) return false;
  ctx.set('Idempotent-Replayed', 'true');
  ctx.status = stored.responseStatus ?? 200;
  ctx.body = stored.responseBody;
  return true;
}

export async function withIdempotency(
  ctx: ApiContext,
  options: {
    teamId: string;
    scope: string;
    body: unknown;
    /** Removes the request's dispatch batch, if started, once its answer is stored: no retry asks for it again. */
    forgetBatch: (batchId: Types.ObjectId) => Promise<void>;
    /** How often the lease is extended (LEASE_RENEW_MS; tests race renewals against the answer). */
    leaseRenewMs?: number;
  },
  handler: (work: CreateWork) => Promise<StoredResponse>,
): Promise<void> {
  const batchId = new Types.ObjectId();
  const key = ctx.get('idempotency-key');
  const respond = (response: StoredResponse) => {
    ctx.status = response.status;
    ctx.body = response.body;
    // Koa would call a stream binary.
    if (response.body instanceof Readable) ctx.type = 'application/json';
  };
  // A header sent empty is a mistake, not "no key": the retry it was meant to make safe would not be.
  const sent = ctx.headers['idempotency-key'] !== undefined;
  if (!sent) {
    const work = {
      batchId,
      abandonedBatchId: null,
      retryMayTakeOver: false,
      answerStored: false,
      nameOwnBatch: async () => undefined,
      stillHolds: async (): Promise<KeyHold> => 'held',
    };
    try {
      return respond(await handler(work));
    } catch (err) {
      if (!(err instanceof CreateOutcomeUnknown)) throw err;
      // No key for a retry to settle it by: the reconciler starts the batch if every call was written.
      ctx.state.log.error({ err }, 'create failed, its outcome unknown');
      throw err.failure;
    }
  }
  if (key.length < 1 || key.length > 255) throw badRequest('Idempotency-Key must be 1 to 255 characters');

  const requestHash = requestHashOf(options.body);
  const identity = { teamId: options.teamId, scope: options.scope, key };
  const now = new Date();
  const claim = await claimKey(identity, requestHash, now, batchId);
  if (claim.kind === 'replay') {
    ctx.set('Idempotent-Replayed', 'true');
    return respond(claim.response);
  }

  let response: StoredResponse;
  // One renewal at a time (a tick that finds one under way is skipped), and the answer is written
  // after it: on FerretDB 1.x a renewal still under way (a read, then a write of the whole record)
  // would put the record back to `pending` without its answer, and a retry would later take the
  // finished request's batch over.
  let renewing: Promise<void> | null = null;
  const renewal = setInterval(() => {
    renewing ??= IdempotencyRecord.updateOne(
      { ...identity, createdAt: now, state: 'pending' },
      { $set: { leaseUntil: new Date(Date.now() + LEASE_MS) } },
    )
      .then(() => undefined)
      .catch(() => undefined) // a missed renewal only shortens the lease
      .finally(() => {
        renewing = null;
      });
  }, options.leaseRenewMs ?? LEASE_RENEW_MS);
  /**
   * Whether the key names this request's own batch. Until it does, a takeover is settling the batch it
   * took over, which may be live (started, or soon by the reconciler): a failure then does not free
   * the key, or the client's next retry would write and start a second batch beside it.
   */
  let ownBatchNamed = !claim.abandonedBatchId;
  try {
    const nameOwnBatch = async () => {
      if (!claim.abandonedBatchId) return;
      // Between renewals, as the answer is written (a renewal under way on FerretDB 1.x would put the
      // old batch back): held as the renewal under way, so that no tick starts one meanwhile.
      while (renewing) await renewing;
      const naming = IdempotencyRecord.updateOne(
        { ...identity, createdAt: now, state: 'pending' },
        { $set: { dispatchBatchId: batchId } },
      ).then(() => undefined);
      // Held without its failure: the handler hears of that (the key then stays naming the batch taken
      // over, for a later retry: ownBatchNamed).
      renewing = naming
        .catch(() => undefined)
        .finally(() => {
          renewing = null;
        });
      await naming;
      ownBatchNamed = true;
    };
    const stillHolds = async (): Promise<KeyHold> => {
      // Between renewals, as nameOwnBatch: the check is a renewal that says whether it matched.
      while (renewing) await renewing;
      const check = IdempotencyRecord.updateOne(
        { ...identity, createdAt: now, state: 'pending' },
        { $set: { leaseUntil: new Date(Date.now() + LEASE_MS) } },
      ).then((result) => result.matchedCount === 1);
      renewing = check
        .then(() => undefined)
        .catch(() => undefined)
        .finally(() => {
          renewing = null;
        });
      if (await check) return 'held';
      return takeoverOutcome(identity, batchId);
    };
    response = await handler({
      batchId,
      abandonedBatchId: claim.abandonedBatchId,
      retryMayTakeOver: true,
      answerStored: true,
      nameOwnBatch,
      stillHolds,
    });
  } catch (err) {
    clearInterval(renewal);
    await renewing;
    if (err instanceof CreateOutcomeUnknown) {
      ctx.state.log.error({ err }, 'create failed, its outcome unknown: the key is left to a retry to take over');
      throw err.failure;
    }
    if (!ownBatchNamed) {
      ctx.state.log.error(
        { err, batchId: claim.abandonedBatchId?.toHexString() },
        'settling the batch of an abandoned request, or naming its own, failed: the key is left to a later retry',
      );
      throw err;
    }
    // Nothing was created: free the key so that the client may retry it.
    await IdempotencyRecord.deleteOne({ ...identity, createdAt: now });
    throw err;
  }
  clearInterval(renewal);
  await renewing;
  try {
    await IdempotencyRecord.updateOne(
      { ...identity, createdAt: now },
      { $set: { state: 'done', responseStatus: response.status, responseBody: response.body } },
    );
  } catch (err) {
    // The calls exist and their workflows run, so the client gets its answer. The key stays pending
    // and the batch is kept: once the lease runs out a retry takes the batch over and answers with
    // its calls, creating nothing (an answer too large for one document, 16 MiB, ends here too). An
    // answer taken over from an abandoned request left the key naming that request's batch.
    ctx.state.log.error({ err }, "could not store the Idempotency-Key's answer; a retry will rebuild it");
    respond(response);
    return;
  }
  void options
    .forgetBatch(response.batchId ?? batchId)
    .catch((err: unknown) => ctx.state.log.warn({ err }, 'could not remove the dispatch batch'));
  respond(response);
}

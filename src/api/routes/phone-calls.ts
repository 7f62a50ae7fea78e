// Endpoints 4-8: create, batch create, list, get, delete a queued call.
import Router from '@koa/router';
import { Types } from 'mongoose';
import type { z } from 'zod';
import { BATCH_CREATE_SCOPE, SINGLE_CREATE_SCOPE } from '../../contracts/batches';
import { isObjectIdHex } from '../../contracts/ids';
import {
  discardBatch,
  startWrittenBatch,
  writtenBatchCalls,
  type CreateContext,
  type Dispatcher,
} from '../../calls/dispatch';
import { prepareCalls, type PreparedCall } from '../../calls/prepare-calls';
import type { QueuedCallControl } from '../../calls/queued-call-control';
import { mapBounded } from '../../concurrency/run-bounded';
import type { AuthenticatedKey } from '../../auth/api-keys';
import type { SecretBox } from '../../crypto/secret-box';
import { findCallPage } from '../../data/call-list-query';
import { LIST_FILTER_FIELDS, placeInTeamList } from '../../data/call-list-positions';
import { PhoneCall, type PhoneCallDoc } from '../../data/models/phone-call';
import { toCreateView, toCreateViewAsStored, toReadView } from '../../data/phone-call-view';
import { teamWebhookEvents } from '../../data/webhook-store';
import { newDocument, writesTogether } from '../../data/writes-together';
import type { Logger } from '../../logger';
import { assertOwnTeam, authOf, requireScope } from '../auth';
import { badRequest, errorBody, HttpError, invalidInput, notFound } from '../errors';
import { decodeCursor, encodeCursor } from '../pagination';
import { streamedDataAnswer } from '../streamed-answer';
import { CreateOutcomeUnknown, replayStoredAnswer, withIdempotency, type KeyHold } from '../idempotency';
import { fileStateOf, type FileState } from '../../data/models/file-control';
import {
  phoneCallBatchSchema,
  phoneCallCreateFields,
  phoneCallCreateSchema,
  phoneCallListQuerySchema,
  type PhoneCallCreateInput,
} from '../../schemas/phone-calls';
import { webhookUrlsProblems } from '../../webhooks/url-policy';
import { formatIssues, parseQueryOrThrow } from '../validation';
import type { RequestState } from '../state';

export interface PhoneCallsRouterDeps {
  dispatcher: Dispatcher;
  control: QueuedCallControl;
  secretBox: SecretBox;
  batchStartConcurrency: number;
  allowPrivateWebhookUrls: boolean;
}

/** Refuses phoneCallWebhooks URLs that point into private networks, like team webhooks. */
async function webhookUrlProblems(
  inputs: ReadonlyArray<{ input: PhoneCallCreateInput; prefix: string }>,
  allowPrivate: boolean,
): Promise<string[]> {
  const urls = inputs.flatMap(({ input }) => (input.phoneCallWebhooks ?? []).map((hook) => hook.url));
  if (urls.length === 0) return [];
  const verdicts = await webhookUrlsProblems(urls, allowPrivate);
  const problems: string[] = [];
  for (const { input, prefix } of inputs) {
    for (const [index, hook] of (input.phoneCallWebhooks ?? []).entries()) {
      const problem = verdicts.get(hook.url);
      if (problem) problems.push(`${prefix ? `${prefix}.` : ''}phoneCallWebhooks.${index}.url ${problem}`);
    }
  }
  return problems;
}

/**
 * A create's problems as the schema finds them, and the call when its fields are valid: a call whose
 * only problem lies across fields (a repeated prompt variable) can still be checked against the team.
 */
function parseCreate(element: unknown, prefix: string): { input?: PhoneCallCreateInput; problems: string[] } {
  const parsed = phoneCallCreateSchema.safeParse(element);
  if (parsed.success) return { input: parsed.data, problems: [] };
  const fields = phoneCallCreateFields.safeParse(element);
  return { input: fields.data, problems: formatIssues(parsed.error.issues, element, prefix) };
}

/**
 * A batch's envelope as the schema finds it, and its elements whenever `phoneCalls` itself is right
 * (an array of 1 to 10,000), so that the elements are checked beside a problem elsewhere in the envelope.
 */
function parseBatchEnvelope(body: unknown): {
  envelope?: z.output<typeof phoneCallBatchSchema>;
  elements: unknown[];
  problems: string[];
} {
  const parsed = phoneCallBatchSchema.safeParse(body);
  if (parsed.success) return { envelope: parsed.data, elements: parsed.data.phoneCalls, problems: [] };
  const given = typeof body === 'object' && body !== null ? (body as { phoneCalls?: unknown }).phoneCalls : undefined;
  const elements = phoneCallBatchSchema.shape.phoneCalls.safeParse(given).data ?? [];
  return { elements, problems: formatIssues(parsed.error.issues, body) };
}

/** A batch's call records per insert (about 300 KiB of BSON). */
const BATCH_INSERT_ROWS = 500;

/**
 * Writes a batch's calls in order, each made as save() would (cast, defaults, version key, validated)
 * and kept as a plain object, one Mongoose document at a time. Each call's fields are replaced by its
 * row as it is made, and the rows go BATCH_INSERT_ROWS to an insert, so that a full batch is not held
 * twice over: insertMany kept 10,000 Mongoose documents beside their plain copies (431 MiB of RSS),
 * and one insert of every row serialized them all at once (~30 MiB more). A failure part way leaves
 * the chunks before it written: the caller removes the batch's calls, as for any cut-short write.
 */
async function insertBatchCalls(calls: PreparedCall[]): Promise<PhoneCallDoc[]> {
  const rows: PhoneCallDoc[] = [];
  for (let start = 0; start < calls.length; start += BATCH_INSERT_ROWS) {
    const chunk: PhoneCallDoc[] = [];
    for (const call of calls.slice(start, start + BATCH_INSERT_ROWS)) {
      const row = (await newDocument(PhoneCall, call.doc)).toObject() as PhoneCallDoc;
      call.doc = row;
      chunk.push(row);
    }
    await PhoneCall.collection.insertMany(chunk, { ordered: true });
    rows.push(...chunk);
  }
  return rows;
}

/** Single creates' call records, a bulk write at a time under load. */
const insertCall = writesTogether(() => PhoneCall.collection);

const isObjectId = isObjectIdHex;
/** A retry's answer when the call its Idempotency-Key created has been deleted since. */
export const CALL_DELETED_SINCE =
  'the call created with this Idempotency-Key was deleted since; nothing was created again';

/** Path ids are compared in lower case, as body ids are normalised. */
const pathId = (value: string) => value.toLowerCase();

/**
 * The list's `createdBefore` as the exclusive bound it is. Dates hold milliseconds, and a written time
 * with digits below them (`...58.5531Z`) is parsed cut to its millisecond (`.553`), which would leave
 * out the calls at `.553`, strictly before it: such a time is rounded up to the next millisecond.
 * (`createdAfter` is right cut: calls at `.553` are before `.5531` and stay out, later ones are in.)
 */
function exclusiveUpperBound(written: unknown, parsed: Date | undefined): Date | undefined {
  if (!parsed || typeof written !== 'string') return parsed;
  const belowMillisecond = /\.\d{3}(\d+)/.exec(written)?.[1];
  return belowMillisecond && /[1-9]/.test(belowMillisecond) ? new Date(parsed.getTime() + 1) : parsed;
}

export function createPhoneCallsRouter(deps: PhoneCallsRouterDeps): Router {
  const router = new Router<RequestState>({ prefix: '/v1/phoneCalls' });

  const forgetBatch = (batchId: Types.ObjectId) => deps.dispatcher.forgetBatch(batchId);

  router.post('/', requireScope('calls:write'), async (ctx) => {
    const auth = authOf(ctx);
    const keyed = { teamId: auth.teamId, scope: SINGLE_CREATE_SCOPE, body: ctx.request.body };
    const { input, problems } = parseCreate(ctx.request.body, '');
    if (!input) {
      if (await replayStoredAnswer(ctx, keyed)) return;
      throw invalidInput(problems);
    }
    // A body the schema refused is a 400 whatever its teamId, as it always was.
    if (!problems.length) assertOwnTeam(auth, input.teamId);
    const urlProblems = await webhookUrlProblems([{ input, prefix: '' }], deps.allowPrivateWebhookUrls);
    if (problems.length || urlProblems.length) {
      if (await replayStoredAnswer(ctx, keyed)) return;
      throw invalidInput([...problems, ...urlProblems, ...(await teamProblems([{ input, prefix: '' }], auth))]);
    }
    await withIdempotency(
      ctx,
      { ...keyed, forgetBatch },
      async ({ batchId, abandonedBatchId, retryMayTakeOver, nameOwnBatch, stillHolds }) => {
        const left = abandonedBatchId && (await takeOver(abandonedBatchId, ctx.state.log));
        if (left?.[0])
          return { status: 201, body: { data: toCreateViewAsStored(left[0]) }, batchId: abandonedBatchId ?? undefined };
        // Its call was written, started and deleted since: the key's answer says so, and creates nothing.
        if (left)
          return { status: 409, body: errorBody(409, [CALL_DELETED_SINCE]), batchId: abandonedBatchId ?? undefined };
        // The abandoned batch was discarded (its writing was cut short): the key names this one from now.
        await nameOwnBatch();
        // Side by side: the batch record (what the reconciler finds if this process dies before the
        // workflow starts), the reads that check and build the call, and the team's webhooks.
        const [, { calls, problems }, webhookEvents] = await Promise.all([
          deps.dispatcher.openBatch(auth.teamId, 1, batchId),
          prepareCalls([{ input, prefix: '' }], {
            teamId: auth.teamId,
            team: auth.team,
            origin: 'api',
            secretBox: deps.secretBox,
            dispatchBatchId: batchId,
          }),
          teamWebhookEvents(auth.teamId),
        ]);
        if (problems.length) {
          await deps.dispatcher.dropBatch(batchId);
          throw invalidInput(problems);
        }
        let doc: PhoneCallDoc;
        try {
          await placeInTeamList(new Types.ObjectId(auth.teamId), [calls[0]!.doc]);
          const call = await newDocument(PhoneCall, calls[0]!.doc);
          await insertCall({ insertOne: { document: call.toBSON() } });
          doc = call.toObject() as PhoneCallDoc;
        } catch (err) {
          // The insert may have landed (a connection lost after the write): removed with its batch, as
          // in the batch route, or the reconciler would start it and the retry make a second.
          return failCutShort(batchId, err);
        }
        const hold = await holdsKey(stillHolds);
        if (hold !== 'held') return failTakenOver(batchId, hold, ctx.state.log);
        try {
          await deps.dispatcher.start(doc, calls[0]!.plan, { teamWebhookEvents: webhookEvents });
        } catch (err) {
          ctx.state.log.error({ err, callId: doc._id.toHexString() }, 'could not start the call workflow');
          return failUnstarted(batchId, doc._id.toHexString());
        }
        // The call and its workflow exist: a batch left open only costs the reconciler a no-op start,
        // so the answer does not wait for it, unless a retry may take the batch over: then it must be
        // marked started before the answer is stored, which removes it again (forgetBatch).
        const closing = deps.dispatcher
          .closeBatch(batchId, { keep: retryMayTakeOver })
          .catch((err: unknown) => ctx.state.log.warn({ err }, 'could not close the dispatch batch'));
        if (retryMayTakeOver) await closing;
        return { status: 201, body: { data: toCreateView(doc) } };
      },
    );
  });

  router.post('/batch', requireScope('calls:write'), async (ctx) => {
    const auth = authOf(ctx);
    // All-or-nothing validation: the envelope and every element are checked and every problem reported
    // (an unknown top-level field does not hide the elements' problems).
    const { envelope, elements, problems } = parseBatchEnvelope(ctx.request.body);
    const inputs = elements.flatMap((element, index) => {
      const prefix = `phoneCalls.${index}`;
      const { input, problems: found } = parseCreate(element, prefix);
      for (const problem of found) problems.push(problem);
      if (!input) return [];
      if (!found.length && input.teamId !== auth.teamId)
        problems.push(`${prefix}.teamId is not the team of this API key`);
      return [{ input, prefix }];
    });
    // Another team's call in a batch the schema takes whole: 403. A body it refused anywhere is a 400
    // whatever its teamIds (listing them too), as a single create's is.
    const foreign = (p: string) => p.endsWith('is not the team of this API key');
    if (envelope && problems.length > 0 && problems.every(foreign)) throw new HttpError(403, problems);
    const urlProblems = await webhookUrlProblems(inputs, deps.allowPrivateWebhookUrls);
    const keyed = { teamId: auth.teamId, scope: BATCH_CREATE_SCOPE, body: ctx.request.body };
    if (!envelope || problems.length || urlProblems.length) {
      if (await replayStoredAnswer(ctx, keyed)) return;
      throw invalidInput([...problems, ...urlProblems, ...(await teamProblems(inputs, auth))]);
    }
    await withIdempotency(
      ctx,
      { ...keyed, forgetBatch },
      async ({ batchId, abandonedBatchId, retryMayTakeOver, answerStored, nameOwnBatch, stillHolds }) => {
        const left = abandonedBatchId && (await takeOver(abandonedBatchId, ctx.state.log));
        if (left) {
          return {
            status: 201,
            body: { data: left.map((doc) => toCreateViewAsStored(doc)), batchId: abandonedBatchId.toHexString() },
            batchId: abandonedBatchId,
          };
        }
        // The abandoned batch was discarded (its writing was cut short): the key names this one from now.
        await nameOwnBatch();
        await deps.dispatcher.openBatch(auth.teamId, inputs.length, batchId);
        const [prepared, webhookEvents] = await Promise.all([
          prepareCalls(inputs, {
            teamId: auth.teamId,
            team: auth.team,
            origin: envelope.fileId || envelope.fileName ? 'file' : 'batch',
            fileId: envelope.fileId,
            fileName: envelope.fileName,
            secretBox: deps.secretBox,
            dispatchBatchId: batchId,
          }),
          teamWebhookEvents(auth.teamId),
        ]);
        if (prepared.problems.length) {
          await deps.dispatcher.dropBatch(batchId);
          throw invalidInput(prepared.problems);
        }
        const log = ctx.state.log;
        const t0 = performance.now();
        let created: PhoneCallDoc[];
        try {
          await placeInTeamList(
            new Types.ObjectId(auth.teamId),
            prepared.calls.map((c) => c.doc),
          );
          created = await insertBatchCalls(prepared.calls);
        } catch (err) {
          // Cut short: remove what was written, so that a retry writes the whole batch once.
          return failCutShort(batchId, err);
        }
        const hold = await holdsKey(stillHolds);
        if (hold !== 'held') return failTakenOver(batchId, hold, ctx.state.log);
        // The file's last control, read once its calls are written: one given before this read reaches
        // them here (started paused, or not created once cancelled); one given after it finds them.
        let fileState: FileState | undefined;
        try {
          fileState = envelope.fileId ? await fileStateOf(auth.teamId, envelope.fileId) : undefined;
          if (fileState === 'cancelled') await discardBatch(batchId);
        } catch (err) {
          // Written, not started: removed as a cut-short create is (or left to a retry's takeover).
          return failCutShort(batchId, err);
        }
        if (fileState === 'cancelled') {
          throw badRequest(
            `file ${envelope.fileId} was cancelled (POST /v1/phoneCalls/file/{fileId}/cancel): no call of this ` +
              'batch was created; resume the file to create calls under it again',
          );
        }
        const t1 = performance.now();
        // A workflow that cannot be started now leaves the batch pending: the worker's reconciler
        // starts it later, so an accepted batch is never partly lost.
        const allStarted = await startAll(
          created,
          prepared.calls,
          { teamWebhookEvents: webhookEvents, ...(fileState ? { fileState } : {}) },
          log,
        );
        if (allStarted)
          await deps.dispatcher
            .closeBatch(batchId, { keep: retryMayTakeOver })
            .catch((err: unknown) => log.warn({ err }, 'could not close the dispatch batch'));
        log.info(
          {
            calls: created.length,
            allStarted,
            insertMs: Math.round(t1 - t0),
            startMs: Math.round(performance.now() - t1),
          },
          'batch stored and dispatched',
        );
        // batchId: what the batch controls (POST /v1/phoneCalls/batch/{batchId}/pause, ...) take.
        const rest = { batchId: batchId.toHexString() };
        return {
          status: 201,
          body: answerStored
            ? { data: created.map((doc) => toCreateView(doc)), ...rest }
            : streamedDataAnswer(created, toCreateView, rest),
        };
      },
    );
  });

  /**
   * Every problem at once (decisions.md): calls refused for other reasons are checked against the
   * team's templates, numbers and do-not-call list too (reads only; nothing is written).
   */
  async function teamProblems(
    inputs: ReadonlyArray<{ input: PhoneCallCreateInput; prefix: string }>,
    auth: AuthenticatedKey,
  ): Promise<string[]> {
    const { problems } = await prepareCalls(inputs, {
      teamId: auth.teamId,
      team: auth.team,
      origin: 'batch',
      secretBox: deps.secretBox,
      dispatchBatchId: new Types.ObjectId(),
    });
    return problems;
  }

  /**
   * Removes what a create cut short while writing left, and fails with its error. When the removal
   * fails too, nobody knows what was written: the key (if any) is left to a retry's takeover.
   */
  async function failCutShort(batchId: Types.ObjectId, err: unknown): Promise<never> {
    try {
      await discardBatch(batchId);
    } catch (cleanupErr) {
      throw new CreateOutcomeUnknown(err, cleanupErr);
    }
    throw err;
  }

  /**
   * A single create whose workflow start failed: no workflow, no call, so the record goes with its
   * batch and the answer says nothing was created. Unless Temporal has the workflow after all (the
   * start went through and only its answer failed: the call may be being dialled, its record still
   * `queued` until the provider answers), or the removal fails or finds the call no longer queued:
   * then whether it was created is unknown, the record, its batch and the key (if any) stay for a
   * retry's takeover, which finds the call and answers with it, and the answer says so. (Before, a
   * call found queued was removed, and one found dialling lost its batch record: either way the retry
   * wrote and dialled a second call.)
   */
  async function failUnstarted(batchId: Types.ObjectId, callId: string): Promise<never> {
    const unknown = new HttpError(500, [
      'the call could not be scheduled, and whether it was created is not known: retry with the same ' +
        'Idempotency-Key, or look for the call before creating it again',
    ]);
    // Temporal unreachable for this look too (an outage, most likely what failed the start): the
    // record's state decides, as before the look.
    const started = await deps.dispatcher.workflowExists(callId).catch(() => false);
    if (started) throw new CreateOutcomeUnknown(unknown, new Error('its workflow was started after all'));
    let removed: number;
    try {
      removed = await discardBatch(batchId, 1);
    } catch (cleanupErr) {
      throw new CreateOutcomeUnknown(unknown, cleanupErr);
    }
    if (removed !== 1) throw new CreateOutcomeUnknown(unknown, new Error(`${removed} queued calls removed, not 1`));
    throw new HttpError(500, ['the call could not be scheduled; nothing was created, please retry']);
  }

  /**
   * Whether the request still holds its key; a failed check leaves the outcome to a retry's takeover
   * (the key stays pending), as the calls are written but nothing is started.
   */
  async function holdsKey(stillHolds: () => Promise<KeyHold>): Promise<KeyHold> {
    try {
      return await stillHolds();
    } catch (err) {
      throw new CreateOutcomeUnknown(err, err);
    }
  }

  /**
   * A retry took this request's key over while it was writing (it stalled past its lease). The batch
   * is the retry's to settle: found whole it starts these calls and answers with them (`adopted`),
   * found cut short it removes them with their batch record and names its own (`replaced`). So nothing
   * is started here, and only once replaced are the calls removed: the rest of an insert that landed
   * after the retry's removal. Still unsettled after the wait, the batch is pending: the reconciler
   * starts it whole or discards it cut short, and a later retry settles it as this one would have.
   */
  async function failTakenOver(batchId: Types.ObjectId, hold: Exclude<KeyHold, 'held'>, log: Logger): Promise<never> {
    if (hold === 'replaced') await PhoneCall.deleteMany({ dispatchBatchId: batchId, status: 'queued' });
    if (hold === 'unsettled')
      log.warn({ batchId: batchId.toHexString() }, 'a retry took this create over and had not settled its batch yet');
    throw new HttpError(
      429,
      ['a retry with this Idempotency-Key took this request over; its answer is the one that counts'],
      {
        'Retry-After': '2',
      },
    );
  }

  /**
   * What a request that died under an Idempotency-Key left: its calls when all were written (their
   * workflows started now, or by the reconciler should Temporal be away), else nothing (discarded).
   */
  async function takeOver(batchId: Types.ObjectId, log: Logger): Promise<PhoneCallDoc[] | null> {
    const calls = await writtenBatchCalls(batchId);
    if (!calls) {
      const removed = await discardBatch(batchId);
      log.warn({ batchId: batchId.toHexString(), removed }, 'retry discarded the calls its abandoned request began');
      return null;
    }
    await startWrittenBatch(deps.dispatcher, batchId, calls).catch((err: unknown) =>
      log.warn({ err, batchId: batchId.toHexString() }, 'workflow starts failed; the reconciler will retry them'),
    );
    log.warn(
      { batchId: batchId.toHexString(), calls: calls.length },
      'retry answered with its abandoned request’s calls',
    );
    return calls;
  }

  async function startAll(
    docs: PhoneCallDoc[],
    prepared: PreparedCall[],
    atCreate: CreateContext,
    log: Logger,
  ): Promise<boolean> {
    const outcomes = await mapBounded(docs, deps.batchStartConcurrency, async (doc, index) => {
      try {
        await deps.dispatcher.start(doc, prepared[index]!.plan, atCreate);
        return true;
      } catch (err) {
        log.warn({ err, callId: doc._id.toHexString() }, 'workflow start failed; the reconciler will retry it');
        return false;
      }
    });
    return outcomes.every(Boolean);
  }

  router.get('/', requireScope('calls:read'), async (ctx) => {
    const auth = authOf(ctx);
    const query = parseQueryOrThrow(phoneCallListQuerySchema, ctx.query);
    const page = await findCallPage({
      teamId: new Types.ObjectId(auth.teamId),
      equals: Object.fromEntries(
        LIST_FILTER_FIELDS.flatMap((field) => (query[field] === undefined ? [] : [[field, query[field]]])),
      ),
      createdAfter: query.createdAfter,
      createdBefore: exclusiveUpperBound(ctx.query.createdBefore, query.createdBefore),
      after: query.cursor ? decodeCursor(query.cursor) : undefined,
      limit: query.limit,
    });
    ctx.body = {
      data: page.docs.map((doc) => toReadView(doc)),
      nextCursor: page.next ? encodeCursor(page.next) : null,
    };
  });

  router.get('/:id', requireScope('calls:read'), async (ctx) => {
    const auth = authOf(ctx);
    const id = pathId(ctx.params.id);
    const doc = isObjectId(id) ? await PhoneCall.findOne({ _id: id, teamId: auth.teamId }).lean() : null;
    if (!doc) throw notFound(`phone call ${ctx.params.id} not found`);
    ctx.body = { data: toReadView(doc) };
  });

  router.delete('/:id', requireScope('calls:write'), async (ctx) => {
    const auth = authOf(ctx);
    const id = pathId(ctx.params.id);
    const doc = isObjectId(id) ? await PhoneCall.findOne({ _id: id, teamId: auth.teamId }).lean() : null;
    if (!doc) throw notFound(`phone call ${id} not found`);
    if (doc.status !== 'queued') throw badRequest(`only queued calls can be deleted; status is ${doc.status}`);
    try {
      const result = await deps.control.deleteQueued(doc);
      if (result.outcome === 'not-queued') throw badRequest(result.message);
      // The workflow accepted the delete, so the call as read above (queued) is the one removed; its
      // own snapshot is missing only when a retried removal found the record already gone.
      ctx.body = { data: result.call ?? toReadView(doc) };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      const current = await PhoneCall.findOne({ _id: id, teamId: auth.teamId }).lean();
      if (!current) throw notFound(`phone call ${id} not found`);
      if (current.status !== 'queued')
        throw badRequest(`only queued calls can be deleted; status is ${current.status}`);
      throw err;
    }
  });

  return router;
}

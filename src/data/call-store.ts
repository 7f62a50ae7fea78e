// The PhoneCall reads and writes activities need. Writes must hold without transactions (FerretDB 1.x
// has none): every status change is one conditional single-document update. A call's record has one
// writer at a time, its workflow: FerretDB 1.x applies an update by reading the document and writing
// it back whole, so a second writer's change in between would be lost.
import { Types } from 'mongoose';
import { predecessorsOf, type CallStatus } from '../contracts/call-status';
import type { AnsweredBy } from '../contracts/machine-detection';
import { removeConversation } from './conversation-store';
import { callKeptByDeletion, noteDeletedFromBatch } from './models/batch-call-deletion';
import { PhoneCall, type PhoneCallDoc } from './models/phone-call';
import { ProviderCallSighting } from './models/provider-call-sighting';
import { toReadView, type PhoneCallReadView } from './phone-call-view';

export interface StatusChange {
  callId: string;
  status: CallStatus;
  statusCode: string;
  /** When the change happened (ISO): also what makes a retried write recognisable. */
  at: string;
  /**
   * The dial attempt the change belongs to (a change that ends one, that one), named by calls since
   * `writesNameAttempt`: the write lands only while the record holds exactly the attempts ended before
   * it, so a write that lands late, after its attempt ended (a try the server gave up on while the
   * store was slow), changes nothing. Not named: no such check, as before.
   */
  attempt?: number;
  fields?: {
    callTriggeredAt?: string;
    callStartedAt?: string;
    callEndedAt?: string;
    callDuration?: number;
    providerCallId?: string;
    answeredBy?: AnsweredBy;
  };
  /** The dial attempt this change ends, appended to the call's `attempts` in the same write. */
  endedAttempt?: AttemptRecord;
  /** What the conversation left (the capture's final write), stored in the same write. */
  results?: CallResults;
  /**
   * The conversation's outputs could not be had (the capture failed for good): recordStatus gives each
   * of the template's result columns an empty value in the same write (decisions.md: one per column).
   */
  emptyResults?: true;
}

export interface AttemptRecord {
  attempt: number;
  providerCallId: string | null;
  /** ISO times. */
  callTriggeredAt: string;
  callStartedAt: string | null;
  callEndedAt: string;
  status: CallStatus;
  statusCode: string;
  answeredBy?: AnsweredBy | null;
}

/** The change's fields that are times (sent as ISO strings); the others are stored as they come. */
const TIME_FIELDS = new Set(['callTriggeredAt', 'callStartedAt', 'callEndedAt']);

export type StatusChangeResult =
  | {
      outcome: 'applied';
      call: PhoneCallReadView;
      /**
       * Set only when another try of the same change had landed first with another provider call (two
       * tries of one dial each placed a call): the call the record names.
       */
      recordedProviderCallId?: string;
    }
  | { outcome: 'skipped'; currentStatus: CallStatus }
  | { outcome: 'missing' };

/**
 * Moves a call to `status` only from a status the machine allows, so a terminal status never
 * changes again. A retry of a write that already landed reports `applied` again.
 */
export async function applyStatusChange(change: StatusChange): Promise<StatusChangeResult> {
  const at = new Date(change.at);
  const set: Record<string, unknown> = {
    status: change.status,
    statusExtraInfo: { statusCode: change.statusCode, dateTime: at },
  };
  for (const [key, value] of Object.entries(change.fields ?? {})) {
    if (value === undefined) continue;
    set[key] = TIME_FIELDS.has(key) ? new Date(value as string) : value;
  }
  if (change.results) Object.assign(set, resultFields(change.results));
  const update: Record<string, unknown> = { $set: set };
  const ended = change.endedAttempt;
  if (ended) {
    update.$push = {
      attempts: {
        ...ended,
        callTriggeredAt: new Date(ended.callTriggeredAt),
        callStartedAt: ended.callStartedAt ? new Date(ended.callStartedAt) : null,
        callEndedAt: new Date(ended.callEndedAt),
      },
    };
  }
  // Back to queued for a redial: the next attempt's dial must not find this attempt's call, and the
  // top-level fields describe the attempt to come (a machine may have answered this one, and its
  // capture stored a recording of the greeting and results: they are not the next attempt's).
  if (change.status === 'queued') {
    update.$unset = {
      providerCallId: 1,
      callStartedAt: 1,
      callEndedAt: 1,
      callDuration: 1,
      answeredBy: 1,
      recordingUrl: 1,
      fixedMeetingTime: 1,
    };
    Object.assign(set, { resultValues: [], customTagsHitOnCall: [] });
  }
  // One conditional single-document write: a retry after it landed matches nothing, so the attempt is
  // appended once. A self-transition (queued -> queued) is told from its retry by the change's time.
  const from = predecessorsOf(change.status);
  const filter: Record<string, unknown> = {
    _id: change.callId,
    status: { $in: from },
    ...attemptsEndedBefore(change.attempt),
  };
  if (from.includes(change.status)) filter['statusExtraInfo.dateTime'] = { $ne: at };
  const updated = await PhoneCall.findOneAndUpdate(filter, update, { returnDocument: 'after' }).lean();
  if (updated) return { outcome: 'applied', call: toReadView(updated) };
  const current = await PhoneCall.findById(change.callId).lean();
  if (!current) return { outcome: 'missing' };
  const sameWrite = current.status === change.status && current.statusExtraInfo?.dateTime?.getTime() === at.getTime();
  if (!sameWrite) return { outcome: 'skipped', currentStatus: current.status as CallStatus };
  const ours = change.fields?.providerCallId;
  if (typeof ours === 'string' && current.providerCallId && current.providerCallId !== ours) {
    return { outcome: 'applied', call: toReadView(current), recordedProviderCallId: current.providerCallId };
  }
  return { outcome: 'applied', call: toReadView(current) };
}

/**
 * The filter that holds while the record's `attempts` are exactly those ended before `attempt` (none
 * when the attempt is not named): the status machine alone would let an earlier attempt's `ringing`
 * or why-it-waits land on a call queued again for its redial. `$size` on one document: both stores.
 */
function attemptsEndedBefore(attempt: number | undefined): Record<string, unknown> {
  if (attempt === undefined) return {};
  const ended = attempt - 1;
  // Records stored before `attempts` existed have no array at all.
  return ended === 0
    ? { $or: [{ attempts: { $size: 0 } }, { attempts: { $exists: false } }] }
    : { attempts: { $size: ended } };
}

/** The filter that holds while the record's `attempts` has at most `count` entries (`$size` alone: both stores). */
function attemptsEndedAtMost(count: number): Record<string, unknown> {
  return {
    $or: [
      { attempts: { $exists: false } },
      ...Array.from({ length: count + 1 }, (_, size) => ({ attempts: { $size: size } })),
    ],
  };
}

type DeletedOwnWebhook = Pick<PhoneCallDoc['phoneCallWebhooks'][number], 'url' | 'secretSealed' | 'subscribedEvent'>;

export type DeleteIfQueuedResult =
  | {
      outcome: 'deleted';
      call: PhoneCallReadView;
      /** Its own webhooks (sealed secrets): the record that named them is gone. */
      ownWebhooks: DeletedOwnWebhook[];
    }
  | { outcome: 'not-queued'; currentStatus: string }
  | { outcome: 'missing' };

/** What the conversation left in the call's record (results of src/results). */
export interface CallResults {
  resultValues: Array<{ columnName: string; value: string }>;
  customTagsHitOnCall: string[];
  fixedMeetingTime: Date | null;
  recordingUrl?: string;
}

/** The record's fields for `results` (a recording URL only when there is one). */
function resultFields({ recordingUrl, ...results }: CallResults): Record<string, unknown> {
  return { ...results, ...(recordingUrl ? { recordingUrl } : {}) };
}

export interface CallStore {
  findById(callId: string | Types.ObjectId): Promise<PhoneCallDoc | null>;
  applyStatusChange(change: StatusChange): Promise<StatusChangeResult>;
  /** Removes the call only while it is queued. */
  deleteIfQueued(callId: string): Promise<DeleteIfQueuedResult>;
  setProviderCallId(callId: string, providerCallId: string): Promise<void>;
  /** Provider call ids seen in the call's callbacks (src/calls/provider-events.ts), newest first. */
  sightedProviderCallIds(callId: string): Promise<string[]>;
  /**
   * Whether a provider call is known to be another of our calls: recorded on another call to the
   * same number (as its call or an earlier attempt's), or seen in another call's callbacks.
   */
  heldByAnotherCall(
    call: Pick<PhoneCallDoc, '_id' | 'teamId' | 'toPhoneNumber'>,
    providerCallId: string,
    /** Only another call's record counts, not its callbacks' sightings. */
    options?: { recordsOnly?: boolean },
  ): Promise<boolean>;
  /**
   * Says why a queued call waits (its status code); a call no longer queued, or no longer waiting for
   * `attempt` when it is named (see StatusChange's), is left alone.
   */
  setQueuedStatusCode(callId: string, statusCode: string, at: Date, attempt?: number): Promise<void>;
  /**
   * Stores a conversation's results while the record still holds the attempt they are of: not queued
   * again for a redial, its provider call id that attempt's (null: a call never dialled, whose results
   * only its own tools write), and no later attempt recorded when `attempt` is named. A late try landing
   * after the call was queued again or dialled again changes nothing.
   */
  saveResults(
    callId: string | Types.ObjectId,
    results: CallResults,
    of: { providerCallId: string | null; attempt?: number },
  ): Promise<void>;
}

export function createCallStore(): CallStore {
  return {
    findById: (callId) => PhoneCall.findById(callId).lean<PhoneCallDoc>().exec(),
    applyStatusChange,
    async deleteIfQueued(callId) {
      // A batch still pending counts its calls, written and deleted, against its size (dispatch.ts).
      // The deletion is noted first, so that a crash between the two writes cannot make the batch look
      // cut short (its retry finds the call gone and notes nothing); a note of a call that stays is
      // counted once with it.
      // The note keeps the call as it is: a retry after a try that removed the record (and lost its
      // answer) answers that call, so its `phoneCall.deleted` is not lost.
      const queued = await PhoneCall.findOne({ _id: callId, status: 'queued' }).lean();
      if (queued) {
        await noteDeletedFromBatch(queued._id, queued.dispatchBatchId, {
          call: toReadView(queued),
          ownWebhooks: queued.phoneCallWebhooks,
        });
      }
      const removed = await PhoneCall.findOneAndDelete({ _id: callId, status: 'queued' }).lean();
      if (removed) {
        await removeConversation(removed);
        return { outcome: 'deleted', call: toReadView(removed), ownWebhooks: removed.phoneCallWebhooks };
      }
      const current = await PhoneCall.findById(callId, { status: 1 }).lean();
      if (current) return { outcome: 'not-queued', currentStatus: current.status };
      // Gone: only a call's own workflow deletes its record, so an earlier try of this delete did.
      const kept = await callKeptByDeletion(callId);
      if (!kept) return { outcome: 'missing' };
      const call = kept.call as PhoneCallReadView;
      // That try may have stopped before it removed the call's recording and transcript.
      await removeConversation({ _id: new Types.ObjectId(callId), teamId: new Types.ObjectId(call.teamId) });
      return { outcome: 'deleted', call, ownWebhooks: kept.ownWebhooks as DeletedOwnWebhook[] };
    },
    async setProviderCallId(callId, providerCallId) {
      await PhoneCall.updateOne({ _id: callId }, { $set: { providerCallId } });
    },
    async sightedProviderCallIds(callId) {
      const sightings = await ProviderCallSighting.find({ callId }, { providerCallId: 1, seenAt: 1 }).lean();
      return sightings.sort((a, b) => b.seenAt.getTime() - a.seenAt.getTime()).map((s) => s.providerCallId);
    },
    async heldByAnotherCall(call, providerCallId, options) {
      const [recorded, sighted] = await Promise.all([
        PhoneCall.exists({
          teamId: call.teamId,
          toPhoneNumber: call.toPhoneNumber,
          _id: { $ne: call._id },
          $or: [{ providerCallId }, { 'attempts.providerCallId': providerCallId }],
        }),
        options?.recordsOnly ? null : ProviderCallSighting.exists({ providerCallId, callId: { $ne: call._id } }),
      ]);
      return recorded !== null || sighted !== null;
    },
    async setQueuedStatusCode(callId, statusCode, at, attempt) {
      await PhoneCall.updateOne(
        { _id: callId, status: 'queued', ...attemptsEndedBefore(attempt) },
        { $set: { statusExtraInfo: { statusCode, dateTime: at } } },
      );
    },
    async saveResults(callId, results, { providerCallId, attempt }) {
      // The redial's `queued` unsets the attempt's provider call id; the next attempt's dial sets its own,
      // and an attempt that placed no call (refused, listed meanwhile) records itself in `attempts`.
      // (A record the attempt's id never reached, its ringing write refused, is still its own.)
      await PhoneCall.updateOne(
        {
          _id: callId,
          status: { $ne: 'queued' },
          providerCallId: { $in: [providerCallId, null] },
          ...(attempt === undefined ? {} : attemptsEndedAtMost(attempt)),
        },
        { $set: resultFields(results) },
      );
    },
  };
}

// The two answer forms of a PhoneCall (decisions.md): the create form and the read form, typed by
// their response schemas (src/schemas/responses.ts). Internal fields (providerCallId,
// dispatchBatchId, sealed secrets) never leave through here.
import type { z } from 'zod';
import type { CallStatus, StatusCode } from '../contracts/call-status';
import type { SubscribedEvent } from '../contracts/events';
import type { AnsweredBy } from '../contracts/machine-detection';
import type { phoneCallCreateViewSchema, phoneCallReadViewSchema } from '../schemas/responses';
import type { PhoneCallDoc } from './models/phone-call';

export type PhoneCallCreateView = z.output<typeof phoneCallCreateViewSchema>;
export type PhoneCallReadView = z.output<typeof phoneCallReadViewSchema>;

type Lean = PhoneCallDoc;

/** A view before `definedOnly`: every key written out, the optional ones possibly empty. */
type Unpruned<T> = { [K in keyof Required<T>]: undefined extends T[K] ? T[K] | null : T[K] };

function iso(value: Date): string;
function iso(value: Date | null | undefined): string | undefined;
function iso(value: Date | null | undefined) {
  return value ? new Date(value).toISOString() : undefined;
}

/** Leaves out the keys without a value, as the answers do. */
function definedOnly<T extends object>(value: Unpruned<T>): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;
}

function common(doc: Lean): Unpruned<Pick<PhoneCallReadView, keyof PhoneCallCreateView>> {
  return {
    _id: doc._id.toHexString(),
    teamId: doc.teamId.toHexString(),
    callTemplateId: doc.callTemplateId.toHexString(),
    nameOfHuman: doc.nameOfHuman ?? undefined,
    toPhoneNumber: doc.toPhoneNumber,
    promptVariableValues: doc.promptVariableValues.map(({ key, value }) => ({ key, value })),
    phoneNumberId: doc.phoneNumberId?.toHexString(),
    fromPhoneNumber: doc.fromPhoneNumber,
    toEmailAddress: doc.toEmailAddress ?? undefined,
    status: doc.status,
    telephonyProvider: doc.telephonyProvider,
    record: doc.record,
    callDelayedUntil: iso(doc.callDelayedUntil),
    calleeTimeZone: doc.calleeTimeZone ?? undefined,
    // Validated as an event name on create.
    phoneCallWebhooks: doc.phoneCallWebhooks.map(({ url, subscribedEvent }) => ({
      url,
      subscribedEvent: subscribedEvent as SubscribedEvent,
    })),
    fileId: doc.fileId ?? undefined,
    fileName: doc.fileName ?? undefined,
    createdAt: iso(doc.createdAt),
    updatedAt: iso(doc.updatedAt),
  };
}

export function toCreateView(doc: Lean): PhoneCallCreateView {
  // Only a call just stored is shown in the create form, and a call is stored queued.
  if (doc.status !== 'queued') throw new Error(`call ${doc._id.toHexString()} is ${doc.status}, not queued`);
  return definedOnly<PhoneCallCreateView>({ ...common(doc), status: doc.status });
}

/**
 * The create form a request that died before answering would have given: its call as stored, queued
 * and not updated since. A retry with its Idempotency-Key answers so, though the call may have been
 * dialled (or ended) meanwhile: the answer is the create's, the call's state now is a read away.
 */
export function toCreateViewAsStored(doc: Lean): PhoneCallCreateView {
  return definedOnly<PhoneCallCreateView>({ ...common(doc), status: 'queued', updatedAt: iso(doc.createdAt) });
}

export function toReadView(doc: Lean): PhoneCallReadView {
  return definedOnly<PhoneCallReadView>({
    ...common(doc),
    resultValues: doc.resultValues.map(({ columnName, value }) => ({ columnName, value: value ?? '' })),
    callTriggeredAt: iso(doc.callTriggeredAt),
    callStartedAt: iso(doc.callStartedAt),
    callEndedAt: iso(doc.callEndedAt),
    // The call workflow writes a StatusCode; the record stores it as a plain string.
    statusExtraInfo: doc.statusExtraInfo
      ? { statusCode: doc.statusExtraInfo.statusCode as StatusCode, dateTime: iso(doc.statusExtraInfo.dateTime) }
      : undefined,
    fixedMeetingTime: iso(doc.fixedMeetingTime),
    recordingUrl: doc.recordingUrl ?? undefined,
    callDuration: doc.callDuration ?? undefined,
    answeredBy: (doc.answeredBy as AnsweredBy | undefined) ?? undefined,
    callOrigin: doc.callOrigin,
    customTagsHitOnCall: [...doc.customTagsHitOnCall],
    attempts: (doc.attempts ?? []).map((a) =>
      definedOnly<PhoneCallReadView['attempts'][number]>({
        attempt: a.attempt,
        providerCallId: a.providerCallId ?? undefined,
        callTriggeredAt: iso(a.callTriggeredAt),
        callStartedAt: iso(a.callStartedAt),
        callEndedAt: iso(a.callEndedAt),
        status: a.status as CallStatus,
        statusCode: a.statusCode as StatusCode,
        answeredBy: (a.answeredBy as AnsweredBy | null | undefined) ?? undefined,
      }),
    ),
  });
}

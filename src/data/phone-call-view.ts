// The two answer forms of a PhoneCall (decisions.md): the create form and the read form.
// Internal fields (providerCallId, dispatchBatchId, sealed secrets) never leave through here.
import type { PhoneCallDoc } from './models/phone-call';

type Lean = PhoneCallDoc;

const iso = (value: Date | null | undefined) => (value ? new Date(value).toISOString() : undefined);

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

function common(doc: Lean) {
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
    phoneCallWebhooks: doc.phoneCallWebhooks.map(({ url, subscribedEvent }) => ({ url, subscribedEvent })),
    fileId: doc.fileId ?? undefined,
    fileName: doc.fileName ?? undefined,
    createdAt: iso(doc.createdAt),
    updatedAt: iso(doc.updatedAt),
  };
}

export type PhoneCallCreateView = ReturnType<typeof toCreateView>;
export function toCreateView(doc: Lean) {
  return definedOnly(common(doc));
}

export type PhoneCallReadView = ReturnType<typeof toReadView>;
export function toReadView(doc: Lean) {
  return definedOnly({
    ...common(doc),
    resultValues: doc.resultValues.map(({ columnName, value }) => ({ columnName, value: value ?? '' })),
    callTriggeredAt: iso(doc.callTriggeredAt),
    callStartedAt: iso(doc.callStartedAt),
    callEndedAt: iso(doc.callEndedAt),
    statusExtraInfo: doc.statusExtraInfo
      ? { statusCode: doc.statusExtraInfo.statusCode, dateTime: iso(doc.statusExtraInfo.dateTime) }
      : undefined,
    fixedMeetingTime: iso(doc.fixedMeetingTime),
    recordingUrl: doc.recordingUrl ?? undefined,
    callDuration: doc.callDuration ?? undefined,
    callOrigin: doc.callOrigin,
    customTagsHitOnCall: [...doc.customTagsHitOnCall],
  });
}

// In-memory stores with the contracts of src/data/*-store.ts, so that activities run alone under
// MockActivityEnvironment. They hold documents shaped like the lean Mongoose documents.
import { Types } from 'mongoose';
import type { CallResults, CallStore, StatusChange, StatusChangeResult } from '../../../src/data/call-store';
import { transcriptRowId, type ConversationStore, type UtteranceRecord } from '../../../src/data/conversation-store';
import type { DoNotCallStore } from '../../../src/data/do-not-call-store';
import type { DoNotCallEntryDoc } from '../../../src/data/models/do-not-call-entry';
import type { CallTemplateDoc } from '../../../src/data/models/call-template';
import type { PhoneCallDoc } from '../../../src/data/models/phone-call';
import type { WebhookDoc } from '../../../src/data/models/webhook';
import { toReadView } from '../../../src/data/phone-call-view';
import type { TemplateStore } from '../../../src/data/template-store';
import type { DeliveryAttemptRecord, WebhookStore } from '../../../src/data/webhook-store';

export function templateDoc(overrides: Partial<CallTemplateDoc> = {}): CallTemplateDoc {
  return {
    _id: new Types.ObjectId(),
    teamId: new Types.ObjectId(),
    name: 'Appointment setter',
    prompt: 'Hello {{firstName}}, this is Ada from Acme Dental.',
    variables: ['firstName'],
    requiredVariables: ['firstName'],
    customTags: [{ name: 'interested', triggerPhrases: ['sounds good', 'works for me'] }],
    resultColumns: ['interested', 'meetingTime'],
    maxDurationSeconds: 900,
    timeZone: 'America/New_York',
    ...overrides,
  } as CallTemplateDoc;
}

export function callDoc(template: CallTemplateDoc, overrides: Partial<PhoneCallDoc> = {}): PhoneCallDoc {
  const now = new Date();
  return {
    _id: new Types.ObjectId(),
    teamId: template.teamId,
    callTemplateId: template._id,
    nameOfHuman: 'Grace',
    toPhoneNumber: '+14155550007',
    promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
    fromPhoneNumber: '+14155550100',
    status: 'queued',
    telephonyProvider: 'twilio',
    record: true,
    phoneCallWebhooks: [],
    resultValues: [],
    customTagsHitOnCall: [],
    callOrigin: 'api',
    dispatchBatchId: new Types.ObjectId(),
    statusExtraInfo: { statusCode: 'queued', dateTime: now },
    createdAt: now,
    updatedAt: now,
    ...overrides,
  } as PhoneCallDoc;
}

export function memoryStores() {
  const calls = new Map<string, PhoneCallDoc>();
  /** Provider call ids the API saw in callbacks, by call, newest first. */
  const sightings = new Map<string, string[]>();
  const templates = new Map<string, CallTemplateDoc>();
  const recordings = new Map<string, { token: string; audio: Buffer }>();
  const transcripts = new Map<string, UtteranceRecord[]>();
  const teamWebhooks: WebhookDoc[] = [];
  const attempts: DeliveryAttemptRecord[] = [];
  /** What applyStatusChange answers next (the Mongo store's logic is tested against the database). */
  let nextStatusOutcome: StatusChangeResult['outcome'] = 'applied';

  const callStore: CallStore = {
    async findById(id) {
      return calls.get(String(id)) ?? null;
    },
    async applyStatusChange(change: StatusChange): Promise<StatusChangeResult> {
      const call = calls.get(change.callId);
      if (!call) return { outcome: 'missing' };
      if (nextStatusOutcome === 'skipped') return { outcome: 'skipped', currentStatus: call.status };
      call.status = change.status;
      if (change.results) Object.assign(call, change.results);
      return { outcome: 'applied', call: toReadView(call) };
    },
    async deleteIfQueued(callId) {
      const call = calls.get(callId);
      if (!call) return { outcome: 'missing' };
      if (call.status !== 'queued') return { outcome: 'not-queued', currentStatus: call.status };
      calls.delete(callId);
      return { outcome: 'deleted', call: toReadView(call), ownWebhooks: call.phoneCallWebhooks };
    },
    async setProviderCallId(callId, providerCallId) {
      const call = calls.get(callId);
      if (call) call.providerCallId = providerCallId;
    },
    async sightedProviderCallIds(callId) {
      return sightings.get(callId) ?? [];
    },
    async heldByAnotherCall(call, providerCallId, options) {
      const others = [...calls.values()].filter(
        (c) => !c._id.equals(call._id) && c.teamId.equals(call.teamId) && c.toPhoneNumber === call.toPhoneNumber,
      );
      const recorded = others.some(
        (c) =>
          c.providerCallId === providerCallId || (c.attempts ?? []).some((a) => a.providerCallId === providerCallId),
      );
      const sighted =
        !options?.recordsOnly &&
        [...sightings].some(([id, ids]) => id !== call._id.toHexString() && ids.includes(providerCallId));
      return recorded || sighted;
    },
    async setQueuedStatusCode(callId, statusCode, at) {
      const call = calls.get(callId);
      if (call?.status === 'queued') call.statusExtraInfo = { statusCode, dateTime: at };
    },
    async saveResults(callId, results: CallResults, of: { providerCallId: string | null; attempt?: number }) {
      const call = calls.get(String(callId));
      const ownAttempt =
        (call?.providerCallId == null || call.providerCallId === of.providerCallId) &&
        (of.attempt === undefined || (call?.attempts ?? []).length <= of.attempt);
      if (call && call.status !== 'queued' && ownAttempt) Object.assign(call, results);
    },
  };
  const templateStore: TemplateStore = {
    async findById(id) {
      return templates.get(String(id)) ?? null;
    },
  };
  const conversations: ConversationStore = {
    async saveRecording(call, audio) {
      const key = call._id.toHexString();
      const token = recordings.get(key)?.token ?? `token-${recordings.size + 1}`;
      recordings.set(key, { token, audio });
      return token;
    },
    async remove(call) {
      recordings.delete(call._id.toHexString());
      transcripts.delete(call._id.toHexString());
    },
    async replaceTranscript(call, utterances) {
      transcripts.set(call._id.toHexString(), utterances);
      return utterances.map((u, i) => ({
        _id: transcriptRowId(call._id, i).toHexString(),
        teamId: call.teamId.toHexString(),
        phoneCallId: call._id.toHexString(),
        text: u.text,
        speaker: u.speaker,
        createdAt: u.at.toISOString(),
        updatedAt: u.at.toISOString(),
      }));
    },
  };
  const webhooks: WebhookStore = {
    async forTeam(teamId) {
      return teamWebhooks.filter((hook) => hook.teamId.toHexString() === teamId);
    },
    async recordAttempt(record) {
      attempts.push(record);
    },
  };
  /** Entries by `<teamId> <number>`. */
  const doNotCallEntries = new Map<string, DoNotCallEntryDoc>();
  const doNotCall: DoNotCallStore = {
    async listedAmong(teamId, numbers) {
      return new Set(numbers.filter((n) => doNotCallEntries.has(`${teamId} ${n}`)));
    },
    async add(teamId, entries, listing) {
      let added = 0;
      const stored = entries.map(({ phoneNumber, reason }) => {
        const key = `${teamId} ${phoneNumber}`;
        if (!doNotCallEntries.has(key)) {
          added += 1;
          doNotCallEntries.set(key, {
            _id: new Types.ObjectId(),
            teamId: new Types.ObjectId(teamId),
            phoneNumber,
            reason: reason ?? '',
            source: listing.source,
            keyId: listing.source === 'api' ? new Types.ObjectId(listing.keyId) : null,
            callId: listing.source === 'callee' ? new Types.ObjectId(listing.callId) : null,
            createdAt: new Date(),
          });
        }
        return doNotCallEntries.get(key)!;
      });
      return { entries: stored, added };
    },
  };

  return {
    stores: { calls: callStore, templates: templateStore, conversations, webhooks, doNotCall },
    doNotCallEntries,
    calls,
    sightings,
    templates,
    recordings,
    transcripts,
    teamWebhooks,
    attempts,
    add(template: CallTemplateDoc, call: PhoneCallDoc) {
      templates.set(template._id.toHexString(), template);
      calls.set(call._id.toHexString(), call);
    },
    skipNextStatusChanges() {
      nextStatusOutcome = 'skipped';
    },
  };
}

// After an answered call ends: copy its recording, store its transcript (one record per utterance,
// in spoken order) and fill the conversation's results. Idempotent: a retry rewrites the same data.
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES } from '../src/contracts/failures';
import type { ProviderName } from '../src/contracts/providers';
import { CallTemplate } from '../src/data/models/call-template';
import { PhoneCall } from '../src/data/models/phone-call';
import { Recording } from '../src/data/models/recording';
import { Transcript } from '../src/data/models/transcript';
import { toTranscriptView } from '../src/data/transcript-view';
import { computeCallResults } from '../src/results';
import type { ActivityDeps } from './deps';

export interface CaptureInput {
  callId: string;
  providerCallId: string;
  record: boolean;
  answeredAt: string;
  endedAt: string;
}

export function createCaptureActivities({ config, providers }: Pick<ActivityDeps, 'config' | 'providers'>) {
  return {
    async captureCallOutputs(input: CaptureInput): Promise<{ transcriptEvent: Record<string, unknown> | null }> {
      const call = await PhoneCall.findById(input.callId).lean();
      if (!call) {
        throw ApplicationFailure.create({ type: FAILURES.callRecordMissing, message: `phone call ${input.callId} no longer exists`, nonRetryable: true });
      }
      const template = await CallTemplate.findById(call.callTemplateId).lean();
      const provider = await providers(call.teamId, call.telephonyProvider as ProviderName);

      let recordingUrl: string | undefined;
      if (input.record) {
        const audio = await provider.fetchRecording(input.providerCallId);
        if (audio) {
          const existing = await Recording.findOne({ phoneCallId: call._id }, { token: 1 }).lean();
          const token = existing?.token ?? randomBytes(24).toString('base64url');
          await Recording.updateOne(
            { phoneCallId: call._id },
            { $set: { teamId: call.teamId, token, contentType: 'audio/wav', audio } },
            { upsert: true },
          );
          recordingUrl = `${config.PUBLIC_BASE_URL}/recordings/${token}.wav`;
        }
      }

      const utterances = await provider.fetchTranscript(input.providerCallId);
      const answeredMs = Date.parse(input.answeredAt);
      await Transcript.deleteMany({ phoneCallId: call._id });
      const docs = utterances.map((u, index) => {
        // Strictly increasing times keep spoken order even when two utterances share an offset.
        const at = new Date(answeredMs + Math.round(u.offsetSeconds * 1000) + index);
        return { teamId: call.teamId, phoneCallId: call._id, text: u.text, speaker: u.speaker, sequence: index, createdAt: at, updatedAt: at };
      });
      const stored = docs.length ? await Transcript.insertMany(docs, { lean: false }) : [];

      const results = computeCallResults(
        { customTags: template?.customTags ?? [], resultColumns: template?.resultColumns ?? [] },
        utterances,
        {
          callTime: new Date(input.answeredAt),
          timeZone: template?.timeZone ?? 'UTC',
          nameOfHuman: call.nameOfHuman ?? undefined,
          callDurationSeconds: (Date.parse(input.endedAt) - answeredMs) / 1000,
        },
      );
      await PhoneCall.updateOne(
        { _id: call._id },
        {
          $set: {
            resultValues: results.resultValues,
            customTagsHitOnCall: results.customTagsHitOnCall,
            fixedMeetingTime: results.fixedMeetingTime ? new Date(results.fixedMeetingTime) : null,
            ...(recordingUrl ? { recordingUrl } : {}),
          },
        },
      );
      if (stored.length === 0) return { transcriptEvent: null };
      return {
        transcriptEvent: {
          phoneCallId: input.callId,
          teamId: call.teamId.toHexString(),
          transcripts: stored.map((doc) => toTranscriptView(doc.toObject())),
        },
      };
    },
  };
}

// What an answered call leaves behind: its recording (served by token) and its transcript. Both
// writes are idempotent, so a retried capture rewrites the same data.
import { randomBytes } from 'node:crypto';
import type { Types } from 'mongoose';
import { Recording } from './models/recording';
import { Transcript } from './models/transcript';
import { toTranscriptView, type TranscriptView } from './transcript-view';

export interface CallRef {
  _id: Types.ObjectId;
  teamId: Types.ObjectId;
}

export interface UtteranceRecord {
  text: string;
  speaker: 'agent' | 'human';
  /** When it was said; strictly increasing in spoken order. */
  at: Date;
}

export interface ConversationStore {
  /** Stores (or replaces) the call's recording; answers its token, the same on every retry. */
  saveRecording(call: CallRef, audio: Buffer, contentType: string): Promise<string>;
  /** Replaces the call's transcript with these utterances, in spoken order. */
  replaceTranscript(call: CallRef, utterances: UtteranceRecord[]): Promise<TranscriptView[]>;
}

export function createConversationStore(): ConversationStore {
  return {
    async saveRecording(call, audio, contentType) {
      const existing = await Recording.findOne({ phoneCallId: call._id }, { token: 1 }).lean();
      const token = existing?.token ?? randomBytes(24).toString('base64url');
      await Recording.updateOne(
        { phoneCallId: call._id },
        { $set: { teamId: call.teamId, token, contentType, audio } },
        { upsert: true },
      );
      return token;
    },
    async replaceTranscript(call, utterances) {
      // With the team named, MongoDB reads the (teamId, phoneCallId, ...) index.
      await Transcript.deleteMany({ teamId: call.teamId, phoneCallId: call._id });
      if (utterances.length === 0) return [];
      const docs = utterances.map((u, sequence) => ({
        teamId: call.teamId,
        phoneCallId: call._id,
        text: u.text,
        speaker: u.speaker,
        sequence,
        createdAt: u.at,
        updatedAt: u.at,
      }));
      const stored = await Transcript.insertMany(docs, { lean: false });
      return stored.map((doc) => toTranscriptView(doc.toObject()));
    },
  };
}

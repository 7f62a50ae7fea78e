// What an answered call leaves behind: its recording (served by token) and its transcript. Both
// writes are idempotent, so a retried capture rewrites the same data, and so is one that overlaps
// another (an attempt past its timeout keeps running while Temporal starts the next).
import { createHash, randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import { upsertRacingInserts } from './duplicate-key';
import { Recording } from './models/recording';
import { Transcript, type TranscriptDoc } from './models/transcript';
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
  /** Stores (or replaces) the call's recording; answers its token, the same on every retry and overlapping attempt. */
  saveRecording(call: CallRef, audio: Buffer, contentType: string): Promise<string>;
  /** Replaces the call's transcript with these utterances, in spoken order. */
  replaceTranscript(call: CallRef, utterances: UtteranceRecord[]): Promise<TranscriptView[]>;
  /** Removes the call's recording and transcript (removeConversation). */
  remove(call: CallRef): Promise<void>;
}

export function createConversationStore(): ConversationStore {
  return {
    async saveRecording(call, audio, contentType) {
      // The token is given once, by the write that creates the record, and never changed: overlapping
      // attempts each answer the one stored, so none hands out a URL that another one's write replaced.
      const save = () =>
        Recording.updateOne(
          { phoneCallId: call._id },
          {
            $set: { teamId: call.teamId, contentType, audio },
            $setOnInsert: { token: randomBytes(24).toString('base64url') },
          },
          { upsert: true },
        );
      // Attempts inserting at once: the unique index on the call refuses all but one.
      await upsertRacingInserts(save);
      // Read apart (FerretDB 1.x's findAndModify takes no projection, and would answer the audio too).
      const stored = await Recording.findOne({ phoneCallId: call._id }, { token: 1 }).lean();
      if (!stored) throw new Error(`the recording of call ${call._id.toHexString()} was not stored`);
      return stored.token;
    },
    async replaceTranscript(call, utterances) {
      const docs = utterances.map((u, sequence) => ({
        _id: transcriptRowId(call._id, sequence),
        teamId: call.teamId,
        phoneCallId: call._id,
        text: u.text,
        speaker: u.speaker,
        sequence,
        // Spoken order, given again by every rewrite.
        createdAt: u.at,
        updatedAt: u.at,
      }));
      if (docs.length) await upsertRows(docs);
      // Rows this transcript no longer has: past its end (an attempt that heard more), or under the
      // random ids of releases before these. With the team named, MongoDB reads the (teamId,
      // phoneCallId, ...) index.
      await Transcript.deleteMany({
        teamId: call.teamId,
        phoneCallId: call._id,
        _id: { $nin: docs.map((d) => d._id) },
      });
      return docs.map(toTranscriptView);
    },
    remove: removeConversation,
  };
}

/**
 * Removes what earlier attempts of a deleted call left: a call queued again for its redial may have a
 * recording and a transcript (a voicemail message it left), and deleting the call removes them with
 * it (the recording's URL answers 404, the transcript list no longer has them). Idempotent.
 */
export async function removeConversation(call: CallRef): Promise<void> {
  await Promise.all([
    Recording.deleteOne({ phoneCallId: call._id }),
    // With the team named, MongoDB reads the (teamId, phoneCallId, ...) index.
    Transcript.deleteMany({ teamId: call.teamId, phoneCallId: call._id }),
  ]);
}

/**
 * The id of a call's utterance at `sequence`, the same for every capture attempt: attempts write the
 * same rows, and the ids a `transcript.created` event carried stay. An ObjectId like the API's others:
 * the call's 4-byte creation time, then 8 bytes of a hash of the call and the position.
 */
export function transcriptRowId(phoneCallId: Types.ObjectId, sequence: number): Types.ObjectId {
  const digest = createHash('sha256').update(`${phoneCallId.toHexString()}:${sequence}`).digest();
  return new Types.ObjectId(Buffer.concat([phoneCallId.id.subarray(0, 4), digest.subarray(0, 8)]));
}

/** Writes each row whole by its id; attempts upserting a new row at once race on the unique `_id`. */
async function upsertRows(docs: TranscriptDoc[]): Promise<void> {
  await upsertRacingInserts(() =>
    Transcript.bulkWrite(
      docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } })),
      { ordered: false },
    ),
  );
}

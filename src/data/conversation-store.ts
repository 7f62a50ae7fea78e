// What an answered call leaves behind: its recording (served by token) and its transcript. Both
// writes are idempotent, so a retried capture rewrites the same data, and so is one that overlaps
// another (an attempt past its timeout keeps running while Temporal starts the next).
import { createHash, randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import { upsertRacingInserts } from './duplicate-key';
import { Recording } from './models/recording';
import { RecordingChunk } from './models/recording-chunk';
import { Transcript, type TranscriptDoc } from './models/transcript';
import { forgetTranscriptCounts, registerTranscriptSlices, transcriptListKeys } from './transcript-list';
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
      // A recording too large for one document goes in pieces of a generation of its own, written one
      // at a time, before the recording that names them; the generation it replaced is removed after.
      const chunks = audio.length > RECORDING_CHUNK_BYTES ? splitAudio(audio) : [];
      const gen = randomBytes(8).toString('hex');
      for (const [n, data] of chunks.entries()) {
        await RecordingChunk.create({ phoneCallId: call._id, gen, n, data });
      }
      const content = chunks.length
        ? {
            $set: { teamId: call.teamId, contentType, chunkGen: gen, chunkCount: chunks.length, size: audio.length },
            $unset: { audio: 1 },
          }
        : {
            $set: { teamId: call.teamId, contentType, audio, size: audio.length },
            $unset: { chunkGen: 1, chunkCount: 1 },
          };
      // The token is given once, by the write that creates the record, and never changed: overlapping
      // attempts each answer the one stored, so none hands out a URL that another one's write replaced.
      // Answers the record as it was, for the generation of pieces this write replaced: whole (its
      // audio too, up to RECORDING_CHUNK_BYTES), as FerretDB 1.x's findAndModify takes no projection;
      // only a rewrite has one.
      const save = () =>
        Recording.findOneAndUpdate(
          { phoneCallId: call._id },
          { ...content, $setOnInsert: { token: randomBytes(24).toString('base64url') } },
          { upsert: true, returnDocument: 'before' },
        ).lean();
      // Attempts inserting at once: the unique index on the call refuses all but one.
      const replaced = await upsertRacingInserts(save);
      // Each generation is removed by the write that replaced it, so overlapping writes never remove
      // the one the recording names. (A reader part way through the replaced one may find it gone.)
      if (replaced?.chunkGen) await RecordingChunk.deleteMany({ phoneCallId: call._id, gen: replaced.chunkGen });
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
        ...transcriptListKeys(call.teamId, u.at),
      }));
      // The slices first: a team-wide page finds a row only through its slice.
      const said = docs.map((d) => d.createdAt);
      await registerTranscriptSlices(call, said);
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
  // With the team named, MongoDB reads the (teamId, phoneCallId, ...) index.
  const rows = { teamId: call.teamId, phoneCallId: call._id };
  const slices = await Transcript.find(rows, { listSlice: 1 }).lean<Array<{ listSlice?: string }>>();
  await Promise.all([
    Recording.deleteOne({ phoneCallId: call._id }),
    RecordingChunk.deleteMany({ phoneCallId: call._id }),
    Transcript.deleteMany(rows),
  ]);
  // After the rows: a count is only an estimate, and one left too high costs a read, never a row.
  await forgetTranscriptCounts(
    call._id,
    slices.flatMap((row) => (row.listSlice ? [row.listSlice] : [])),
  );
}

/**
 * The largest recording kept in one document, and the size of each piece of a larger one: well under
 * the 16 MiB a document may hold, with room for the rest of it.
 */
export const RECORDING_CHUNK_BYTES = 8 * 1024 * 1024;

function splitAudio(audio: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < audio.length; at += RECORDING_CHUNK_BYTES)
    chunks.push(audio.subarray(at, at + RECORDING_CHUNK_BYTES));
  return chunks;
}

/** A stored recording's audio, piece by piece (one in memory at a time); throws when a piece is gone. */
export async function* recordingAudio(recording: {
  phoneCallId: Types.ObjectId;
  /** As a lean read answers it (BSON Binary), or a Buffer. */
  audio?: unknown;
  chunkGen?: string | null;
  chunkCount?: number | null;
}): AsyncGenerator<Buffer> {
  if (!recording.chunkCount || !recording.chunkGen) {
    if (recording.audio) yield bytesOf(recording.audio);
    return;
  }
  for (let n = 0; n < recording.chunkCount; n++) {
    const chunk = await RecordingChunk.findOne({
      phoneCallId: recording.phoneCallId,
      gen: recording.chunkGen,
      n,
    }).lean();
    if (!chunk)
      throw new Error(`piece ${n} of the recording of call ${recording.phoneCallId.toHexString()} is missing`);
    yield bytesOf(chunk.data);
  }
}

/** Bytes as a lean read answers them (BSON Binary, whose `buffer` holds them) or as a Buffer. */
function bytesOf(value: unknown): Buffer {
  const binary = value as { buffer?: Uint8Array };
  return Buffer.from(Buffer.isBuffer(value) ? value : (binary.buffer ?? (value as Uint8Array)));
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

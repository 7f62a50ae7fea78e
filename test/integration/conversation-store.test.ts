// A call's transcript as capture attempts write it: overlapping attempts (one past its timeout keeps
// running while Temporal starts the next) and retries leave one row per utterance, under the ids the
// first attempt gave them, listed in spoken order.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import mongoose, { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureIndexes } from '../../src/data/connection';
import {
  createConversationStore,
  RECORDING_CHUNK_BYTES,
  removeConversation,
  type UtteranceRecord,
} from '../../src/data/conversation-store';
import { Recording } from '../../src/data/models/recording';
import { RecordingChunk } from '../../src/data/models/recording-chunk';
import { errorHandler } from '../../src/api/error-handler';
import { createMediaRouter } from '../../src/api/routes/media';
import { Transcript } from '../../src/data/models/transcript';
import { withDatabase } from '../helpers/database-uri';

const store = createConversationStore();
let media: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  await mongoose.connect(withDatabase(inject('mongoUri'), `conversations_${randomBytes(4).toString('hex')}`));
  // The unique indexes the entry points create (a recording's call and token among them).
  await ensureIndexes();
  // The API's media route alone: recordings as their public URLs serve them.
  const app = new Koa().use(errorHandler()).use(createMediaRouter().routes());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  media = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
});
afterAll(async () => {
  await media?.close();
  await mongoose.connection.db?.dropDatabase();
  await mongoose.disconnect();
});

function newCall() {
  return { _id: new Types.ObjectId(), teamId: new Types.ObjectId() };
}

/** `count` utterances a second apart, the agent first. */
function utterances(count: number): UtteranceRecord[] {
  const answeredAt = Date.now() - 60_000;
  return Array.from({ length: count }, (_, i) => ({
    text: `utterance ${i}`,
    speaker: i % 2 === 0 ? 'agent' : 'human',
    at: new Date(answeredAt + i * 1000),
  }));
}

/** The call's rows as GET /v1/transcripts lists them. */
async function listed(call: ReturnType<typeof newCall>) {
  const docs = await Transcript.find({ teamId: call.teamId, phoneCallId: call._id })
    .sort({ createdAt: 1, _id: 1 })
    .lean();
  return docs.map((doc) => ({ _id: doc._id.toHexString(), text: doc.text }));
}

describe('replaceTranscript', () => {
  it('stores one row per utterance when attempts overlap', async () => {
    const call = newCall();
    const spoken = utterances(4);
    const answers = await Promise.all([1, 2, 3].map(() => store.replaceTranscript(call, spoken)));
    const rows = await listed(call);
    expect(rows.map((row) => row.text)).toEqual(spoken.map((u) => u.text));
    for (const answer of answers) expect(answer.map((view) => view._id)).toEqual(rows.map((row) => row._id));
  });

  it('keeps the ids a first attempt answered (and its event carried) on a retry', async () => {
    const call = newCall();
    const spoken = utterances(3);
    const first = await store.replaceTranscript(call, spoken);
    const second = await store.replaceTranscript(call, spoken);
    expect(second).toEqual(first);
    expect(await listed(call)).toEqual(first.map((view) => ({ _id: view._id, text: view.text })));
    // ObjectIds, as every other id the API answers.
    for (const view of first) expect(view._id).toMatch(/^[0-9a-f]{24}$/);
    // Each call's rows are its own.
    const other = await store.replaceTranscript(newCall(), spoken);
    expect(other.map((view) => view._id)).not.toContain(first[0]!._id);
  });

  it('removes what a shorter rewrite no longer has, and rows under ids of an older release', async () => {
    const call = newCall();
    const first = await store.replaceTranscript(call, utterances(5));
    const at = new Date(0);
    const old = { teamId: call.teamId, phoneCallId: call._id, text: 'old', speaker: 'human', sequence: 0 };
    await Transcript.collection.insertOne({ _id: new Types.ObjectId(), ...old, createdAt: at, updatedAt: at });
    const shorter = utterances(2);
    const second = await store.replaceTranscript(call, shorter);
    expect(second.map((view) => view._id)).toEqual(first.slice(0, 2).map((view) => view._id));
    expect(await listed(call)).toEqual(second.map((view) => ({ _id: view._id, text: view.text })));

    await store.replaceTranscript(call, []);
    expect(await listed(call)).toEqual([]);
  });
});

describe('saveRecording', () => {
  /** The audio served under /recordings/<token>.wav, by the media route itself. */
  async function served(token: string) {
    const res = await fetch(`${media.url}/recordings/${token}.wav`);
    return res.status === 200 ? Buffer.from(await res.arrayBuffer()).toString() : null;
  }

  it('answers one token to overlapping first attempts, the one the recording is served under', async () => {
    for (let round = 0; round < 5; round += 1) {
      const call = newCall();
      const tokens = await Promise.all(
        [1, 2, 3].map((attempt) => store.saveRecording(call, Buffer.from(`audio ${attempt}`), 'audio/wav')),
      );
      expect(new Set(tokens).size).toBe(1);
      expect(await served(tokens[0]!)).toMatch(/^audio [123]$/);
      expect(await Recording.countDocuments({ phoneCallId: call._id })).toBe(1);
    }
  });

  it('keeps the token on a retry, with the audio it brings', async () => {
    const call = newCall();
    const first = await store.saveRecording(call, Buffer.from('first'), 'audio/wav');
    const second = await store.saveRecording(call, Buffer.from('second'), 'audio/wav');
    expect(second).toBe(first);
    expect(first).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await served(first)).toBe('second');
  });

  it('keeps a recording too large for one document in pieces, served whole, and removed with the call', async () => {
    // 20 MiB and a little: three pieces (a call of about 22 minutes at 8 kHz). One document refused it.
    const call = newCall();
    const audio = randomBytes(2 * RECORDING_CHUNK_BYTES + RECORDING_CHUNK_BYTES / 2 + 123);
    const token = await store.saveRecording(call, audio, 'audio/wav');
    const head = await Recording.findOne({ token }, { audio: 1, chunkCount: 1, size: 1 }).lean();
    expect(head).toMatchObject({ chunkCount: 3, size: audio.length });
    expect(head!.audio).toBeUndefined();
    const res = await fetch(`${media.url}/recordings/${token}.wav`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('content-length')).toBe(String(audio.length));
    expect(Buffer.from(await res.arrayBuffer()).equals(audio)).toBe(true);

    // A retry with the same audio changes nothing; a later write of a short one (a redial's attempt)
    // keeps the token and leaves no piece behind.
    expect(await store.saveRecording(call, audio, 'audio/wav')).toBe(token);
    expect(await RecordingChunk.countDocuments({ phoneCallId: call._id })).toBe(3);
    expect(await store.saveRecording(call, Buffer.from('short'), 'audio/wav')).toBe(token);
    expect(await served(token)).toBe('short');
    expect(await RecordingChunk.countDocuments({ phoneCallId: call._id })).toBe(0);

    await store.saveRecording(call, audio, 'audio/wav');
    await removeConversation(call);
    expect(await served(token)).toBeNull();
    expect(await RecordingChunk.countDocuments({ phoneCallId: call._id })).toBe(0);
  });

  it('serves one whole recording of two large ones written at once, and keeps only its pieces', async () => {
    // A capture try past its timeout still writing beside the next try (or the next attempt's).
    const call = newCall();
    const [one, two] = [randomBytes(RECORDING_CHUNK_BYTES * 2 + 1), randomBytes(RECORDING_CHUNK_BYTES + 7)];
    const tokens = await Promise.all([one, two].map((audio) => store.saveRecording(call, audio, 'audio/wav')));
    expect(tokens[1]).toBe(tokens[0]);
    const res = await fetch(`${media.url}/recordings/${tokens[0]}.wav`);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(one) || body.equals(two)).toBe(true);
    const head = await Recording.findOne({ phoneCallId: call._id }, { chunkGen: 1, chunkCount: 1 }).lean();
    const pieces = await RecordingChunk.find({ phoneCallId: call._id }, { gen: 1 }).lean();
    expect(pieces.map((p) => p.gen)).toEqual(Array.from({ length: head!.chunkCount! }, () => head!.chunkGen));
  });
});

// GET /v1/transcripts without `phoneCallId`: a team's utterances in spoken order, read through time
// slices (src/data/transcript-list.ts), paged with cursors at every page size into exactly the order
// one sort of all the team's rows gives: rows in one slice and in neighbouring ones, on days months
// apart, at the same instant in two calls (then by `_id`), a busy slice read by its minutes, rows stored
// before slices existed (placed by the backfill), a deleted call's rows gone, another team's never
// shown.
import mongoose, { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConversationStore, removeConversation, type UtteranceRecord } from '../../src/data/conversation-store';
import { Transcript } from '../../src/data/models/transcript';
import { TranscriptSlice } from '../../src/data/models/transcript-slice';
import { backfillTranscriptSlices } from '../../src/data/transcript-list-backfill';
import { TRANSCRIPT_SLICE_MS } from '../../src/data/transcript-list';
import { apiClient } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
const store = createConversationStore();

beforeAll(async () => {
  stack = await startTestStack();
  await stack.stopWorker();
  api = apiClient(stack.baseUrl, stack.team.key);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

interface Row {
  _id: string;
  teamId: string;
  phoneCallId: string;
  text: string;
  createdAt: string;
}

/** Every row the API lists for the team, page by page at `limit`. */
async function listAll(limit: number): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1_000; page++) {
    const res = await api.get(`/v1/transcripts?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    rows.push(...(res.body.data as Row[]));
    cursor = res.body.nextCursor as string | null;
    if (!cursor) return rows;
    expect(res.body.data).toHaveLength(limit);
  }
  throw new Error('the pages did not end');
}

/** The team's rows as one sort of all of them orders them (`createdAt`, then `_id`). */
async function expectedOrder(teamId: string): Promise<string[]> {
  const rows = await Transcript.find({ teamId }).lean();
  return rows
    .sort(
      (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a._id.toHexString() < b._id.toHexString() ? -1 : 1),
    )
    .map((row) => row._id.toHexString());
}

function said(times: Date[]): UtteranceRecord[] {
  return times.map((at, i) => ({ text: `said at ${at.toISOString()}`, speaker: i % 2 ? 'human' : 'agent', at }));
}

describe('a team-wide transcript page', () => {
  it('pages in spoken order across slices, days and months, with ties ordered by _id', async () => {
    const teamId = new Types.ObjectId(stack.team.teamId);
    const call = () => ({ _id: new Types.ObjectId(), teamId });
    // A slice boundary, with calls on both sides of it and in it.
    const edge = Math.ceil(Date.now() / TRANSCRIPT_SLICE_MS) * TRANSCRIPT_SLICE_MS - 400 * 86_400_000;
    const at = (ms: number) => new Date(edge + ms);
    const tied = at(5_000);
    const calls = [
      [at(-3_000), at(-1_000), at(1_000), at(3_000)], // across the boundary
      [at(-2_000), tied, at(7_000)], // between the first call's rows, one at the same instant as the next
      [tied, at(8_000)],
      [at(86_400_000 * 2), at(86_400_000 * 2 + 1)], // two days later
      [at(86_400_000 * 120), at(86_400_000 * 120 + TRANSCRIPT_SLICE_MS * 3)], // months later, three slices apart
      Array.from({ length: 30 }, (_, i) => at(86_400_000 * 300 + i * 20_000)), // a long one, over slices
      [new Date(Date.UTC(2026, 1, 1) - 1), new Date(Date.UTC(2026, 1, 1))], // the last instant of January, the first of February
    ];
    // A campaign's busy ten minutes: three calls of 400 rows each in one slice, read minute by minute.
    const busy = Math.floor((edge + 86_400_000 * 200) / TRANSCRIPT_SLICE_MS) * TRANSCRIPT_SLICE_MS;
    for (const offset of [0, 1_000, 2_000])
      calls.push(Array.from({ length: 400 }, (_, i) => new Date(busy + offset + i * 1_500)));
    for (const times of calls) await store.replaceTranscript(call(), said(times));
    // Another team's rows, in the same slices' times: never listed.
    await store.replaceTranscript({ _id: new Types.ObjectId(), teamId: new Types.ObjectId() }, said([at(0), tied]));

    const expected = await expectedOrder(stack.team.teamId);
    expect(expected).toHaveLength(1245);
    const reads: Array<Record<string, unknown>> = [];
    mongoose.set('debug', (collection: string, method: string, filter: unknown) => {
      if (collection === Transcript.collection.collectionName && method === 'find')
        reads.push(filter as Record<string, unknown>);
    });
    try {
      for (const limit of [7, 43, 100, 1000]) {
        const listed = await listAll(limit);
        expect(
          listed.map((row) => row._id),
          `limit ${limit}`,
        ).toEqual(expected);
        expect(new Set(listed.map((row) => row.teamId))).toEqual(new Set([stack.team.teamId]));
      }
    } finally {
      mongoose.set('debug', false);
    }
    // Every read named one key (and the team): quiet days whole, the busy slice by its minutes.
    expect(
      reads.every((filter) => Object.keys(filter).length === 2 && String(filter.teamId) === stack.team.teamId),
    ).toBe(true);
    expect(reads.some((filter) => 'listDay' in filter)).toBe(true);
    expect(reads.some((filter) => 'listMinute' in filter)).toBe(true);
    expect(reads.some((filter) => 'listSlice' in filter)).toBe(true);
    // The two rows at the same instant, both listed, by `_id`.
    const atTie = (await listAll(100)).filter((row) => row.createdAt === tied.toISOString());
    expect(atTie).toHaveLength(2);
    expect(atTie[0]!._id < atTie[1]!._id).toBe(true);
  });

  it('lists rows stored before slices once placed, and no longer a deleted call’s', async () => {
    const teamId = new Types.ObjectId(stack.team.teamId);
    const before = await expectedOrder(stack.team.teamId);
    // Rows as the release before wrote them: no slice key, no slices registered.
    const oldCall = new Types.ObjectId();
    const old = [0, 1, 2].map((i) => ({
      _id: new Types.ObjectId(),
      teamId,
      phoneCallId: oldCall,
      text: `older release ${i}`,
      speaker: 'agent',
      sequence: i,
      createdAt: new Date(Date.now() - 1_000_000 * (5 - i)),
      updatedAt: new Date(),
    }));
    await Transcript.collection.insertMany(old);
    expect((await listAll(100)).map((row) => row._id)).toEqual(before);
    await mongoose.connection.collection('migrations').deleteOne({ _id: 'transcriptListSlices' as never });
    expect(await backfillTranscriptSlices()).toBe(3);
    expect(await backfillTranscriptSlices()).toBe(0); // the marker is written
    const withOld = await expectedOrder(stack.team.teamId);
    expect(withOld).toHaveLength(before.length + 3);
    expect((await listAll(50)).map((row) => row._id)).toEqual(withOld);

    // A deleted call's rows leave the list, and its counts their slices.
    await removeConversation({ _id: oldCall, teamId });
    expect((await listAll(60)).map((row) => row._id)).toEqual(before);
    const counted = await TranscriptSlice.find({ [`counts.${oldCall.toHexString()}`]: { $exists: true } }).lean();
    expect(counted).toEqual([]);
  });
});

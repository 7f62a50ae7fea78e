// Blocks of list positions (src/data/call-list-positions.ts) when API processes race for them: each
// position goes to one creator only, on FerretDB too, whose conditional updates are not atomic; and a
// page shows every call of every block, also of blocks the team's counter does not show yet.
import { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeCursor } from '../../src/api/pagination';
import { createDispatcher } from '../../src/calls/dispatch';
import { startReconciler } from '../../src/calls/reconciler';
import { sweepListBlocks } from '../../src/data/call-list-block-sweep';
import {
  KNOWN_TIP_TRUSTED_MS,
  allocateListBlock,
  followListBlocks,
  forgetKnownListTips,
  listBlockId,
  parseListBlockId,
  type ListBlock,
} from '../../src/data/call-list-positions';
import { CallListBlock, LIST_BLOCK_KEPT_MS } from '../../src/data/models/call-list-block';
import { CallListCounter } from '../../src/data/models/call-list-counter';
import { PhoneCall } from '../../src/data/models/phone-call';
import { createLogger } from '../../src/logger';
import { seedCalls, seededRandom } from '../helpers/call-population';
import { apiClient, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
const templates = [new Types.ObjectId().toHexString()];
const numbers = [new Types.ObjectId().toHexString()];

beforeAll(async () => {
  stack = await startTestStack();
  await stack.stopWorker(); // records only: no workflow is started here
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

/** Blocks ordered by position: each must start right after the one before, at a later time. */
function expectOneChain(blocks: Array<ListBlock & { count: number }>) {
  const sorted = [...blocks].sort((a, b) => a.first - b.first);
  let next = 1;
  let before = -Infinity;
  for (const block of sorted) {
    expect(block.first).toBe(next);
    expect(block.at.getTime()).toBeGreaterThan(before);
    next = block.first + block.count;
    before = block.at.getTime();
  }
  return next - 1;
}

/** The ids of every call listed, page after page of `limit`, following the cursors. */
async function everyPage(api: ReturnType<typeof apiClient>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await api.get(`/v1/phoneCalls?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    ids.push(...(res.body.data as Array<{ _id: string }>).map((call) => call._id));
    cursor = res.body.nextCursor as string | null;
  } while (cursor);
  return ids;
}

describe('list positions taken by racing creators', () => {
  it('gives every position to one block only, each block later than the one below it', async () => {
    const team = new Types.ObjectId();
    // 24 creators at once, as API processes each taking a block of a few positions, twice in a row.
    const race = () =>
      Promise.all(
        Array.from({ length: 24 }, async (_, index) => {
          const count = 1 + (index % 5);
          return { ...(await allocateListBlock(team, count)), count };
        }),
      );
    const blocks = [...(await race()), ...(await race())];
    const last = expectOneChain(blocks);
    expect(last).toBe(2 * [...Array(24).keys()].reduce((sum, index) => sum + 1 + (index % 5), 0));
    // The counter is where reads start, and they follow the chain from it to the newest block. On
    // FerretDB 1.x two racing conditional writes of it can both land, an older block's last (its
    // update reads, then writes the whole document): it may stay behind, never past the chain's end.
    const counter = await CallListCounter.findById(team).lean();
    expect(counter?.min).toBe(1);
    expect(counter!.seq).toBeLessThanOrEqual(last);
    expect((await followListBlocks(team.toHexString(), { seq: counter!.seq, at: counter!.at })).seq).toBe(last);
  });

  it('refuses a block of no positions, which would end where it starts', async () => {
    const team = new Types.ObjectId();
    await expect(allocateListBlock(team, 0)).rejects.toThrow(RangeError);
    expect(await CallListBlock.exists({ _id: listBlockId(team.toHexString(), 1) })).toBeNull();
  });

  it('continues after the counter of a team whose positions were taken before blocks existed', async () => {
    const team = new Types.ObjectId();
    const at = new Date(Date.now() + 60_000); // a clock ahead: the next block is later still
    await CallListCounter.create({ _id: team, seq: 500, at, min: -20 });
    const block = await allocateListBlock(team, 3);
    expect(block.first).toBe(501);
    expect(block.at.getTime()).toBeGreaterThan(at.getTime());
    expect(await CallListCounter.findById(team).lean()).toMatchObject({ seq: 503, at: block.at, min: -20 });
  });

  it('lists the calls of blocks the counter does not show yet, and places the next create after them', async () => {
    const team = await stack.seedTeam('Counter behind');
    const api = apiClient(stack.baseUrl, team.key);
    const base = { templateIds: templates, phoneNumberIds: numbers, numbers: 5, teamId: team.teamId };
    const created = await seedCalls({ ...base, random: seededRandom(3), count: 30, maxBlock: 4 });
    const newestFirst = [...created].reverse().map((id) => id.toHexString());
    // The counter put back to the first block's end: what a reader sees while the creator of a later
    // block is between its block and its counter write, or after FerretDB let an older counter write
    // land over a newer one.
    const teamId = new Types.ObjectId(team.teamId);
    const firstCall = await PhoneCall.findById(created[0]).lean();
    const firstBlockEnd = await PhoneCall.countDocuments({ teamId, createdAt: firstCall!.createdAt });
    await CallListCounter.updateOne({ _id: teamId }, { $set: { seq: firstBlockEnd, at: firstCall!.createdAt } });

    const whole = await api.get('/v1/phoneCalls?limit=100');
    expect(whole.status).toBe(200);
    expect((whole.body.data as Array<{ _id: string }>).map((call) => call._id)).toEqual(newestFirst);
    // Later than every call: the search for the time's position must not stop at the counter's time.
    const before = await api.get(`/v1/phoneCalls?limit=100&createdBefore=${new Date(Date.now() + 1000).toISOString()}`);
    expect((before.body.data as Array<{ _id: string }>).map((call) => call._id)).toEqual(newestFirst);
    expect(await everyPage(api, 7)).toEqual(newestFirst);

    // The next create takes the positions after the newest block, not after the counter's, also in a
    // process that has not created for the team before (it starts from the counter).
    forgetKnownListTips();
    const positions = (await PhoneCall.find({ teamId }, { listSeq: 1 }).lean()).map((call) => call.listSeq!);
    const [next] = await seedCalls({ ...base, random: seededRandom(4), count: 1, maxBlock: 1 });
    const placed = await PhoneCall.findById(next).lean();
    expect(placed!.listSeq).toBe(Math.max(...positions) + 1);
    expect((await CallListCounter.findById(teamId).lean())?.seq).toBe(placed!.listSeq);
    const after = await api.get('/v1/phoneCalls?limit=1');
    expect((after.body.data as Array<{ _id: string }>).map((call) => call._id)).toEqual([next!.toHexString()]);
  });

  it('does not start a walk at a position past the newest block that a cursor makes up', async () => {
    const team = await stack.seedTeam('Made-up cursor');
    const api = apiClient(stack.baseUrl, team.key);
    const base = { templateIds: templates, phoneNumberIds: numbers, numbers: 5, teamId: team.teamId };
    const created = await seedCalls({ ...base, random: seededRandom(5), count: 5, maxBlock: 2 });
    const far = encodeCursor({ at: new Date(Date.now() + 60_000), id: new Types.ObjectId().toHexString(), seq: 9e11 });
    const res = await api.get(`/v1/phoneCalls?limit=10&cursor=${far}`);
    expect(res.status).toBe(200);
    expect((res.body.data as Array<{ _id: string }>).map((call) => call._id)).toEqual(
      [...created].reverse().map((id) => id.toHexString()),
    );
  });

  it('looks a block up by its key through an index (explain): a first page reads the one after the counter', async () => {
    const team = new Types.ObjectId();
    await allocateListBlock(team, 1);
    const id = listBlockId(team.toHexString(), 1);
    expect(await CallListBlock.exists({ _id: id })).toBeTruthy();
    const plan = await CallListBlock.collection.find({ _id: id as never }).explain('queryPlanner');
    const text = JSON.stringify(plan);
    if ((plan as { serverInfo?: { ferretdbVersion?: string } }).serverInfo?.ferretdbVersion) {
      expect(text).toMatch(/"Index Name":"calllistblocks_[0-9a-f]{8}__id_oco_gin"/);
      expect(text).not.toContain('Seq Scan');
    } else {
      expect(text).toMatch(/IDHACK|IXSCAN/);
    }
  });
});

describe('old list blocks removed', () => {
  const DAY = 24 * 60 * 60 * 1000;
  const block = (team: Types.ObjectId, first: number, count: number, agoMs: number) => ({
    _id: listBlockId(team.toHexString(), first),
    count,
    at: new Date(Date.now() - agoMs),
  });
  const kept = async (team: Types.ObjectId) =>
    (await CallListBlock.find({ _id: new RegExp(`^${team.toHexString()}:`) }, { _id: 1 }).lean())
      .map((doc) => parseListBlockId(doc._id).first)
      .sort((a, b) => a - b);

  it('removes blocks a day old that the counter has passed, and keeps those past it or younger', async () => {
    const team = new Types.ObjectId();
    const noCounter = new Types.ObjectId();
    await CallListBlock.create([
      block(team, 1, 2, 3 * DAY),
      block(team, 3, 3, 2 * DAY),
      // Past the counter: a counter write that FerretDB let an older one overwrite, no create since.
      block(team, 6, 1, LIST_BLOCK_KEPT_MS + 60_000),
      block(team, 7, 2, 60_000),
      // A team whose first create stopped between its block and its counter.
      block(noCounter, 1, 4, 3 * DAY),
    ]);
    await CallListCounter.create({ _id: team, seq: 5, at: new Date(Date.now() - 2 * DAY), min: 1 });

    const sweep = await sweepListBlocks();
    expect(sweep.removed).toBeGreaterThanOrEqual(2);
    expect(await kept(team)).toEqual([6, 7]);
    expect(await kept(noCounter)).toEqual([1]);
    // A process that knows nothing of the team starts from the counter and follows what is left.
    forgetKnownListTips();
    expect((await allocateListBlock(team, 1)).first).toBe(9);
    expect((await allocateListBlock(noCounter, 1)).first).toBe(5);
  });

  it("lists every call and places the next one after them once a team's old blocks are gone", async () => {
    const team = await stack.seedTeam('Blocks swept');
    const api = apiClient(stack.baseUrl, team.key);
    const base = { templateIds: templates, phoneNumberIds: numbers, numbers: 5, teamId: team.teamId };
    const created = await seedCalls({ ...base, random: seededRandom(6), count: 25, maxBlock: 4 });
    const teamId = new Types.ObjectId(team.teamId);
    // Two days on, every block of the team is old and at or below its counter.
    await sweepListBlocks(new Date(Date.now() + 2 * DAY));
    expect(await kept(teamId)).toEqual([]);

    expect(await everyPage(api, 6)).toEqual([...created].reverse().map((id) => id.toHexString()));
    forgetKnownListTips();
    const [next] = await seedCalls({ ...base, random: seededRandom(7), count: 1, maxBlock: 1 });
    expect((await PhoneCall.findById(next).lean())!.listSeq).toBe(26);
  });

  it("is the worker's reconciler's work, from its first pass on", async () => {
    const team = new Types.ObjectId();
    await CallListBlock.create([block(team, 1, 3, 2 * DAY), block(team, 4, 1, 60_000)]);
    await CallListCounter.create({ _id: team, seq: 4, at: new Date(), min: 1 });
    const stop = startReconciler({
      dispatcher: createDispatcher({ client: stack.temporal, config: stack.config }),
      logger: createLogger('silent', 'test'),
      afterSeconds: 8, // passes 2 s apart
    });
    try {
      await eventually(async () => ((await kept(team)).length === 1 ? true : undefined), 20_000, 'the sweep');
      expect(await kept(team)).toEqual([4]);
    } finally {
      await stop();
    }
  });

  it('trusts the tip a process remembers for minutes only, so a removed block is never taken again', async () => {
    const team = new Types.ObjectId();
    expect((await allocateListBlock(team, 2)).first).toBe(1); // this process now remembers the tip 2
    // Another API process takes 3..5 and moves the counter there.
    await CallListBlock.create(block(team, 3, 3, 0));
    await CallListCounter.updateOne({ _id: team }, { $set: { seq: 5 } });
    // Two days later both blocks are old and passed by the counter, and are removed.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2 * DAY });
    try {
      expect(Date.now() - 2 * DAY).toBeGreaterThan(KNOWN_TIP_TRUSTED_MS);
      await sweepListBlocks();
      expect(await kept(team)).toEqual([]);
      // The remembered tip (2) is too old to trust: the next block starts after the counter, not at 3,
      // whose block is no longer there to refuse it.
      expect((await allocateListBlock(team, 1)).first).toBe(6);
    } finally {
      vi.useRealTimers();
    }
  });
});

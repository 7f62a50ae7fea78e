// Blocks of list positions (src/data/call-list-positions.ts) when API processes race for them: each
// position goes to one creator only, on FerretDB too, whose conditional updates are not atomic; and a
// page shows every call of every block, also of blocks the team's counter does not show yet.
import { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/api/pagination';
import {
  allocateListBlock,
  forgetKnownListTips,
  listBlockId,
  type ListBlock,
} from '../../src/data/call-list-positions';
import { CallListBlock } from '../../src/data/models/call-list-block';
import { CallListCounter } from '../../src/data/models/call-list-counter';
import { PhoneCall } from '../../src/data/models/phone-call';
import { seedCalls, seededRandom } from '../helpers/call-population';
import { apiClient } from '../helpers/http';
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
    // The counter ends at the newest block, whichever write of it came last.
    const counter = await CallListCounter.findById(team).lean();
    expect({ seq: counter?.seq, min: counter?.min }).toEqual({ seq: last, min: 1 });
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
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api.get(`/v1/phoneCalls?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      paged.push(...(res.body.data as Array<{ _id: string }>).map((call) => call._id));
      cursor = res.body.nextCursor as string | null;
    } while (cursor);
    expect(paged).toEqual(newestFirst);

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

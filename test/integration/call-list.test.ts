// GET /v1/phoneCalls read as slices of list positions (src/data/call-list-query.ts): every filter,
// page size and cursor gives exactly the order of a full sort (createdAt desc, _id desc) over a team
// of thousands of calls made by creates of every size, with calls deleted, another team beside it,
// calls stored before positions existed, and calls created while a client pages. And each read the
// walk makes is an index lookup on the store (explain), never a scan of the team.
import mongoose, { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { backfillListPositions } from '../../src/data/call-list-backfill';
import { forgetMatchCounts } from '../../src/data/call-list-match-counts';
import { LIST_SLICE_SIZES, listFields } from '../../src/data/call-list-positions';
import { CallListCounter } from '../../src/data/models/call-list-counter';
import { PhoneCall } from '../../src/data/models/phone-call';
import { seedCalls, seededRandom } from '../helpers/call-population';
import { apiClient } from '../helpers/http';
import { startTestStack, type SeededTeam, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
let team: SeededTeam;
const templates = [new Types.ObjectId().toHexString(), new Types.ObjectId().toHexString()];
const numbers = [new Types.ObjectId().toHexString(), new Types.ObjectId().toHexString()];

interface Row {
  _id: Types.ObjectId;
  createdAt: Date;
  status: string;
  callTemplateId: Types.ObjectId;
  phoneNumberId: Types.ObjectId;
  toPhoneNumber: string;
  fileId?: string;
}

beforeAll(async () => {
  stack = await startTestStack();
  await stack.stopWorker(); // records only: no workflow is started here
  team = await stack.seedTeam('Lists');
  api = apiClient(stack.baseUrl, team.key);
  const random = seededRandom(16);
  const other = await stack.seedTeam('Neighbours');
  const base = { templateIds: templates, phoneNumberIds: numbers, numbers: 40, random };
  // Calls made before list positions existed: written without them, then placed as an upgrade would.
  const legacy = await seedCalls({ ...base, teamId: team.teamId, count: 150, maxBlock: 40 });
  await PhoneCall.collection.updateMany({ _id: { $in: legacy } }, { $unset: { listSeq: 1, listKeys: 1 } });
  await CallListCounter.deleteOne({ _id: new Types.ObjectId(team.teamId) });
  await mongoose.connection.collection('migrations').deleteMany({});
  expect(await backfillListPositions()).toBe(150);
  for (let round = 0; round < 6; round++) {
    await seedCalls({ ...base, teamId: team.teamId, count: 400, maxBlock: round % 2 ? 300 : 3 });
    await seedCalls({ ...base, teamId: other.teamId, count: 100, maxBlock: 50 });
  }
  // Holes: deleted calls leave their positions empty.
  const some = await PhoneCall.find({ teamId: team.teamId }, { _id: 1 }).limit(300).lean();
  await PhoneCall.deleteMany({ _id: { $in: some.filter((_, i) => i % 3 === 0).map((d) => d._id) } });
}, 240_000);
afterAll(async () => {
  await stack?.stop();
});

const newestFirst = (a: Row, b: Row) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a._id.toHexString() < b._id.toHexString() ? 1 : -1);

async function allOfTeam(): Promise<Row[]> {
  const rows = await PhoneCall.collection.find({ teamId: new Types.ObjectId(team.teamId) }).toArray();
  return (rows as unknown as Row[]).sort(newestFirst);
}

async function pageThrough(query: Record<string, string>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 2_000; pages++) {
    const params = new URLSearchParams({ ...query, limit: String(limit), ...(cursor && { cursor }) });
    const res = await api.get(`/v1/phoneCalls?${params.toString()}`);
    expect(res.status).toBe(200);
    const data = res.body.data as Array<{ _id: string }>;
    expect(data.length).toBeLessThanOrEqual(limit);
    ids.push(...data.map((call) => call._id));
    cursor = res.body.nextCursor as string | null;
    if (!cursor) return ids;
    expect(data).toHaveLength(limit);
  }
  throw new Error('too many pages');
}

/**
 * Records every find on the calls collection (each read a page makes) until restored: its filter, its
 * limit and how many calls it returned, and how many reads were under way at most at once.
 */
function recordFinds() {
  const collection = PhoneCall.collection;
  const find = collection.find.bind(collection);
  const filters: Array<Record<string, unknown>> = [];
  /** Each read's limit (a slice read that stops early has one) and how many calls it returned. */
  const returned: Array<{ limit?: number; calls: number }> = [];
  const reads = { inFlight: 0, most: 0 };
  const spy = vi.spyOn(collection, 'find').mockImplementation(((...args: Parameters<typeof find>) => {
    filters.push(args[0] as Record<string, unknown>);
    const limit = (args[1] as { limit?: number } | undefined)?.limit;
    const cursor = find(...args);
    const toArray = cursor.toArray.bind(cursor);
    cursor.toArray = async () => {
      reads.inFlight++;
      reads.most = Math.max(reads.most, reads.inFlight);
      try {
        const docs = await toArray();
        returned.push({ limit, calls: docs.length });
        return docs;
      } finally {
        reads.inFlight--;
      }
    };
    return cursor;
  }) as typeof collection.find);
  return { filters, returned, reads, spy };
}

describe('GET /v1/phoneCalls over list slices', () => {
  it('pages through every filter in exactly the order of a full sort', async () => {
    const all = await allOfTeam();
    expect(all.length).toBeGreaterThan(2_400);
    const times = all.map((row) => row.createdAt.getTime());
    const middle = new Date(times[Math.floor(times.length / 2)]!).toISOString();
    const late = new Date(times[Math.floor(times.length / 5)]!).toISOString();
    // The newest call's time is the counter's: a later time needs no search, an equal one does.
    const newest = new Date(times[0]!).toISOString();
    const afterNewest = new Date(times[0]! + 1).toISOString();
    const oldest = new Date(times[times.length - 1]!).toISOString();
    const someNumber = all[7]!.toPhoneNumber;
    const someFile = all.find((row) => row.fileId)!.fileId!;
    const cases: Array<[Record<string, string>, (row: Row) => boolean, number[]]> = [
      [{}, () => true, [100, 1000, 37]],
      [{ status: 'completed' }, (r) => r.status === 'completed', [100, 333]],
      [{ status: 'failed' }, (r) => r.status === 'failed', [5, 100]],
      [{ status: 'cancelled' }, (r) => r.status === 'cancelled', [1, 100]],
      [{ status: 'ringing' }, (r) => r.status === 'ringing', [100]],
      [{ callTemplateId: templates[1]! }, (r) => r.callTemplateId.toHexString() === templates[1], [100, 1000]],
      [{ phoneNumberId: numbers[0]! }, (r) => r.phoneNumberId.toHexString() === numbers[0], [250]],
      [{ toPhoneNumber: someNumber }, (r) => r.toPhoneNumber === someNumber, [3, 100]],
      [{ fileId: someFile }, (r) => r.fileId === someFile, [10, 100]],
      [{ createdBefore: middle }, (r) => r.createdAt.getTime() < Date.parse(middle), [100, 1000]],
      [{ createdBefore: afterNewest }, () => true, [500]],
      [{ createdBefore: newest }, (r) => r.createdAt.getTime() < Date.parse(newest), [500]],
      [{ createdBefore: oldest }, () => false, [100]],
      [{ createdAfter: middle }, (r) => r.createdAt.getTime() > Date.parse(middle), [100]],
      [
        { createdAfter: middle, createdBefore: late, status: 'busy' },
        (r) =>
          r.createdAt.getTime() > Date.parse(middle) && r.createdAt.getTime() < Date.parse(late) && r.status === 'busy',
        [7, 100],
      ],
    ];
    for (const [query, keep, limits] of cases) {
      const expected = all.filter(keep).map((row) => row._id.toHexString());
      for (const limit of limits) {
        expect({ query, limit, ids: await pageThrough(query, limit) }).toEqual({ query, limit, ids: expected });
      }
    }
  });

  it('reads the slice below while it waits for the one above, and the page stays exact', async () => {
    // Every read of a call page goes through the collection's find: count the reads in flight.
    const { filters, reads, spy } = recordFinds();
    try {
      forgetMatchCounts();
      const res = await api.get('/v1/phoneCalls?limit=100&status=completed');
      expect(res.status).toBe(200);
      const expected = (await allOfTeam()).filter((row) => row.status === 'completed').sort(newestFirst);
      expect(res.body.data.map((call: { _id: string }) => call._id)).toEqual(
        expected.slice(0, 100).map((row) => row._id.toHexString()),
      );
      expect(filters.length).toBeGreaterThan(2);
      expect(reads.most).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('climbs to large slices for a rare filter through slices that reach above where the walk stands', async () => {
    const { filters, spy } = recordFinds();
    try {
      forgetMatchCounts();
      const res = await api.get('/v1/phoneCalls?limit=100&status=failed');
      expect(res.status).toBe(200);
      const expected = (await allOfTeam()).filter((row) => row.status === 'failed');
      expect(res.body.data.map((call: { _id: string }) => call._id)).toEqual(
        expected.slice(0, 100).map((row) => row._id.toHexString()),
      );
      // A slice key names its level (`<team>:<level>:<slice>`); a slice aligned below the walk's
      // position ends at a multiple of its size. One of a larger level ends above that position.
      const unaligned = filters.filter((filter) => {
        const key = filter.listKeys as string | undefined;
        const below = (filter.listSeq as { $lt?: number } | undefined)?.$lt;
        if (!key || below === undefined) return false;
        const level = Number(key.split(':')[1]);
        return level > 0 && below % LIST_SLICE_SIZES[level]! !== 0;
      });
      expect(unaligned.length).toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
    }
  });

  it('walks a filter matching more than a page, the next walk starting as large as the count it left', async () => {
    const busy = (await allOfTeam()).filter((row) => row.status === 'busy').map((row) => row._id.toHexString());
    // More than a page of 100 (+1), fewer than two: one read would decode every one of them.
    expect(busy.length).toBeGreaterThan(101);
    expect(busy.length).toBeLessThanOrEqual(202);
    const { filters, spy } = recordFinds();
    try {
      forgetMatchCounts();
      for (const walk of ['first', 'second']) {
        filters.length = 0;
        const res = await api.get('/v1/phoneCalls?limit=100&status=busy');
        expect(res.status).toBe(200);
        expect(res.body.data.map((call: { _id: string }) => call._id)).toEqual(busy.slice(0, 100));
        // Every read a slice of the walk (a one-read names no slice).
        expect({ walk, reads: filters.filter((filter) => !filter.listKeys) }).toEqual({ walk, reads: [] });
        const firstLevel = Number(String(filters[0]!.listKeys).split(':')[1]);
        // Nothing known: the smallest slice first. Then the count left: a slice expected to hold most of the page.
        if (walk === 'first') expect(firstLevel).toBe(0);
        else expect(firstLevel).toBeGreaterThanOrEqual(3);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it("starts a walk at the filter's density as counted, though the team has since grown tenfold", async () => {
    const grown = await stack.seedTeam('Grown');
    const grownApi = apiClient(stack.baseUrl, grown.key);
    const population = { templateIds: templates, phoneNumberIds: numbers, numbers: 40, random: seededRandom(7) };
    await seedCalls({ ...population, teamId: grown.teamId, count: 500, maxBlock: 50 });
    forgetMatchCounts();
    // The walk leaves its count of completed calls, over the team's 500 positions.
    expect((await grownApi.get('/v1/phoneCalls?limit=100&status=completed')).status).toBe(200);
    await seedCalls({ ...population, teamId: grown.teamId, count: 4_500, maxBlock: 500 });
    const { returned, spy } = recordFinds();
    try {
      const res = await grownApi.get('/v1/phoneCalls?limit=100&status=completed');
      expect(res.status).toBe(200);
      const completed = await PhoneCall.collection
        .find({ teamId: new Types.ObjectId(grown.teamId), status: 'completed' })
        .toArray();
      expect(res.body.data.map((call: { _id: string }) => call._id)).toEqual(
        (completed as unknown as Row[])
          .sort(newestFirst)
          .slice(0, 100)
          .map((row) => row._id.toHexString()),
      );
      // Taken over the 5,000 positions now, the count would say a tenth of the calls match: the walk
      // would read large slices expecting few, meet three times that, and read them again smaller.
      expect(returned.filter((read) => read.limit !== undefined && read.calls >= read.limit)).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps pages consistent while calls are created, and finds a cursor of the earlier form by its call', async () => {
    const before = (await allOfTeam()).map((row) => row._id.toHexString());
    const ids: string[] = [];
    let cursor: string | null = null;
    const random = seededRandom(7);
    do {
      const res = await api.get(`/v1/phoneCalls?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      ids.push(...(res.body.data as Array<{ _id: string }>).map((call) => call._id));
      cursor = res.body.nextCursor as string | null;
      await seedCalls({
        templateIds: templates,
        phoneNumberIds: numbers,
        numbers: 40,
        random,
        teamId: team.teamId,
        count: 60,
        maxBlock: 30,
      });
    } while (cursor);
    expect(ids).toEqual(before);

    // A cursor without a list position (as issued before positions) still continues where it ended.
    const first = await api.get('/v1/phoneCalls?limit=50');
    const [time, id] = (first.body.nextCursor as string).split('.');
    const next = await api.get(`/v1/phoneCalls?limit=50&cursor=${time}.${id}`);
    const nextWithPosition = await api.get(`/v1/phoneCalls?limit=50&cursor=${first.body.nextCursor as string}`);
    expect(next.body.data).toEqual(nextWithPosition.body.data);
    expect(next.body.data).toHaveLength(50);
  });

  it('places concurrent creates of one team in one block at a time, in the order of a full sort', async () => {
    const random = seededRandom(23);
    const base = { templateIds: templates, phoneNumberIds: numbers, numbers: 40, random, teamId: team.teamId };
    // Six creators at once, each a run of small creates (files among them, the same file names in each).
    const created = (
      await Promise.all(Array.from({ length: 6 }, () => seedCalls({ ...base, count: 60, maxBlock: 6 })))
    ).flat();
    const rows = (await PhoneCall.collection
      .find({ _id: { $in: created } }, { projection: { createdAt: 1, dispatchBatchId: 1, listSeq: 1 } })
      .toArray()) as unknown as Array<{ createdAt: Date; dispatchBatchId: Types.ObjectId; listSeq: number }>;
    expect(rows).toHaveLength(created.length);
    // Creates that waited for one another took one block: one creation time over several creates.
    const createsByTime = new Map<number, Set<string>>();
    for (const row of rows) {
      const creates = createsByTime.get(row.createdAt.getTime()) ?? new Set<string>();
      createsByTime.set(row.createdAt.getTime(), creates.add(row.dispatchBatchId.toHexString()));
    }
    expect(Math.max(...[...createsByTime.values()].map((creates) => creates.size))).toBeGreaterThan(1);
    expect(new Set(rows.map((row) => row.listSeq)).size).toBe(rows.length);

    const all = await allOfTeam();
    expect(await pageThrough({}, 100)).toEqual(all.map((row) => row._id.toHexString()));
    const file = all[0]!.fileId ?? all.find((row) => row.fileId)!.fileId!;
    expect(await pageThrough({ fileId: file }, 10)).toEqual(
      all.filter((row) => row.fileId === file).map((row) => row._id.toHexString()),
    );
  });

  it("searches for createdBefore's position on a first page only: a later page's cursor bounds the walk", async () => {
    // The search probes one list position by equality; the walk reads ranges of positions.
    const query = `limit=100&createdBefore=${encodeURIComponent(await middleTime())}`;
    const probes: unknown[] = [];
    mongoose.set('debug', (collection: string, method: string, filter: { listSeq?: unknown }) => {
      if (collection === 'phonecalls' && method === 'findOne' && typeof filter.listSeq === 'number')
        probes.push(filter);
    });
    try {
      const first = await api.get(`/v1/phoneCalls?${query}`);
      expect(first.status).toBe(200);
      expect(probes.length).toBeGreaterThan(3);
      probes.length = 0;
      const second = await api.get(`/v1/phoneCalls?${query}&cursor=${first.body.nextCursor as string}`);
      expect(second.status).toBe(200);
      expect(second.body.data).toHaveLength(100);
      expect(probes).toEqual([]);
    } finally {
      mongoose.set('debug', false);
    }
  });

  it('looks a call up by its id through an index (explain), never a scan of every call', async () => {
    // A status write, a dial and a callback each find their call by _id; on FerretDB 1.x that was a
    // scan of the whole table (its own unique index on _id cannot serve the SQL it generates).
    const [one] = await PhoneCall.find({}, { _id: 1 }).limit(1).lean();
    await expectIndexRead({ _id: one!._id }, /"Index Name":"phonecalls_[0-9a-f]{8}__id_oco_gin"/, /IDHACK|IXSCAN/);
  });

  it('reads every slice through an index on this store (explain), never a scan of the team', async () => {
    const middle = await middleTime();
    const issued: Array<Record<string, unknown>> = [];
    mongoose.set('debug', (collection: string, method: string, filter: unknown) => {
      if (collection === 'phonecalls' && (method === 'find' || method === 'findOne'))
        issued.push(filter as Record<string, unknown>);
    });
    try {
      for (const query of [
        '',
        'status=failed',
        'status=completed',
        `callTemplateId=${templates[0]}`,
        'toPhoneNumber=%2B14155550003',
        `createdBefore=${encodeURIComponent(middle)}`,
      ])
        expect((await api.get(`/v1/phoneCalls?limit=100&${query}`)).status).toBe(200);
    } finally {
      mongoose.set('debug', false);
    }
    expect(issued.length).toBeGreaterThan(6);
    for (const filter of issued)
      await expectIndexRead(filter, /"Index Name":"phonecalls_[0-9a-f]{8}_[a-z]+_oco_gin"/, /IXSCAN/);
  });

  it('reads a rare filter in one query once it has seen it match few calls, and walks when it has grown', async () => {
    forgetMatchCounts();
    const reads: Array<{ collection: string; filter: Record<string, unknown> }> = [];
    mongoose.set('debug', (collection: string, method: string, filter: Record<string, unknown>) => {
      if (method === 'find' || method === 'findOne') reads.push({ collection, filter });
    });
    const page = async () => {
      reads.length = 0;
      const res = await api.get('/v1/phoneCalls?limit=10&status=cancelled');
      expect(res.status).toBe(200);
      const made = reads.filter((read) => read.collection === 'phonecalls' || read.collection === 'calllistcounters');
      const cancelled = await PhoneCall.collection
        .find({ teamId: new Types.ObjectId(team.teamId), status: 'cancelled' })
        .toArray();
      const expected = (cancelled as unknown as Row[]).sort(newestFirst).map((row) => row._id.toHexString());
      expect(res.body.data.map((call: { _id: string }) => call._id)).toEqual(expected.slice(0, 10));
      expect(res.body.nextCursor === null).toBe(expected.length <= 10);
      return made;
    };
    try {
      // Nothing known yet: the walk, from the team's counter down its slices.
      const walked = await page();
      expect(walked[0]!.collection).toBe('calllistcounters');
      expect(walked.length).toBeGreaterThan(3);
      // It saw a handful of cancelled calls: the next page is one read of every one of them.
      const once = await page();
      expect(once).toHaveLength(1);
      expect(once[0]!.filter).not.toHaveProperty('listKeys');

      // Cancelled calls are now many more than one read takes (64 at this page size): that read
      // comes back full, and the same request walks instead; the next walks at once.
      const completed = await PhoneCall.collection
        .find({ teamId: new Types.ObjectId(team.teamId), status: 'completed' }, { projection: { _id: 1 } })
        .limit(80)
        .toArray();
      await PhoneCall.collection.updateMany(
        { _id: { $in: completed.map((row) => row._id) } },
        { $set: { status: 'cancelled' } },
      );
      const grown = await page();
      expect(grown[0]!.filter).not.toHaveProperty('listKeys');
      expect(grown[1]!.collection).toBe('calllistcounters');
      const walkedAgain = await page();
      expect(walkedAgain[0]!.collection).toBe('calllistcounters');
    } finally {
      mongoose.set('debug', false);
    }
  });
});

// Last in the file: it runs the backfill again over every team of the store.
describe('placing the calls stored before positions existed', () => {
  it('numbers them alike on every run until done: a run that died halfway leaves one position per call, in order', async () => {
    // Before, a second run numbered only the calls still without a position, from 0 down again: each of
    // those positions then held two calls, and pages skipped calls.
    const legacyTeam = await stack.seedTeam('Stored before positions');
    const ids = await seedCalls({
      templateIds: templates,
      phoneNumberIds: numbers,
      numbers: 40,
      random: seededRandom(7),
      teamId: legacyTeam.teamId,
      count: 60,
      maxBlock: 10,
    });
    await PhoneCall.collection.updateMany({ _id: { $in: ids } }, { $unset: { listSeq: 1, listKeys: 1 } });
    await CallListCounter.deleteOne({ _id: new Types.ObjectId(legacyTeam.teamId) });
    await mongoose.connection.collection('migrations').deleteMany({});
    const listed = async () =>
      (
        (await PhoneCall.find({ _id: { $in: ids } }, { createdAt: 1, listSeq: 1 }).lean()) as Array<
          Row & { listSeq?: number }
        >
      ).sort(newestFirst);
    // What a first run wrote of its first chunks before its process died: the newest 25 placed.
    const newest = (await listed()).slice(0, 25);
    for (const [at, call] of newest.entries())
      await PhoneCall.collection.updateOne({ _id: call._id }, { $set: listFields(legacyTeam.teamId, -at) });

    await backfillListPositions();
    const placed = await listed();
    expect(placed.map((call) => call.listSeq)).toEqual(placed.map((_, at) => -at || 0));
    expect((await CallListCounter.findById(legacyTeam.teamId).lean())?.min).toBe(-59);
    // Done: a later start leaves them alone.
    expect(await backfillListPositions()).toBe(0);
    const legacyApi = apiClient(stack.baseUrl, legacyTeam.key);
    const page = await legacyApi.get('/v1/phoneCalls?limit=1000');
    expect(page.body.data.map((call: { _id: string }) => call._id)).toEqual(
      placed.map((call) => call._id.toHexString()),
    );
  });
});

/** The creation time of the team's middle call. */
async function middleTime(): Promise<string> {
  const times = (await allOfTeam()).map((row) => row.createdAt.getTime());
  return new Date(times[Math.floor(times.length / 2)]!).toISOString();
}

/**
 * The plan of `filter` on this store. FerretDB: the filter reaches PostgreSQL, whose plan starts from
 * the GIN index `ferretdbIndex` names, never a sequential scan. MongoDB: `mongoStage`, no collection
 * scan and no in-memory sort.
 */
async function expectIndexRead(filter: Record<string, unknown>, ferretdbIndex: RegExp, mongoStage: RegExp) {
  const plan = await PhoneCall.collection.find(filter).explain('queryPlanner');
  const text = JSON.stringify(plan);
  if ((plan as { serverInfo?: { ferretdbVersion?: string } }).serverInfo?.ferretdbVersion) {
    expect(plan).toMatchObject({ filterPushdown: true });
    expect(text).toMatch(ferretdbIndex);
    expect(text).not.toContain('Seq Scan');
  } else {
    expect(text).toMatch(mongoStage);
    expect(text).not.toMatch(/COLLSCAN|"stage":"SORT"/);
  }
}

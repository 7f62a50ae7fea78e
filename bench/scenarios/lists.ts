// lists: GET /v1/phoneCalls with each filter, the first page and a later one, over one team of 10,000
// and then 100,000 calls (another team beside it), and the team-wide GET /v1/transcripts (one call in
// ten with a transcript, its utterances in the last 90 days), from autocannon at a fixed concurrency;
// against the raw driver query that returns the same page on the same store (find + sort + limit, as
// the API read before list slices). Budgets: p99 <= 1.2x the raw query, <= 150 ms at the larger size
// on the embedded default, and growth from the smaller size to the larger well under linear.
import { Types } from 'mongoose';
import { mapBounded } from '../../src/concurrency/run-bounded';
import { PhoneCall } from '../../src/data/models/phone-call';
import { Transcript } from '../../src/data/models/transcript';
import { registerTranscriptSlices, transcriptListKeys } from '../../src/data/transcript-list';
import { seedCalls, seededRandom } from '../../test/helpers/call-population';
import { runHttpLoad } from '../load/autocannon';
import { percentile } from '../load/stats';
import {
  BUDGETS,
  apiRequest,
  expectStatus,
  figure,
  ms,
  type BenchContext,
  type BenchFigure,
  type BenchScenario,
} from '../scenario';

interface ListCase {
  name: string;
  /** The list: `phoneCalls` (newest first) unless named, or the team-wide `transcripts` (spoken order). */
  endpoint?: 'phoneCalls' | 'transcripts';
  query: Record<string, string>;
  /** The same page as a raw driver query. */
  raw: Record<string, unknown>;
  /** Start from the cursor of this many pages in (a later page). */
  laterPage?: number;
}

/**
 * The pages to measure over the team's calls. A team with no call from a file (a small one: the
 * seeded creates are blocks of up to 2,000 calls, half of them batches) has no `fileId` page.
 * `seeded`: the team's call ids in creation order, when known (the seeding's createdAt never
 * decreases, so the middle one's is the median): one read by id, where reading every call's time
 * took FerretDB about 20 s at 100,000 calls.
 */
export async function listCases(team: Types.ObjectId, seeded?: readonly Types.ObjectId[]): Promise<ListCase[]> {
  const one = await PhoneCall.collection.findOne({ teamId: team, fileId: { $exists: true } });
  const some = await PhoneCall.collection.findOne({ teamId: team }, { skip: 77 });
  if (!some) throw new Error('lists: the seeded team has fewer than 78 calls');
  const middle = seeded
    ? ((await PhoneCall.collection.findOne({ _id: seeded[Math.floor(seeded.length / 2)] }))?.createdAt as Date)
    : await PhoneCall.collection
        .find({ teamId: team }, { projection: { createdAt: 1 } })
        .toArray()
        .then((rows) => {
          const times = rows.map((row) => (row.createdAt as Date).getTime()).sort((a, b) => a - b);
          return new Date(times[Math.floor(times.length / 2)]!);
        });
  if (!middle) throw new Error("lists: the seeded team's middle call is not stored");
  return [
    { name: 'unfiltered, first page', query: {}, raw: {} },
    { name: 'unfiltered, page 20', query: {}, raw: {}, laterPage: 20 },
    { name: 'status=completed', query: { status: 'completed' }, raw: { status: 'completed' } },
    { name: 'status=failed', query: { status: 'failed' }, raw: { status: 'failed' } },
    { name: 'status=cancelled', query: { status: 'cancelled' }, raw: { status: 'cancelled' } },
    {
      name: 'callTemplateId',
      query: { callTemplateId: String(some.callTemplateId) },
      raw: { callTemplateId: some.callTemplateId },
    },
    {
      name: 'phoneNumberId',
      query: { phoneNumberId: String(some.phoneNumberId) },
      raw: { phoneNumberId: some.phoneNumberId },
    },
    {
      name: 'toPhoneNumber',
      query: { toPhoneNumber: some.toPhoneNumber as string },
      raw: { toPhoneNumber: some.toPhoneNumber },
    },
    ...(one ? [{ name: 'fileId', query: { fileId: one.fileId as string }, raw: { fileId: one.fileId } }] : []),
    {
      name: 'createdBefore (the older half)',
      query: { createdBefore: middle.toISOString() },
      raw: { createdAt: { $lt: middle } },
    },
    {
      name: 'createdAfter (the newer half)',
      query: { createdAfter: middle.toISOString() },
      raw: { createdAt: { $gt: middle } },
    },
  ];
}

/** The team-wide transcript pages (a page of one call's transcript is one read by the call). */
const TRANSCRIPT_CASES: ListCase[] = [
  { name: 'transcripts, team-wide first page', endpoint: 'transcripts', query: {}, raw: {} },
  { name: 'transcripts, team-wide page 20', endpoint: 'transcripts', query: {}, raw: {}, laterPage: 20 },
];

/** Transcripts are said over this many days before now. */
const TRANSCRIPT_DAYS = 90;
/** Utterances per transcript, this far apart. */
const UTTERANCES = 6;
const UTTERANCE_GAP_MS = 5_000;

/**
 * A transcript for one call in ten of `calls`, said at a random time in the last TRANSCRIPT_DAYS days,
 * written as capture writes it (slices registered, then the rows with their keys); returns the rows.
 */
async function seedTranscripts(
  teamId: Types.ObjectId,
  calls: readonly Types.ObjectId[],
  random: () => number,
): Promise<number> {
  const said = calls
    .filter(() => random() < 0.1)
    .map((phoneCallId) => {
      const start = Date.now() - random() * TRANSCRIPT_DAYS * 86_400_000;
      return {
        phoneCallId,
        times: Array.from({ length: UTTERANCES }, (_, i) => new Date(start + i * UTTERANCE_GAP_MS)),
      };
    });
  await mapBounded(said, 8, ({ phoneCallId, times }) => registerTranscriptSlices({ _id: phoneCallId, teamId }, times));
  const rows = said.flatMap(({ phoneCallId, times }) =>
    times.map((at, sequence) => ({
      _id: new Types.ObjectId(),
      teamId,
      phoneCallId,
      text: sequence % 2 ? 'Yes, Tuesday at ten works for me.' : 'Hello, this is Ada calling about your appointment.',
      speaker: sequence % 2 ? 'human' : 'agent',
      sequence,
      createdAt: at,
      updatedAt: at,
      ...transcriptListKeys(teamId, at),
    })),
  );
  for (let at = 0; at < rows.length; at += 1_000) await Transcript.collection.insertMany(rows.slice(at, at + 1_000));
  return rows.length;
}

/** The query string of a case's page: a later page starts from the cursor the API gave that many pages in. */
async function pageQuery(ctx: BenchContext, key: string, c: ListCase, limit: number): Promise<string> {
  const params = new URLSearchParams({ ...c.query, limit: String(limit) });
  for (let page = 0; page < (c.laterPage ?? 0); page++) {
    const body = expectStatus(
      await apiRequest<{ nextCursor: string | null }>(ctx, key, 'GET', `/v1/${c.endpoint ?? 'phoneCalls'}?${params}`),
      200,
      c.name,
    );
    if (!body.nextCursor) break;
    params.set('cursor', body.nextCursor);
  }
  return params.toString();
}

/** What the raw query took, each run in ms; `capped`: a run reached the cap, which stands in for its time. */
export interface RawTimes {
  times: number[];
  capped: boolean;
}

/** A raw query this many times slower than the API's p99 has decided its page (see rawTimes). */
const DECIDED_TIMES_API_P99 = 5;

/** MongoDB's (and FerretDB's) code for a command stopped at its `maxTimeMS`. */
const MAX_TIME_MS_EXPIRED = 50;

/** How often, and how long, to run a page's raw query. */
export interface RawRuns {
  limit: number;
  /** At most this many runs (as many as the API got requests). */
  maxRuns: number;
  /** Runs begin while this much time has passed since the first (which always runs). */
  budgetMs: number;
  /** A run is stopped here (`maxTimeMS`), and the cap stands in for its time. */
  capMs: number;
  /** Two runs each slower than this decide the page: no more follow. */
  decidedAboveMs: number;
}

/**
 * The raw query's times for the same page (a later page: the keyset condition of its cursor): as many
 * runs as the API got requests while they fit in `budgetMs`, at least one, so that a quick raw query's
 * p99 is a tail like the API's.
 *
 * Two things keep a slow raw query from taking the bench's time when no figure needs it:
 * - A run is stopped at `capMs` (the server's `maxTimeMS`, which FerretDB honours and stops working at),
 *   and the cap then stands in for its time: on FerretDB at 100,000 calls a whole-team sort takes 5-18 s
 *   a run for seven of the pages, two minutes of the bench, while the API's page answers in under
 *   150 ms. A time replaced by a smaller one can only lower a percentile, so the p99 of the runs made is
 *   a lower bound of theirs uncapped, and a page judged within 1.2x of it is within 1.2x of the true
 *   one. No run follows a capped one: the runs' p99 (their slowest, at 100 runs or fewer) is the cap
 *   whatever they take.
 * - Once the first two runs each took over `decidedAboveMs` (the scenario passes five times the API's
 *   p99), no more follow: the ratio is under 0.2x, six times within the budget, and further runs could
 *   bring it near 1.2x only by the query turning five times quicker. Pages whose raw query is close to
 *   the API's get every run the time allows.
 */
export async function rawTimes(
  team: Types.ObjectId,
  c: Pick<ListCase, 'raw' | 'endpoint'>,
  cursor: string | null,
  runs: RawRuns,
): Promise<RawTimes> {
  const filter: Record<string, unknown> = { teamId: team, ...c.raw };
  // Calls newest first; transcripts in spoken order, oldest first.
  const [collection, order, beyond] =
    c.endpoint === 'transcripts'
      ? [Transcript.collection, 1 as const, '$gt']
      : [PhoneCall.collection, -1 as const, '$lt'];
  if (cursor) {
    const [time, id] = cursor.split('.') as [string, string];
    const at = new Date(parseInt(time, 36));
    filter.$or = [{ createdAt: { [beyond]: at } }, { createdAt: at, _id: { [beyond]: new Types.ObjectId(id) } }];
  }
  const times: number[] = [];
  const began = performance.now();
  // Only the first two decide: once either was quicker, the page is close enough for every run.
  const decided = () => times.length === 2 && times.every((ms) => ms > runs.decidedAboveMs);
  while (times.length < runs.maxRuns && (times.length === 0 || performance.now() - began < runs.budgetMs)) {
    const start = performance.now();
    try {
      await collection
        .find(filter)
        .sort({ createdAt: order, _id: order })
        .limit(runs.limit + 1)
        .maxTimeMS(runs.capMs)
        .toArray();
    } catch (err) {
      if ((err as { code?: unknown }).code !== MAX_TIME_MS_EXPIRED) throw err;
      times.push(runs.capMs);
      return { times, capped: true };
    }
    times.push(performance.now() - start);
    if (decided()) break;
  }
  return { times, capped: false };
}

export const listsScenario: BenchScenario = {
  name: 'lists',
  description:
    'GET /v1/phoneCalls per filter and team-wide GET /v1/transcripts at two team sizes vs the raw find + sort + limit on the same store',
  defaultOn: true,
  params: {
    small: { full: 10_000, quick: 150, description: 'calls in the team, first measurement' },
    large: { full: 100_000, quick: 300, description: 'calls in the team, second measurement' },
    neighbours: { full: 10_000, quick: 100, description: 'calls of another team in the same collection' },
    requests: { full: 200, quick: 2, description: 'requests per filter and size' },
    concurrency: { full: 1, quick: 1, description: 'requests in flight (latency: one at a time)' },
    rawSeconds: {
      full: 10,
      quick: 0.25,
      description: 'time for runs of each raw query, up to one per request (one run at least; see rawTimes)',
    },
    rawCapSeconds: {
      full: 2,
      quick: 2,
      description: "a raw query's run stops here, which then stands for its time (a lower bound: see rawTimes)",
    },
    limit: { full: 100, quick: 100, description: 'page size' },
  },
  async run(ctx) {
    const p = ctx.params as Record<
      'small' | 'large' | 'neighbours' | 'requests' | 'concurrency' | 'rawSeconds' | 'rawCapSeconds' | 'limit',
      number
    >;
    const team = await ctx.seedTeam('Lists bench');
    const other = await ctx.seedTeam('Lists bench neighbours');
    const teamId = new Types.ObjectId(team.teamId);
    const random = seededRandom(16);
    const population = {
      templateIds: [team.templateId, new Types.ObjectId().toHexString(), new Types.ObjectId().toHexString()],
      phoneNumberIds: [new Types.ObjectId().toHexString(), new Types.ObjectId().toHexString()],
      numbers: 5_000,
      maxBlock: 2_000,
      random,
    };
    const otherCalls = await seedCalls({ ...population, teamId: other.teamId, count: p.neighbours });
    await seedTranscripts(new Types.ObjectId(other.teamId), otherCalls, random);
    const figures: BenchFigure[] = [];
    const p99BySize = new Map<number, Map<string, number>>();
    const seeded: Types.ObjectId[] = [];
    for (const size of [p.small, p.large]) {
      ctx.log(`lists: seeding the team to ${size} calls`);
      const added = await seedCalls({ ...population, teamId: team.teamId, count: size - seeded.length });
      seeded.push(...added);
      ctx.log(`lists: ${await seedTranscripts(teamId, added, random)} transcript rows for the new calls`);
      if (!ctx.quick) ctx.log(`lists: statistics of the new calls: ${await ctx.freshStatistics()}`);
      const p99s = new Map<string, number>();
      p99BySize.set(size, p99s);
      const pages = [...(await listCases(teamId, seeded)), ...TRANSCRIPT_CASES];
      if (!pages.some((c) => c.name === 'fileId'))
        ctx.log(`lists: no call from a file at ${size} calls: no fileId page`);
      for (const c of pages) {
        const query = await pageQuery(ctx, team.key, c, p.limit);
        const load = await runHttpLoad({
          url: `${ctx.apiUrl}/v1/${c.endpoint ?? 'phoneCalls'}?${query}`,
          headers: { 'service-api-key': team.key },
          connections: p.concurrency,
          amount: p.requests,
        });
        if (load.ok !== p.requests) throw new Error(`lists: ${c.name} answered ${JSON.stringify(load.statusCodes)}`);
        const cursor = new URLSearchParams(query).get('cursor');
        const raw = await rawTimes(teamId, c, cursor, {
          limit: p.limit,
          maxRuns: p.requests,
          budgetMs: p.rawSeconds * 1000,
          capMs: p.rawCapSeconds * 1000,
          decidedAboveMs: DECIDED_TIMES_API_P99 * load.latencyMs.p99,
        });
        const rawP99 = percentile(raw.times, 99);
        const runs = `${raw.times.length} run${raw.times.length === 1 ? '' : 's'}`;
        p99s.set(c.name, load.latencyMs.p99);
        ctx.log(
          `lists: ${size} calls, ${c.name}: p50 ${load.latencyMs.p50} ms, p99 ${load.latencyMs.p99} ms; raw p50 ${Math.round(percentile(raw.times, 50))} ms, p99 ${Math.round(rawP99)} ms (${runs}${raw.capped ? `, stopped at the cap of ${p.rawCapSeconds} s: at least` : ''})`,
        );
        const what = `list ${c.name}, ${size.toLocaleString('en-US')} calls, p99`;
        figures.push(
          figure(`${what} vs raw`, ms(load.latencyMs.p99), 'ms', {
            baseline: ms(rawP99),
            baselineAtLeast: raw.capped,
            budget: BUDGETS.listVsRaw,
            note: raw.capped
              ? `raw stopped at its cap of ${p.rawCapSeconds} s (maxTimeMS) in ${runs}: the baseline is a lower bound`
              : `raw p50 ${ms(percentile(raw.times, 50))} ms over ${runs}`,
          }),
        );
        if (size === p.large)
          figures.push(
            figure(`${what}, embedded default`, ms(load.latencyMs.p99), 'ms', {
              budget: BUDGETS.listP99,
              note: `p50 ${ms(load.latencyMs.p50)} ms at concurrency ${p.concurrency}`,
            }),
          );
      }
    }
    for (const [name, largeP99] of p99BySize.get(p.large)!) {
      const smallP99 = p99BySize.get(p.small)!.get(name);
      if (smallP99 === undefined) continue; // a page the smaller team did not have (fileId)
      figures.push(
        figure(
          `list ${name}: p99 growth from ${p.small.toLocaleString('en-US')} to ${p.large.toLocaleString('en-US')} calls`,
          ms(largeP99 / smallP99),
          'x',
          {
            budget: BUDGETS.listGrowth,
            note: `calls grew ${p.large / p.small}x`,
          },
        ),
      );
    }
    return figures;
  },
};

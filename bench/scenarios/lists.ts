// lists: GET /v1/phoneCalls with each filter, the first page and a later one, over one team of 10,000
// and then 100,000 calls (another team beside it), from autocannon at a fixed concurrency; against the
// raw driver query that returns the same page on the same store (find + sort + limit, as the API read
// before list slices). Budgets: p99 <= 1.2x the raw query, <= 150 ms at the larger size on the
// embedded default, and growth from the smaller size to the larger well under linear.
import { Types } from 'mongoose';
import { PhoneCall } from '../../src/data/models/phone-call';
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
  query: Record<string, string>;
  /** The same page as a raw driver query. */
  raw: Record<string, unknown>;
  /** Start from the cursor of this many pages in (a later page). */
  laterPage?: number;
}

/**
 * The pages to measure over the team's calls. A team with no call from a file (a small one: the
 * seeded creates are blocks of up to 2,000 calls, half of them batches) has no `fileId` page.
 */
export async function listCases(team: Types.ObjectId): Promise<ListCase[]> {
  const one = await PhoneCall.collection.findOne({ teamId: team, fileId: { $exists: true } });
  const some = await PhoneCall.collection.findOne({ teamId: team }, { skip: 77 });
  if (!some) throw new Error('lists: the seeded team has fewer than 78 calls');
  const times = await PhoneCall.collection
    .find({ teamId: team }, { projection: { createdAt: 1 } })
    .toArray()
    .then((rows) => rows.map((row) => (row.createdAt as Date).getTime()).sort((a, b) => a - b));
  const middle = new Date(times[Math.floor(times.length / 2)]!);
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

/** The query string of a case's page: a later page starts from the cursor the API gave that many pages in. */
async function pageQuery(ctx: BenchContext, key: string, c: ListCase, limit: number): Promise<string> {
  const params = new URLSearchParams({ ...c.query, limit: String(limit) });
  for (let page = 0; page < (c.laterPage ?? 0); page++) {
    const body = expectStatus(
      await apiRequest<{ nextCursor: string | null }>(ctx, key, 'GET', `/v1/phoneCalls?${params}`),
      200,
      c.name,
    );
    if (!body.nextCursor) break;
    params.set('cursor', body.nextCursor);
  }
  return params.toString();
}

/**
 * The raw query's times for the same page (a later page: the keyset condition of its cursor): as many
 * runs as the API got requests while they fit in `budgetMs`, at least one, so that a quick raw query's
 * p99 is a tail like the API's and a slow one (seconds at the larger size) runs once.
 */
async function rawTimes(
  team: Types.ObjectId,
  c: ListCase,
  cursor: string | null,
  limit: number,
  maxRuns: number,
  budgetMs: number,
): Promise<number[]> {
  const filter: Record<string, unknown> = { teamId: team, ...c.raw };
  if (cursor) {
    const [time, id] = cursor.split('.') as [string, string];
    const at = new Date(parseInt(time, 36));
    filter.$or = [{ createdAt: { $lt: at } }, { createdAt: at, _id: { $lt: new Types.ObjectId(id) } }];
  }
  const times: number[] = [];
  const began = performance.now();
  while (times.length < maxRuns && (times.length === 0 || performance.now() - began < budgetMs)) {
    const start = performance.now();
    await PhoneCall.collection
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit + 1)
      .toArray();
    times.push(performance.now() - start);
  }
  return times;
}

export const listsScenario: BenchScenario = {
  name: 'lists',
  description: 'GET /v1/phoneCalls per filter at two team sizes vs the raw find + sort + limit on the same store',
  defaultOn: true,
  params: {
    small: { full: 10_000, quick: 300, description: 'calls in the team, first measurement' },
    large: { full: 100_000, quick: 600, description: 'calls in the team, second measurement' },
    neighbours: { full: 10_000, quick: 200, description: 'calls of another team in the same collection' },
    requests: { full: 200, quick: 3, description: 'requests per filter and size' },
    concurrency: { full: 1, quick: 1, description: 'requests in flight (latency: one at a time)' },
    rawSeconds: {
      full: 10,
      quick: 0.25,
      description:
        'time for runs of each raw query, up to one per request (one run at least: seconds each at the larger size)',
    },
    limit: { full: 100, quick: 100, description: 'page size' },
  },
  async run(ctx) {
    const p = ctx.params as Record<
      'small' | 'large' | 'neighbours' | 'requests' | 'concurrency' | 'rawSeconds' | 'limit',
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
    await seedCalls({ ...population, teamId: other.teamId, count: p.neighbours });
    const figures: BenchFigure[] = [];
    const p99BySize = new Map<number, Map<string, number>>();
    let seeded = 0;
    for (const size of [p.small, p.large]) {
      ctx.log(`lists: seeding the team to ${size} calls`);
      await seedCalls({ ...population, teamId: team.teamId, count: size - seeded });
      seeded = size;
      // PostgreSQL's autovacuum analyses the table within seconds (src/local/servers.ts): without
      // statistics its planner may pick a filter's index over the slice's, as no running service sees.
      if (!ctx.quick) await new Promise((resolve) => setTimeout(resolve, 12_000));
      const p99s = new Map<string, number>();
      p99BySize.set(size, p99s);
      const pages = await listCases(teamId);
      if (!pages.some((c) => c.name === 'fileId'))
        ctx.log(`lists: no call from a file at ${size} calls: no fileId page`);
      for (const c of pages) {
        const query = await pageQuery(ctx, team.key, c, p.limit);
        const load = await runHttpLoad({
          url: `${ctx.apiUrl}/v1/phoneCalls?${query}`,
          headers: { 'service-api-key': team.key },
          connections: p.concurrency,
          amount: p.requests,
        });
        if (load.ok !== p.requests) throw new Error(`lists: ${c.name} answered ${JSON.stringify(load.statusCodes)}`);
        const cursor = new URLSearchParams(query).get('cursor');
        const raw = await rawTimes(teamId, c, cursor, p.limit, p.requests, p.rawSeconds * 1000);
        const rawP99 = percentile(raw, 99);
        p99s.set(c.name, load.latencyMs.p99);
        ctx.log(
          `lists: ${size} calls, ${c.name}: p50 ${load.latencyMs.p50} ms, p99 ${load.latencyMs.p99} ms; raw p50 ${Math.round(percentile(raw, 50))} ms, p99 ${Math.round(rawP99)} ms (${raw.length} runs)`,
        );
        const what = `list ${c.name}, ${size.toLocaleString('en-US')} calls, p99`;
        figures.push(
          figure(`${what} vs raw`, ms(load.latencyMs.p99), 'ms', {
            baseline: ms(rawP99),
            budget: BUDGETS.listVsRaw,
            note: `raw p50 ${ms(percentile(raw, 50))} ms over ${raw.length} run${raw.length === 1 ? '' : 's'}`,
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

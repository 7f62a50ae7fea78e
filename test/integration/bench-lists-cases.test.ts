// The lists scenario's pages over a team: one without any call from a file (a team smaller than the
// bench's default) gets every page but `fileId`, where it used to stop the scenario. And its raw
// baseline's runs on the real store: a run stopped at its cap stands in as the cap and ends the runs,
// as do two runs slow enough to decide the page.
import { randomBytes } from 'node:crypto';
import mongoose, { Types } from 'mongoose';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { listCases, rawTimes, type RawRuns } from '../../bench/scenarios/lists';
import { isFerretdb } from '../../src/data/connection';
import { PhoneCall } from '../../src/data/models/phone-call';
import { seedCalls, seededRandom } from '../helpers/call-population';
import { withDatabase } from '../helpers/database-uri';

const teamId = new Types.ObjectId();
let seeded: Types.ObjectId[];
/** A team whose whole sorted first page takes the store well over a millisecond. */
const largerTeamId = new Types.ObjectId();

/** `count` calls of `team` in creates of up to `maxBlock`, to 50 numbers. */
const seedTeam = (team: Types.ObjectId, count: number, maxBlock: number, seed: number) =>
  seedCalls({
    teamId: team.toHexString(),
    templateIds: [new Types.ObjectId().toHexString()],
    phoneNumberIds: [new Types.ObjectId().toHexString()],
    count,
    maxBlock,
    numbers: 50,
    random: seededRandom(seed),
  });

beforeAll(async () => {
  await mongoose.connect(withDatabase(inject('mongoUri'), `lists_${randomBytes(4).toString('hex')}`));
  // Blocks of one call: single creates, never from a file.
  seeded = await seedTeam(teamId, 100, 1, 16);
  await seedTeam(largerTeamId, 3_000, 1_000, 17);
}, 60_000);
afterAll(async () => {
  await mongoose.connection.db?.dropDatabase();
  await mongoose.disconnect();
});

it('leaves out the fileId page while the team has no call from a file, and has it once one is', async () => {
  const before = (await listCases(teamId)).map((c) => c.name);
  expect(before).not.toContain('fileId');
  expect(before).toEqual(
    expect.arrayContaining(['unfiltered, first page', 'toPhoneNumber', 'createdBefore (the older half)']),
  );
  expect(before).toHaveLength(10);

  // The seeding's ids give the same pages (the same halves by time) as reading every call's time.
  expect(await listCases(teamId, seeded)).toEqual(await listCases(teamId));

  await PhoneCall.collection.updateOne({ teamId }, { $set: { fileId: 'file-1', callOrigin: 'file' } });
  const after = await listCases(teamId);
  expect(after).toHaveLength(11);
  expect(after.find((c) => c.name === 'fileId')?.query).toEqual({ fileId: 'file-1' });
});

/** The runs of a raw page: up to `maxRuns` within a minute, unless `overrides` say otherwise. */
const runs = (maxRuns: number, overrides: Partial<RawRuns> = {}): RawRuns => ({
  limit: 100,
  maxRuns,
  budgetMs: 60_000,
  capMs: 60_000,
  decidedAboveMs: Number.POSITIVE_INFINITY,
  ...overrides,
});

it('times every run of a raw page that ends within its cap, as many as asked', async () => {
  const raw = await rawTimes(teamId, { raw: {} }, null, runs(3));
  expect(raw.capped).toBe(false);
  expect(raw.times).toHaveLength(3);
  for (const ms of raw.times) expect(ms).toBeGreaterThan(0);
});

it('stops after two runs that each took longer than decides the page', async () => {
  const raw = await rawTimes(teamId, { raw: {} }, null, runs(5, { decidedAboveMs: 0 }));
  expect(raw).toMatchObject({ capped: false, times: [expect.any(Number), expect.any(Number)] });
});

it('stops a raw page at its cap on the store (maxTimeMS), counts the cap for it and runs no more', async () => {
  const raw = await rawTimes(largerTeamId, { raw: {} }, null, runs(3, { capMs: 1 }));
  // FerretDB (the suite's store) stops within the millisecond; MongoDB checks its time limit at
  // intervals, so there a sort this small may end first, and is then timed like any run.
  if (await isFerretdb()) expect(raw).toEqual({ times: [1], capped: true });
  else expect(raw.capped ? raw.times : raw.times.length).toEqual(raw.capped ? [...raw.times.slice(0, -1), 1] : 3);
});

// The lists scenario's pages over a team: one without any call from a file (a team smaller than the
// bench's default) gets every page but `fileId`, where it used to stop the scenario.
import { randomBytes } from 'node:crypto';
import mongoose, { Types } from 'mongoose';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { listCases } from '../../bench/scenarios/lists';
import { PhoneCall } from '../../src/data/models/phone-call';
import { seedCalls, seededRandom } from '../helpers/call-population';
import { withDatabase } from '../helpers/database-uri';

const teamId = new Types.ObjectId();

beforeAll(async () => {
  await mongoose.connect(withDatabase(inject('mongoUri'), `lists_${randomBytes(4).toString('hex')}`));
  // Blocks of one call: single creates, never from a file.
  await seedCalls({
    teamId: teamId.toHexString(),
    templateIds: [new Types.ObjectId().toHexString()],
    phoneNumberIds: [new Types.ObjectId().toHexString()],
    count: 100,
    maxBlock: 1,
    numbers: 50,
    random: seededRandom(16),
  });
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

  await PhoneCall.collection.updateOne({ teamId }, { $set: { fileId: 'file-1', callOrigin: 'file' } });
  const after = await listCases(teamId);
  expect(after).toHaveLength(11);
  expect(after.find((c) => c.name === 'fileId')?.query).toEqual({ fileId: 'file-1' });
});

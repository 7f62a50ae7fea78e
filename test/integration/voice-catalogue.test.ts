// The voices GET /v1/voices lists are the catalogue file's, kept in MongoDB by every API start.
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { ensureIndexes } from '../../src/data/connection';
import { Voice } from '../../src/data/models/voice';
import { VOICE_CATALOGUE } from '../../src/voices/catalogue';
import { syncVoiceCatalogue } from '../../src/voices/sync';
import { withDatabase } from '../helpers/database-uri';

beforeAll(async () => {
  await mongoose.connect(withDatabase(inject('mongoUri'), `voices_${randomBytes(4).toString('hex')}`));
  await ensureIndexes();
});
afterAll(async () => {
  await mongoose.connection.db?.dropDatabase();
  await mongoose.disconnect();
});

it("stores the catalogue's voices, changed ones as they now are, and removes one it no longer has", async () => {
  const [first] = VOICE_CATALOGUE;
  // What an earlier release stored: a voice since dropped from the file, and one whose text changed.
  await Voice.create([
    { ...first!, sampleText: 'an older sample' },
    { ...first!, id: 9_999, voiceName: 'Dropped' },
  ]);
  await syncVoiceCatalogue();
  const stored = await Voice.find({}, { _id: 0, __v: 0 }).sort({ id: 1 }).lean();
  expect(stored).toEqual([...VOICE_CATALOGUE].sort((a, b) => a.id - b.id));
  // Run again (every start does): nothing changes.
  await syncVoiceCatalogue();
  expect(await Voice.countDocuments()).toBe(VOICE_CATALOGUE.length);
});

// Every lookup a call's life makes by a field other than its list position (src/data/call-list-query.ts
// has its own test) reads through an index on this store: a recorded call with its own webhook, created
// with an Idempotency-Key (its template read by id and team; a batch's two templates and numbers
// too), captured (recording, transcript), its recording fetched, the provider call ids its callbacks
// named read as a retried dial reads them, its transcript (by call and team-wide) and deliveries
// listed, and a create refused by the do-not-call list. The filters are the ones the API and the
// worker (both in this process) issued, caught as Mongoose sends them, each then explained. On
// FerretDB 1.x such a lookup was a scan of the whole table, which for recordings decompressed every
// stored recording's audio.
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallTemplate } from '../../src/data/models/call-template';
import { PhoneCall } from '../../src/data/models/phone-call';
import { RecordingChunk } from '../../src/data/models/recording-chunk';
import { createTemplate } from '../../src/admin/commands';
import { createMongoStores } from '../../src/data/stores';
import { INDEXED_FIELDS_BY_COLLECTION } from '../../src/local/ferretdb-indexes';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

/**
 * The collections whose lookups this test follows: all with indexed fields but the calls, and the
 * call templates (a create reads its template by `_id` and team).
 */
const FOLLOWED = [
  ...Object.keys(INDEXED_FIELDS_BY_COLLECTION).filter((name) => name !== PhoneCall.collection.collectionName),
  CallTemplate.collection.collectionName,
];
const LOOKUPS = new Set([
  'find',
  'findOne',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndDelete',
  'countDocuments',
]);

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const issued: Array<{ collection: string; method: string; filter: Record<string, unknown> }> = [];

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await startReceiver();
  mongoose.set('debug', (collection: string, method: string, filter: unknown) => {
    if (FOLLOWED.includes(collection) && LOOKUPS.has(method) && filter && typeof filter === 'object')
      issued.push({ collection, method, filter: filter as Record<string, unknown> });
  });
});
afterAll(async () => {
  mongoose.set('debug', false);
  await receiver?.close();
  await stack?.stop();
});

describe('lookups by a field other than _id', () => {
  it('each read through an index on this store (explain), never a scan of the table', async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const created = await api.post(
      '/v1/phoneCalls',
      seededCallBody(stack.team, '+14155557301', {
        record: true,
        phoneCallWebhooks: [
          { url: `${receiver.url}/hook`, subscribedEvent: 'phoneCall.completed', secret: 'store-lookups-secret' },
        ],
      }),
      { headers: { 'Idempotency-Key': 'store-lookups-1' } },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data._id as string;
    const call = await eventually(
      async () => {
        const data = (await api.get(`/v1/phoneCalls/${id}`)).body.data;
        return data.status === 'completed' && data.recordingUrl ? data : undefined;
      },
      60_000,
      `call ${id} to complete with its recording`,
    );
    await eventually(async () => receiver.at('/hook').length > 0 || undefined, 30_000, 'the completed event');
    expect((await fetch(call.recordingUrl as string)).status).toBe(200);
    // What a retried dial reads: the provider call ids the API saw in the call's callbacks.
    const providerCallId = (await PhoneCall.findById(id, { providerCallId: 1 }).lean())!.providerCallId;
    expect(await createMongoStores().calls.sightedProviderCallIds(id)).toEqual([providerCallId]);
    // And what it asks of a provider call its search found: is it another of our calls?
    const same = { teamId: new mongoose.Types.ObjectId(stack.team.teamId), toPhoneNumber: '+14155557301' };
    const { heldByAnotherCall } = createMongoStores().calls;
    expect(await heldByAnotherCall({ ...same, _id: new mongoose.Types.ObjectId(id) }, providerCallId!)).toBe(false);
    expect(await heldByAnotherCall({ ...same, _id: new mongoose.Types.ObjectId() }, providerCallId!)).toBe(true);
    expect((await api.get(`/v1/transcripts?phoneCallId=${id}`)).body.data.length).toBeGreaterThan(0);
    // The team's transcripts: its days, a day's slices, a slice's rows (src/data/transcript-list.ts).
    expect((await api.get('/v1/transcripts')).body.data.length).toBeGreaterThan(0);
    expect((await api.get(`/v1/phoneCalls/${id}/webhookDeliveries`)).body.data).toHaveLength(1);
    const listed = await api.post('/v1/doNotCall', {
      teamId: stack.team.teamId,
      entries: [{ phoneNumber: '+14155557302' }],
    });
    expect(listed.status).toBe(200);
    expect(errorMessages(await api.post('/v1/phoneCalls', seededCallBody(stack.team, '+14155557302')), 400)).toEqual([
      "toPhoneNumber +14155557302 is on the team's do-not-call list",
    ]);

    // A batch naming two templates and two numbers reads each by id, as a single create does.
    const second = await createTemplate({ team: stack.team.teamId, name: 'Second', prompt: 'Hello {{firstName}}' });
    const batch = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: [
        { phoneNumberId: stack.team.phoneNumberIds.twilio, telephonyProvider: 'twilio' },
        { phoneNumberId: stack.team.phoneNumberIds.vonage, telephonyProvider: 'vonage', ...second },
      ].map((fields, i) => ({
        ...seededCallBody(stack.team, `+1415555731${i}`),
        callDelayedUntil: new Date(Date.now() + 86_400_000).toISOString(),
        ...fields,
      })),
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    expect(batch.body.data.map((c: { callTemplateId: string }) => c.callTemplateId)).toEqual([
      stack.team.templateId,
      second.callTemplateId,
    ]);

    // Every followed collection was looked up, and every lookup had an index to read (the explains
    // below go through Mongoose too: no longer followed).
    mongoose.set('debug', false);
    // A recording in pieces (over 8 MiB, a call of 9 minutes) is too long for this call: its pieces'
    // lookups, as the capture and the recording's URL make them, are explained as written.
    const pieces = RecordingChunk.collection.collectionName;
    expect(new Set(issued.map((lookup) => lookup.collection))).toEqual(
      new Set(FOLLOWED.filter((name) => name !== pieces)),
    );
    const phoneCallId = new mongoose.Types.ObjectId(id);
    issued.push(
      { collection: pieces, method: 'findOne', filter: { phoneCallId, gen: 'a1b2c3d4e5f60718', n: 0 } },
      { collection: pieces, method: 'deleteMany', filter: { phoneCallId, gen: 'a1b2c3d4e5f60718' } },
    );
    for (const { collection, method, filter } of issued) {
      await expectIndexRead(collection, filter, `${collection}.${method}(${JSON.stringify(filter)})`);
    }
  });
});

/**
 * FerretDB: the filter reaches PostgreSQL, whose plan starts from one of our GIN indexes of the
 * collection's table, never a sequential scan. MongoDB: an index scan, no collection scan.
 */
async function expectIndexRead(collection: string, filter: Record<string, unknown>, what: string) {
  const plan = await mongoose.connection.collection(collection).find(filter).explain('queryPlanner');
  const text = JSON.stringify(plan);
  if ((plan as { serverInfo?: { ferretdbVersion?: string } }).serverInfo?.ferretdbVersion) {
    expect(plan, what).toMatchObject({ filterPushdown: true });
    expect(text, what).toMatch(new RegExp(`"Index Name":"${collection}_[0-9a-f]{8}_[a-z_]+_oco_gin"`));
    expect(text, what).not.toContain('Seq Scan');
  } else {
    expect(text, what).toMatch(/IDHACK|IXSCAN/);
    expect(text, what).not.toContain('COLLSCAN');
  }
}

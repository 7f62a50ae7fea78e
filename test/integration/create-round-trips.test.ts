// A burst of single creates shares its store round trips (src/concurrency/send-together.ts): the
// reads of one key, team, template and team's webhooks that arrive while one is under way wait for
// the next and share it, and the writes of the calls and their dispatch batches go as bulk writes
// (src/data/writes-together.ts). Each create still answers as if alone, and its stored call is the
// document a lone create stores. The worker shares a team's record among its dials and its webhooks
// among its deliveries alike. The writes' unordered bulk keeps one write's failure its own.
import mongoose, { Types } from 'mongoose';
import { describe, expect, it } from 'vitest';
import { callWorkflowId } from '../../src/contracts/ids';
import { PhoneCall } from '../../src/data/models/phone-call';
import { createWebhookStore } from '../../src/data/webhook-store';
import { writesTogether } from '../../src/data/writes-together';
import { createSecretBox } from '../../src/crypto/secret-box';
import { createTeamProviderResolver } from '../../src/telephony/team-providers';
import { apiClient } from '../helpers/http';
import { seededCallBody } from '../helpers/stack';
import { useRelayedServiceStack } from '../helpers/tcp-relay';

// The stack reaches the store through a relay that can hold its answers: the burst's first reads
// are held until every request of it has asked, so that sharing does not hang on the timing.
const relayed = useRelayedServiceStack();

/** Counts the commands Mongoose sends, per `collection.method`, while `work` runs. */
async function commandsDuring(work: () => Promise<void>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  mongoose.set('debug', (collection: string, method: string) => {
    const key = `${collection}.${method}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  try {
    await work();
  } finally {
    mongoose.set('debug', false);
  }
  return counts;
}

/** The stored document's fields, with the values that differ between any two calls left out. */
function shapeOf(doc: Record<string, unknown>) {
  const ignored = new Set([
    '_id',
    'toPhoneNumber',
    'listSeq',
    'listKeys',
    'createdAt',
    'updatedAt',
    'statusExtraInfo',
    'dispatchBatchId',
  ]);
  return Object.fromEntries(Object.entries(doc).filter(([key]) => !ignored.has(key)));
}

describe('a burst of single creates', () => {
  it('shares the reads and bulks the writes, and stores each call as a lone create does', async () => {
    const team = await relayed.stack.seedTeam('Burst');
    const api = apiClient(relayed.stack.baseUrl, team.key);
    const callDelayedUntil = new Date(Date.now() + 86_400_000).toISOString();
    const body = (to: string) => seededCallBody(team, to, { callDelayedUntil });
    const alone = await api.post('/v1/phoneCalls', body('+14155550100'));
    expect(alone.status).toBe(201);

    const burst = 16;
    const answers: Array<{ status: number; body: any }> = [];
    const commands = await commandsDuring(async () => {
      relayed.relay.hold();
      const sent = Array.from({ length: burst }, (_, i) =>
        api.post('/v1/phoneCalls', body(`+1415555${String(101 + i).padStart(4, '0')}`)),
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      relayed.relay.release();
      answers.push(...(await Promise.all(sent)));
    });
    expect(answers.map((a) => a.status)).toEqual(Array(burst).fill(201));
    const ids = answers.map((a) => a.body.data._id as string);
    expect(new Set(ids).size).toBe(burst);

    // One command per create before: each of these is now shared or bulked by some of the burst.
    for (const command of [
      'apikeys.findOne',
      'teams.findOne',
      'calltemplates.find',
      'webhooks.find',
      'phonecalls.bulkWrite',
      'dispatchbatches.bulkWrite',
    ]) {
      const count = commands.get(command) ?? 0;
      expect(count, command).toBeGreaterThanOrEqual(1);
      expect(count, command).toBeLessThan(command === 'dispatchbatches.bulkWrite' ? 2 * burst : burst);
    }
    expect(commands.get('phonecalls.insertOne') ?? 0).toBe(0);
    // The do-not-call check is one read per number, as ever.
    expect(commands.get('do_not_call_entries.find')).toBe(burst);

    const stored = await PhoneCall.collection
      .find({ _id: { $in: [alone.body.data._id, ...ids].map((id: string) => new Types.ObjectId(id)) } })
      .toArray();
    expect(stored).toHaveLength(burst + 1);
    const lone = stored.find((doc) => doc._id.toHexString() === alone.body.data._id)!;
    expect(lone.__v).toBe(0);
    for (const doc of stored) {
      expect(shapeOf(doc)).toEqual(shapeOf(lone));
      const answer = answers.find((a) => a.body.data._id === doc._id.toHexString()) ?? alone;
      expect(doc.toPhoneNumber).toBe(answer.body.data.toPhoneNumber);
      expect(doc.createdAt.toISOString()).toBe(answer.body.data.createdAt);
    }
    // Every call's workflow started and its dispatch batch closed (removed: no Idempotency-Key).
    await expect
      .poll(() =>
        mongoose.connection.collection('dispatchbatches').countDocuments({ teamId: new Types.ObjectId(team.teamId) }),
      )
      .toBe(0);
    for (const id of ids)
      await expect(relayed.stack.temporal.workflow.getHandle(callWorkflowId(id)).describe()).resolves.toBeTruthy();
  });
});

describe("the worker's reads of a team", () => {
  it('shares a team record among its dials and its webhooks among its deliveries', async () => {
    const team = await relayed.stack.seedTeam('Campaign');
    const providers = createTeamProviderResolver({
      secretBox: createSecretBox(relayed.stack.config.ENCRYPTION_KEY),
      baseUrls: {
        twilio: relayed.stack.config.TWILIO_API_BASE_URL,
        vonage: relayed.stack.config.VONAGE_API_BASE_URL,
        telnyx: relayed.stack.config.TELNYX_API_BASE_URL,
      },
    });
    const webhooks = createWebhookStore();
    const concurrent = 8;
    const commands = await commandsDuring(async () => {
      relayed.relay.hold();
      const asked = Array.from({ length: concurrent }, () =>
        Promise.all([providers(team.teamId, 'twilio'), webhooks.forTeam(team.teamId)]),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      relayed.relay.release();
      for (const [adapter, hooks] of await Promise.all(asked)) {
        expect(adapter.name).toBe('twilio');
        expect(hooks).toEqual([]);
      }
    });
    // The first read of each went alone; the seven asked meanwhile shared the next.
    expect(commands.get('teams.findOne')).toBe(2);
    expect(commands.get('webhooks.find')).toBe(2);
  });
});

describe('writesTogether', () => {
  it('bulks concurrent writes, and fails only the write that failed, with its own error', async () => {
    const collection = () => mongoose.connection.collection<{ _id: string; n: number }>('writes_together_probe');
    await collection().deleteMany({});
    await collection().insertMany([
      { _id: 'taken', n: 0 },
      { _id: 'to-delete', n: 0 },
      { _id: 'to-update', n: 0 },
    ]);
    const write = writesTogether(collection);
    let outcomes: PromiseSettledResult<void>[] = [];
    const commands = await commandsDuring(async () => {
      outcomes = await Promise.allSettled([
        write({ insertOne: { document: { _id: 'first', n: 1 } } }),
        write({ insertOne: { document: { _id: 'second', n: 2 } } }),
        write({ insertOne: { document: { _id: 'taken', n: 3 } } }),
        write({ deleteOne: { filter: { _id: 'to-delete' } } }),
        write({ updateOne: { filter: { _id: 'to-update' }, update: { $set: { n: 4 } } } }),
        write({ insertOne: { document: { _id: 'third', n: 5 } } }),
      ]);
    });
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    const refused = (outcomes[2] as PromiseRejectedResult).reason as { code?: number };
    expect(refused.code).toBe(11000);
    // The first went alone; the five that came meanwhile went as one bulk write.
    expect(commands.get('writes_together_probe.bulkWrite')).toBe(2);
    const docs = await collection().find({}).sort({ _id: 1 }).toArray();
    expect(docs).toEqual([
      { _id: 'first', n: 1 },
      { _id: 'second', n: 2 },
      { _id: 'taken', n: 0 },
      { _id: 'third', n: 5 },
      { _id: 'to-update', n: 4 },
    ]);
    await collection().drop();
  });
});

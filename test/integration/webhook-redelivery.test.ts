// A call's webhook deliveries as the API lists them, and an operator's redelivery of one event: the
// same webhook-id sent again with the whole retry schedule, one redelivery at a time, other teams
// kept out. Through the typed client generated from the OpenAPI document.
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/admin/commands';
import { createApiClient, type ApiClient, type ApiSchemas } from '../../src/client/api-client';
import { redeliveryWorkflowId } from '../../src/contracts/ids';
import { createSecretBox } from '../../src/crypto/secret-box';
import { Webhook } from '../../src/data/models/webhook';
import { MAX_DELIVERIES_PER_CALL, WebhookDelivery } from '../../src/data/models/webhook-delivery';
import {
  createWebhookStore,
  deliveryWriteOrder,
  type DeliveryAttemptRecord,
  type DeliveryState,
} from '../../src/data/webhook-store';
import { createRedelivery } from '../../src/webhooks/redelivery';
import { eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ApiClient;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let receiverDown = true;
beforeAll(async () => {
  stack = await startTestStack();
  api = createApiClient({ baseUrl: stack.baseUrl, key: stack.team.key });
  receiver = await startReceiver();
  // Down until the test says otherwise; the stack's retry schedule is 200 ms, 400 ms, 800 ms.
  receiver.on('/flaky', () => (receiverDown ? 503 : 204));
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

async function deliveriesOf(callId: string): Promise<ApiSchemas['WebhookDelivery'][]> {
  const { data, error } = await api.GET('/v1/phoneCalls/{id}/webhookDeliveries', {
    params: { path: { id: callId } },
  });
  expect(error).toBeUndefined();
  return data!.data;
}

describe('webhook deliveries and redelivery', () => {
  let callId: string;
  let failed: ApiSchemas['WebhookDelivery'];

  it("lists each event sent to the call's endpoint with every attempt; a receiver down to the end leaves it failed", async () => {
    const hook = { url: `${receiver.url}/flaky`, subscribedEvent: 'phoneCall.completed', secret: 'a per-call secret' };
    const created = await api.POST('/v1/phoneCalls', {
      body: seededCallBody(stack.team, '+14155550007', {
        phoneCallWebhooks: [hook],
      }) as ApiSchemas['PhoneCallCreateRequest'],
    });
    expect(created.response.status).toBe(201);
    callId = created.data!.data._id;

    failed = await eventually(
      async () => (await deliveriesOf(callId)).find((d) => d.state === 'failed'),
      60_000,
      'the completed event to fail',
    );
    expect(failed).toMatchObject({
      phoneCallId: callId,
      webhookId: null,
      eventId: `evt_${callId}_phoneCall.completed`,
      eventType: 'phoneCall.completed',
      method: 'POST',
      url: hook.url,
      redeliveries: 0,
    });
    expect(failed.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 503],
    ]);
    expect(receiver.at('/flaky')).toHaveLength(4);
  });

  it('redelivers the same event on request, one redelivery at a time (of four asked at once, one), its attempts numbered on', async () => {
    // Four requests at once: one redelivery starts, the others are refused.
    const asked = await Promise.all(
      Array.from({ length: 4 }, () =>
        api.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: failed._id } } }),
      ),
    );
    expect(asked.map((res) => res.response.status).sort()).toEqual([202, 400, 400, 400]);
    const first = asked.find((res) => res.response.status === 202)!;
    expect(first.data!.data).toMatchObject({ _id: failed._id, state: 'pending', redeliveries: 1 });
    for (const refused of asked.filter((res) => res.response.status === 400))
      expect([
        ['this event is still being delivered; redeliver it once it has ended'],
        ['this delivery is being redelivered already'],
      ]).toContainEqual(refused.error!.error.message);

    // Its retries take over a second: a second request now meets it running.
    const again = await api.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: failed._id } } });
    expect(again.response.status).toBe(400);
    expect(again.error!.error.message).toEqual(['this event is still being delivered; redeliver it once it has ended']);

    const refailed = await eventually(async () => {
      const delivery = (await deliveriesOf(callId)).find((d) => d._id === failed._id)!;
      return delivery.state === 'failed' ? delivery : undefined;
    });
    expect(refailed.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

    // The receiver is back: the next redelivery gets through at its first attempt.
    receiverDown = false;
    const second = await api.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: failed._id } } });
    expect(second.response.status).toBe(202);
    const delivered = await eventually(async () => {
      const delivery = (await deliveriesOf(callId)).find((d) => d._id === failed._id)!;
      return delivery.state === 'delivered' ? delivery : undefined;
    });
    expect(delivered.redeliveries).toBe(2);
    expect(delivered.attempts.at(-1)).toMatchObject({ attempt: 9, statusCode: 204, error: null });
    // Its write is ranked as redelivery 2's (from its workflow id), above anything the stream wrote.
    const stored = await WebhookDelivery.findById(failed._id).lean();
    expect(stored?.writeOrder).toBe(deliveryWriteOrder(2, 9, true, 1));

    // Every request carried the one webhook-id and the same signed event.
    const requests = receiver.at('/flaky');
    expect(requests).toHaveLength(9);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([failed.eventId]));
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(JSON.parse(requests[8]!.body)).toMatchObject({ type: 'phoneCall.completed', data: { _id: callId } });
  });

  it('redelivers a record left pending with nothing delivering it, but not one whose redelivery is starting', async () => {
    // Before, a record left pending was refused for good ("still being delivered").
    // As the call's stream left it: no redelivery's write order (its writes would rank below it).
    const source = (await WebhookDelivery.findById(failed._id, { writeOrder: 0 }).lean())!;
    // A team webhook whose stream for this call the server no longer keeps (past its retention).
    // (Written here, and removed at the end.)
    const hook = {
      _id: new Types.ObjectId(),
      teamId: new Types.ObjectId(stack.team.teamId),
      url: `${receiver.url}/flaky`,
      subscribedEvents: ['phoneCall.completed'],
      method: 'POST',
      secretSealed: createSecretBox(stack.config.ENCRYPTION_KEY).seal(`whsec_${randomBytes(24).toString('base64')}`),
    };
    await Webhook.collection.insertOne(hook);
    const hookId = hook._id.toHexString();
    const copy = (
      name: string,
      fields: { redeliveries: number; updatedAt: Date; endpointKey?: string; webhookId?: Types.ObjectId },
    ) => ({
      ...source,
      _id: new Types.ObjectId(),
      eventId: `${source.eventId}_${name}`,
      state: 'pending',
      ...fields,
    });
    const records = [
      // The API died between its claim of redelivery 1 and the start, two minutes ago.
      copy('claim-abandoned', { redeliveries: 1, updatedAt: new Date(Date.now() - 120_000) }),
      // The call's stream ended with the store down through its last attempt and its note.
      copy('stream-ended', { redeliveries: 0, updatedAt: new Date() }),
      // Claimed a moment ago: its start may be under way.
      copy('claim-starting', { redeliveries: 1, updatedAt: new Date() }),
      copy('stream-gone', {
        redeliveries: 0,
        updatedAt: new Date(Date.now() - 120_000),
        endpointKey: `wh-${hookId}`,
        webhookId: new Types.ObjectId(hookId),
      }),
    ];
    await WebhookDelivery.collection.insertMany(records);
    try {
      const redeliver = (id: Types.ObjectId) =>
        api.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: id.toHexString() } } });
      const [abandoned, ended, starting, gone] = await Promise.all(records.map((r) => redeliver(r._id)));
      // It keeps its number: should the lost start land after all, only one of them runs.
      expect(abandoned!.data?.data).toMatchObject({ state: 'pending', redeliveries: 1 });
      expect(ended!.data?.data).toMatchObject({ state: 'pending', redeliveries: 1 });
      expect(gone!.data?.data).toMatchObject({ state: 'pending', redeliveries: 1 });
      expect(starting!.response.status).toBe(400);
      expect(starting!.error!.error.message).toEqual([
        'this event is still being delivered; redeliver it once it has ended',
      ]);
      for (const [record, n] of [
        [records[0]!, 1],
        [records[1]!, 1],
        [records[3]!, 1],
      ] as const) {
        await stack.temporal.workflow.getHandle(redeliveryWorkflowId(record._id.toHexString(), n)).result();
        expect(await WebhookDelivery.findById(record._id).lean()).toMatchObject({
          state: 'delivered',
          redeliveries: n,
        });
      }
    } finally {
      // Whatever happened: no later call of this team is sent to the team webhook, nor lists these.
      await WebhookDelivery.deleteMany({ _id: { $in: records.map((r) => r._id) } });
      await Webhook.collection.deleteOne({ _id: hook._id });
    }
  });

  it("keeps other teams out: another team's key finds neither the deliveries nor the redelivery", async () => {
    const other = await stack.seedTeam('Other team');
    const otherApi = createApiClient({ baseUrl: stack.baseUrl, key: other.key });
    const listed = await otherApi.GET('/v1/phoneCalls/{id}/webhookDeliveries', { params: { path: { id: callId } } });
    expect(listed.response.status).toBe(404);
    const redelivered = await otherApi.POST('/v1/webhookDeliveries/{id}/redeliver', {
      params: { path: { id: failed._id } },
    });
    expect(redelivered.response.status).toBe(404);
    expect(redelivered.error!.error.message).toEqual([`webhook delivery ${failed._id} not found`]);
    // Nothing was started for it.
    expect((await deliveriesOf(callId)).find((d) => d._id === failed._id)!.redeliveries).toBe(2);
  });

  it("lists a deleted call's deliveries, its failed phoneCall.deleted among them (to the team's webhook and its own), to its own team only", async () => {
    receiver.on('/down', () => 503);
    const team = await stack.seedTeam('Deleting team');
    const teamApi = createApiClient({ baseUrl: stack.baseUrl, key: team.key });
    const hook = await teamApi.POST('/v1/webhooks', {
      body: {
        teamId: team.teamId,
        url: `${receiver.url}/down`,
        subscribedEvents: ['phoneCall.deleted'],
        method: 'POST',
      },
    });
    expect(hook.response.status).toBe(200);
    const created = await teamApi.POST('/v1/phoneCalls', {
      body: seededCallBody(team, '+14155550008', {
        callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(),
        phoneCallWebhooks: [
          { url: `${receiver.url}/down`, subscribedEvent: 'phoneCall.deleted', secret: 'its own secret' },
        ],
      }) as ApiSchemas['PhoneCallCreateRequest'],
    });
    const id = created.data!.data._id;
    const list = () => teamApi.GET('/v1/phoneCalls/{id}/webhookDeliveries', { params: { path: { id } } });
    expect((await list()).data!.data).toEqual([]);
    const deleted = await teamApi.DELETE('/v1/phoneCalls/{id}', { params: { path: { id } } });
    expect(deleted.response.status).toBe(200);

    const failedDeleted = await eventually(
      async () => {
        const deliveries = (await list()).data!.data;
        return deliveries.length === 2 && deliveries.every((d) => d.state === 'failed') ? deliveries : undefined;
      },
      60_000,
      'the deleted event to fail at both endpoints',
    );
    const byWebhook = (webhookId: string | null) => failedDeleted.find((d) => d.webhookId === webhookId)!;
    for (const webhookId of [hook.data!.data._id, null]) {
      expect(byWebhook(webhookId)).toMatchObject({
        phoneCallId: id,
        eventType: 'phoneCall.deleted',
        url: `${receiver.url}/down`,
      });
      // Found through the API, so it can be sent again: the call's own webhook is kept with its
      // deletion note, though the call's record is gone.
      const redelivered = await teamApi.POST('/v1/webhookDeliveries/{id}/redeliver', {
        params: { path: { id: byWebhook(webhookId)._id } },
      });
      expect(redelivered.response.status, String(webhookId)).toBe(202);
    }

    // Another team's key learns nothing, word for word as for a call that never was.
    const elsewhere = await api.GET('/v1/phoneCalls/{id}/webhookDeliveries', { params: { path: { id } } });
    expect(elsewhere.response.status).toBe(404);
    expect(elsewhere.error!.error.message).toEqual([`phone call ${id} not found`]);
    const never = await api.GET('/v1/phoneCalls/{id}/webhookDeliveries', {
      params: { path: { id: 'ABCDEF0123456789abcdef01' } },
    });
    expect(never.error!.error.message).toEqual(['phone call ABCDEF0123456789abcdef01 not found']);
  });

  /** A write to the delivery record of `eventId` (endpoint `call:9`), made as attempt `attempt`. */
  const attemptRecord = (
    eventId: string,
    attempt: number,
    attemptedAt: Date,
    write: { state?: DeliveryState; run?: number; made?: boolean; activityTry?: number } = {},
  ): DeliveryAttemptRecord => ({
    eventId,
    endpointKey: 'call:9',
    teamId: stack.team.teamId,
    callId,
    webhookId: null,
    eventType: 'phoneCall.queued',
    url: `${receiver.url}/dated`,
    method: 'POST',
    state: write.state ?? 'pending',
    event: { type: 'phoneCall.queued', timestamp: attemptedAt.toISOString(), data: {} },
    attempt: { attempt, attemptedAt, statusCode: null, durationMs: 15_000, error: 'timed out' },
    writeOrder: deliveryWriteOrder(write.run ?? 0, attempt, write.made ?? true, write.activityTry ?? 1),
  });

  it("dates a delivery by its first attempt's start, not its end: a receiver that hangs does not reorder the list", async () => {
    const store = createWebhookStore();
    const began = new Date(Date.now() - 15_000);
    const eventId = `evt_${callId}_dated`;
    await store.recordAttempt(attemptRecord(eventId, 1, began));
    await store.recordAttempt(attemptRecord(eventId, 2, new Date()));
    const listed = (await deliveriesOf(callId)).find((d) => d.eventId === eventId)!;
    expect(listed.createdAt).toBe(began.toISOString());
    expect(listed.attempts.map((a) => a.attempt)).toEqual([1, 2]);
  });

  it('lists the oldest deliveries of a call that has more than the list holds', async () => {
    // Written newest first: the store meets them in that order, and before, the limit kept the newest.
    const teamId = new Types.ObjectId(stack.team.teamId);
    const phoneCallId = new Types.ObjectId();
    const oldest = Date.now() - 86_400_000;
    const records = Array.from({ length: MAX_DELIVERIES_PER_CALL + 1 }, (_, i) => ({
      teamId,
      phoneCallId,
      webhookId: null,
      endpointKey: 'call-0',
      eventId: `evt_${phoneCallId.toHexString()}_${i}`,
      eventType: 'phoneCall.ringing',
      url: 'https://example.com/hook',
      method: 'POST',
      state: 'delivered',
      attempts: [],
      event: null,
      redeliveries: 0,
      createdAt: new Date(oldest + (MAX_DELIVERIES_PER_CALL - i) * 1_000),
      updatedAt: new Date(),
    }));
    await WebhookDelivery.collection.insertMany(records);
    const listed = await deliveriesOf(phoneCallId.toHexString());
    expect(listed).toHaveLength(MAX_DELIVERIES_PER_CALL);
    expect(listed[0]!.createdAt).toBe(new Date(oldest).toISOString());
    expect(listed.at(-1)!.createdAt).toBe(new Date(oldest + (MAX_DELIVERIES_PER_CALL - 1) * 1_000).toISOString());
    await WebhookDelivery.deleteMany({ phoneCallId });
  });

  it("keeps the state of the latest write when an earlier attempt's write lands late, and lists every attempt in order", async () => {
    const store = createWebhookStore();
    const first = new Date(Date.now() - 60_000);
    const second = new Date(Date.now() - 30_000);
    const eventId = `evt_${callId}_late`;
    // Attempt 2 delivered; then attempt 1's write (its try given up on by the server) arrives.
    await store.recordAttempt(attemptRecord(eventId, 2, second, { state: 'delivered' }));
    await store.recordAttempt(attemptRecord(eventId, 1, first, { state: 'pending' }));
    const listed = (await deliveriesOf(callId)).find((d) => d.eventId === eventId)!;
    expect(listed.state).toBe('delivered');
    expect(listed.attempts.map((a) => [a.attempt, a.attemptedAt])).toEqual([
      [1, first.toISOString()],
      [2, second.toISOString()],
    ]);
    expect(listed.createdAt).toBe(first.toISOString());
  });

  it("keeps a later try's state over an earlier try's late write of the same attempt, and a not-made note's over both", async () => {
    const store = createWebhookStore();
    const eventId = `evt_${callId}_tries`;
    const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000);
    await store.recordAttempt(attemptRecord(eventId, 1, at(50), { state: 'delivered', activityTry: 2 }));
    await store.recordAttempt(attemptRecord(eventId, 1, at(60), { state: 'pending', activityTry: 1 }));
    let listed = (await deliveriesOf(callId)).find((d) => d.eventId === eventId)!;
    expect(listed.state).toBe('delivered');
    expect(listed.attempts).toHaveLength(2);

    // The last attempt could not be made (its activity gave up after a try's write landed unseen):
    // the note that it failed comes after every try of that attempt.
    await store.recordAttempt(attemptRecord(eventId, 2, at(20), { state: 'pending', activityTry: 7 }));
    await store.recordAttempt(attemptRecord(eventId, 2, at(10), { state: 'failed', made: false, activityTry: 1 }));
    listed = (await deliveriesOf(callId)).find((d) => d.eventId === eventId)!;
    expect(listed.state).toBe('failed');
    expect(listed.attempts.map((a) => a.attempt)).toEqual([1, 1, 2, 2]);
  });

  it("gives a redelivery the record's state though its attempts are numbered below the stream's last", async () => {
    const store = createWebhookStore();
    const eventId = `evt_${callId}_gap`;
    const [first, last, redelivered] = [90, 60, 10].map((secondsAgo) => new Date(Date.now() - secondsAgo * 1000));
    // The stream's attempts 2 and 3 never reached the record (the store down through all of them): 2
    // entries, the last numbered 4, so redelivery 1 numbers its first attempt 3.
    await store.recordAttempt(attemptRecord(eventId, 1, first!));
    await store.recordAttempt(attemptRecord(eventId, 4, last!, { state: 'failed' }));
    await store.recordAttempt(attemptRecord(eventId, 3, redelivered!, { state: 'delivered', run: 1 }));
    const listed = (await deliveriesOf(callId)).find((d) => d.eventId === eventId)!;
    expect(listed.state).toBe('delivered');
    // Oldest first, by when each was sent, whatever its number.
    expect(listed.attempts.map((a) => [a.attempt, a.attemptedAt])).toEqual([
      [1, first!.toISOString()],
      [4, last!.toISOString()],
      [3, redelivered!.toISOString()],
    ]);
  });

  it('needs the webhooks scopes, and answers 404 for ids that are not ids', async () => {
    const reader = await api.GET('/v1/phoneCalls/{id}/webhookDeliveries', { params: { path: { id: 'nope' } } });
    expect(reader.response.status).toBe(404);
    const missing = await api.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: 'nope' } } });
    expect(missing.response.status).toBe(404);

    const { key } = await createKey({ team: stack.team.teamId, scopes: 'calls:read,webhooks:read' });
    const readOnly = createApiClient({ baseUrl: stack.baseUrl, key });
    expect(
      (await readOnly.GET('/v1/phoneCalls/{id}/webhookDeliveries', { params: { path: { id: callId } } })).response
        .status,
    ).toBe(200);
    const refused = await readOnly.POST('/v1/webhookDeliveries/{id}/redeliver', {
      params: { path: { id: failed._id } },
    });
    expect(refused.response.status).toBe(403);
  });
});

describe('a redelivery whose start seemed to fail but went through', () => {
  /** A completed call to `to` whose own webhook, a receiver path answering 503, failed every attempt. */
  async function completedEventFailed(path: string, to: string) {
    receiver.on(path, () => 503);
    const hook = { url: `${receiver.url}${path}`, subscribedEvent: 'phoneCall.completed', secret: 'a secret' };
    const created = await api.POST('/v1/phoneCalls', {
      body: seededCallBody(stack.team, to, { phoneCallWebhooks: [hook] }) as ApiSchemas['PhoneCallCreateRequest'],
    });
    expect(created.error).toBeUndefined();
    const id = created.data!.data._id;
    const deliveryOf = async () => (await deliveriesOf(id)).find((d) => d.eventType === 'phoneCall.completed');
    const failedOnce = await eventually(
      async () => ((await deliveryOf())?.state === 'failed' ? deliveryOf() : undefined),
      60_000,
      'the completed event to fail',
    );
    return { id, deliveryOf, failedOnce: failedOnce! };
  }

  it('leaves the record redeliverable: the next redelivery takes the next number instead of staying pending', async () => {
    const { deliveryOf, failedOnce } = await completedEventFailed('/unreachable', '+14155550009');
    const redeliver = () =>
      api.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: failedOnce!._id } } });
    const ended = async (attempts: number) =>
      eventually(async () => {
        const delivery = await deliveryOf();
        return delivery?.state === 'failed' && delivery.attempts.length === attempts ? delivery : undefined;
      });

    // The server takes the start, and the answer is lost (a deadline): the request reverts its claim.
    const workflows = stack.temporal.workflow;
    const lostAnswer = createRedelivery({
      client: {
        workflow: {
          start: async (...args: Parameters<typeof workflows.start>) => {
            await workflows.start(...args);
            throw new Error('deadline exceeded');
          },
          getHandle: workflows.getHandle.bind(workflows),
        },
      } as unknown as Client,
      taskQueue: stack.config.TEMPORAL_TASK_QUEUE,
      retryDelaysMs: stack.config.WEBHOOK_RETRY_DELAYS,
    });
    await expect(lostAnswer.redeliver(stack.team.teamId, failedOnce!._id)).rejects.toThrow('deadline exceeded');
    // Redelivery 1 runs all the same, to its end.
    await workflows.getHandle(redeliveryWorkflowId(failedOnce!._id, 1)).result();
    expect(await ended(8)).toMatchObject({ redeliveries: 0 });

    // The next redelivery finds number 1 taken (and ended): it runs as number 2.
    const next = await redeliver();
    expect(next.error).toBeUndefined();
    expect(next.response.status).toBe(202);
    expect(next.data!.data).toMatchObject({ state: 'pending', redeliveries: 2 });
    expect(await ended(12)).toMatchObject({ redeliveries: 2 });

    // Again, now met while the redelivery that went through still runs: refused, and pending while it
    // does; once it ends the record is failed again and the next redelivery is taken.
    await expect(lostAnswer.redeliver(stack.team.teamId, failedOnce!._id)).rejects.toThrow('deadline exceeded');
    const meanwhile = await redeliver();
    expect(meanwhile.response.status).toBe(400);
    await workflows.getHandle(redeliveryWorkflowId(failedOnce!._id, 3)).result();
    await ended(16);
    const last = await redeliver();
    expect(last.response.status).toBe(202);
    expect(last.data!.data).toMatchObject({ state: 'pending', redeliveries: 4 });
    await ended(20);
    expect(receiver.at('/unreachable')).toHaveLength(20);
  });

  it('a request that meets the redelivery still running gives its claim back: the record is never left pending', async () => {
    // The running redelivery may have written its last attempt already (it ends a task later). Here a
    // stand-in holds the number, running on a queue no worker polls, the record failed as its last
    // attempt left it.
    // A kept claim left the record pending for good: every later redelivery was refused.
    const { id, deliveryOf, failedOnce } = await completedEventFailed('/unreachable-2', '+14155550008');
    const standIn = await stack.temporal.workflow.start('deliverWebhookEventsWorkflow', {
      workflowId: redeliveryWorkflowId(failedOnce!._id, 1),
      taskQueue: `nobody-polls-${id}`,
      args: [{ redelivery: { firstAttempt: failedOnce!.attempts.length + 1 } }],
    });
    // Its last attempt, as the redelivery records one.
    const attempt = failedOnce!.attempts.length + 1;
    await WebhookDelivery.updateOne(
      { _id: failedOnce!._id },
      {
        $set: { state: 'failed' },
        $push: { attempts: { attempt, attemptedAt: new Date(), statusCode: 503, durationMs: 3, error: 'HTTP 503' } },
      },
    );
    const redeliver = () =>
      api.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: failedOnce!._id } } });
    try {
      expect((await redeliver()).response.status).toBe(400);
      expect(await deliveryOf()).toMatchObject({ state: 'failed', redeliveries: 0 });
    } finally {
      await standIn.terminate('test over');
    }
    // Number 1 is taken and ended: the next redelivery runs as number 2.
    const next = await redeliver();
    expect(next.response.status).toBe(202);
    expect(next.data!.data).toMatchObject({ state: 'pending', redeliveries: 2 });
  });
});

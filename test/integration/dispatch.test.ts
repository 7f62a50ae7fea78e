// The record and its workflow are made together: a failed start leaves no record, and a record left
// pending by a crash is started by the reconciler.
import type { AddressInfo } from 'node:net';
import { Types } from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDispatcher, reconcilePendingCalls } from '../../src/calls/dispatch';
import { DispatchBatch } from '../../src/data/models/dispatch-batch';
import { PhoneCall } from '../../src/data/models/phone-call';
import { createLogger } from '../../src/logger';
import { createApiApp, listen } from '../../src/main/api';
import { connectTemporalClient } from '../../src/temporal/connection';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A queued call record as the API writes it, written directly: its workflow does not exist yet. */
function rawQueuedCall(
  id: Types.ObjectId,
  batchId: Types.ObjectId,
  toPhoneNumber: string,
  extra: Record<string, unknown> = {},
) {
  return {
    _id: id,
    teamId: new Types.ObjectId(stack.team.teamId),
    callTemplateId: new Types.ObjectId(stack.team.templateId),
    toPhoneNumber,
    fromPhoneNumber: '+14155550100',
    promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
    phoneCallWebhooks: [],
    resultValues: [],
    customTagsHitOnCall: [],
    status: 'queued',
    telephonyProvider: 'twilio',
    record: false,
    callOrigin: 'batch',
    dispatchBatchId: batchId,
    createdAt: new Date(),
    updatedAt: new Date(),
    ...extra,
  };
}

it('answers 500 and keeps no record when the workflow cannot be started', async () => {
  // The same API over a Temporal namespace that does not exist: every workflow start fails.
  const temporal = await connectTemporalClient({
    address: stack.config.TEMPORAL_ADDRESS,
    namespace: 'no-such-namespace',
  });
  const server = await listen(
    createApiApp({ config: stack.config, logger: createLogger('silent', 'test'), temporal }),
    0,
    '127.0.0.1',
  );
  try {
    const broken = apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, stack.team.key);
    const before = await PhoneCall.countDocuments({ teamId: stack.team.teamId });
    const batchesBefore = await DispatchBatch.countDocuments({ teamId: stack.team.teamId });
    const res = await broken.post('/v1/phoneCalls', {
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: '+14155556001',
      promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
    });
    expect(errorMessages(res, 500)).toEqual(['the call could not be scheduled; nothing was created, please retry']);
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
    expect(await PhoneCall.countDocuments({ teamId: stack.team.teamId })).toBe(before);
    expect(await DispatchBatch.countDocuments({ teamId: stack.team.teamId })).toBe(batchesBefore);
  } finally {
    server.close();
    await temporal.connection.close();
  }
});

it('the reconciler starts the workflows of a batch left pending by a crash', async () => {
  // What an API process that died between storing a batch and starting its workflows leaves.
  const batch = await DispatchBatch.create({
    teamId: new Types.ObjectId(stack.team.teamId),
    size: 2,
    state: 'pending',
  });
  await DispatchBatch.collection.updateOne({ _id: batch._id }, { $set: { createdAt: new Date(Date.now() - 120_000) } });
  const ids = [new Types.ObjectId(), new Types.ObjectId()];
  const longAgo = new Date(Date.now() - 120_000);
  await PhoneCall.collection.insertMany(
    ids.map((id, i) => rawQueuedCall(id, batch._id, `+1415555600${2 + i}`, { createdAt: longAgo, updatedAt: longAgo })),
  );
  const dispatcher = createDispatcher({
    client: stack.temporal,
    taskQueue: stack.config.TEMPORAL_TASK_QUEUE,
    ringTimeoutSeconds: stack.config.RING_TIMEOUT_SECONDS,
  });
  const logger = createLogger('silent', 'test');
  // The worker's own reconciler may get there first; either way the batch ends up started.
  await reconcilePendingCalls({ dispatcher, logger, olderThanMs: 60_000 });
  expect((await DispatchBatch.findById(batch._id).lean())?.state).toBe('started');
  const api = apiClient(stack.baseUrl, stack.team.key);
  for (const id of ids) {
    await eventually(
      async () =>
        (await api.get(`/v1/phoneCalls/${id.toHexString()}`)).body.data.status === 'completed' ? true : undefined,
      60_000,
    );
  }
  expect(stack.emulator.callsTo('+14155556002')).toBe(1);
  expect(stack.emulator.callsTo('+14155556003')).toBe(1);
  // A second pass finds nothing left to do.
  expect(await reconcilePendingCalls({ dispatcher, logger, olderThanMs: 60_000 })).toBe(0);
  // Even a batch wrongly left pending never brings an ended call back to life.
  await DispatchBatch.updateOne({ _id: batch._id }, { $set: { state: 'pending' } });
  await reconcilePendingCalls({ dispatcher, logger, olderThanMs: 60_000 });
  await new Promise((r) => setTimeout(r, 2_000));
  expect(stack.emulator.callsTo('+14155556002')).toBe(1);
  expect((await api.get(`/v1/phoneCalls/${ids[0]!.toHexString()}`)).body.data.status).toBe('completed');
});

it('the worker runs the reconciler by itself', async () => {
  const batch = await DispatchBatch.create({
    teamId: new Types.ObjectId(stack.team.teamId),
    size: 0,
    state: 'pending',
  });
  // Older than RECONCILE_AFTER_SECONDS (300 s): the worker's next pass (every 30 s at most) takes it.
  await DispatchBatch.collection.updateOne({ _id: batch._id }, { $set: { createdAt: new Date(Date.now() - 400_000) } });
  await eventually(
    async () => ((await DispatchBatch.findById(batch._id).lean())?.state === 'started' ? true : undefined),
    30_000,
    'the reconciler',
  );
}, 60_000);

it('a delete that arrives before the batch started the workflow still goes through the workflow', async () => {
  const batch = await DispatchBatch.create({
    teamId: new Types.ObjectId(stack.team.teamId),
    size: 1,
    state: 'pending',
  });
  const id = new Types.ObjectId();
  await PhoneCall.collection.insertOne(
    rawQueuedCall(id, batch._id, '+14155556010', { callDelayedUntil: new Date(Date.now() + 3_600_000) }),
  );
  const api = apiClient(stack.baseUrl, stack.team.key);
  const deleted = await api.delete(`/v1/phoneCalls/${id.toHexString()}`);
  expect(deleted.status).toBe(200);
  expect(deleted.body.data).toMatchObject({ _id: id.toHexString(), status: 'queued' });
  errorMessages(await api.get(`/v1/phoneCalls/${id.toHexString()}`), 404);
  const result = await stack.temporal.workflow.getHandle(`phoneCall-${id.toHexString()}`).result();
  expect(result.phase).toBe('deleted');
  expect(stack.emulator.callsTo('+14155556010')).toBe(0);
});

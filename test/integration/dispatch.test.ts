// The record and its workflow are made together: a failed start leaves no record, and a record left
// pending by a crash is started by the reconciler.
import type { AddressInfo } from 'node:net';
import { temporal } from '@temporalio/proto';
import { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHashOf, withIdempotency } from '../../src/api/idempotency';
import type { ApiContext } from '../../src/api/state';
import {
  batchStartOf,
  createDispatcher,
  reconcilePendingCalls,
  startWrittenBatch,
  STARTED_BATCH_KEPT_MS,
  sweepStartedBatches,
} from '../../src/calls/dispatch';
import {
  IdempotencyRecord,
  IdempotencyTakeover,
  sweepIdempotencyRecords,
} from '../../src/data/models/idempotency-record';
import { noteDeletedFromBatch } from '../../src/data/models/batch-call-deletion';
import {
  FILE_CONTROL_REACH_MS,
  FileControl,
  fileStateOf,
  setFileState,
  type FileState,
} from '../../src/data/models/file-control';
import { createCallStore } from '../../src/data/call-store';
import { DispatchBatch } from '../../src/data/models/dispatch-batch';
import { PhoneCall } from '../../src/data/models/phone-call';
import { createLogger } from '../../src/logger';
import { createApiApp, listen } from '../../src/main/api';
import { connectTemporalClient } from '../../src/temporal/connection';
import { CALL_DELETED_SINCE } from '../../src/api/routes/phone-calls';
import { apiClient, callReaching, errorMessages, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  // The worker's reconciler takes batches pending for 8 s, in passes 2 s apart.
  stack = await startTestStack({ env: { RECONCILE_AFTER_SECONDS: '8' } });
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

/** The same API over a Temporal namespace that does not exist: every workflow start fails. */
async function withStartsFailing(work: (broken: ReturnType<typeof apiClient>) => Promise<void>): Promise<void> {
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
    await work(apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, stack.team.key));
  } finally {
    server.close();
    await temporal.connection.close();
  }
}

it('answers 500 and keeps no record when the workflow cannot be started', async () => {
  await withStartsFailing(async (broken) => {
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
  });
});

it('keeps the Idempotency-Key for a retry when the workflow cannot be started and its record not removed', async () => {
  // Freed, the key would let the client's retry create a second call beside this one, which the
  // reconciler starts once Temporal is back (its batch written whole).
  const key = `unstarted-${Date.now()}`;
  const { deleteOne, deleteMany } = PhoneCall.collection;
  const unanswered = async () => {
    throw new Error('the store did not answer');
  };
  PhoneCall.collection.deleteOne = unanswered as typeof deleteOne;
  PhoneCall.collection.deleteMany = unanswered as typeof deleteMany;
  try {
    await withStartsFailing(async (broken) => {
      const res = await broken.post(
        '/v1/phoneCalls',
        {
          teamId: stack.team.teamId,
          callTemplateId: stack.team.templateId,
          toPhoneNumber: '+14155556002',
          promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
        },
        { headers: { 'Idempotency-Key': key } },
      );
      // Not "nothing was created": the call is there, and the reconciler starts it once Temporal is back.
      expect(errorMessages(res, 500)).toEqual([
        'the call could not be scheduled, and whether it was created is not known: retry with the same ' +
          'Idempotency-Key, or look for the call before creating it again',
      ]);
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
    });
  } finally {
    PhoneCall.collection.deleteOne = deleteOne;
    PhoneCall.collection.deleteMany = deleteMany;
  }
  const record = await IdempotencyRecord.findOne({ key }).lean();
  expect(record?.state).toBe('pending');
  const left = await PhoneCall.find({ dispatchBatchId: record!.dispatchBatchId }).lean();
  expect(left.map((c) => c.toPhoneNumber)).toEqual(['+14155556002']);
  await PhoneCall.deleteMany({ dispatchBatchId: record!.dispatchBatchId });
  await DispatchBatch.deleteOne({ _id: record!.dispatchBatchId });
});

it('a start that went through though its answer was an error: the retry with the key answers with that call, dialled once', async () => {
  // The server started the workflow, but the API heard an error (a deadline, a connection lost). Its
  // dial may be under way with the record still `queued` (it is written `ringing` once the provider
  // answers). Before, a record found queued was removed with its batch as "nothing was created", and
  // one found dialling kept without its batch: either way the retry wrote and dialled a second call.
  const key = `started-unheard-${Date.now()}`;
  const to = '+14155556009';
  const temporal = await connectTemporalClient({
    address: stack.config.TEMPORAL_ADDRESS,
    namespace: stack.config.TEMPORAL_NAMESPACE,
  });
  const start = temporal.workflow.start.bind(temporal.workflow);
  temporal.workflow.start = (async (...args: Parameters<typeof start>) => {
    await start(...args);
    throw new Error('deadline exceeded');
  }) as typeof start;
  const server = await listen(
    createApiApp({ config: stack.config, logger: createLogger('silent', 'test'), temporal }),
    0,
    '127.0.0.1',
  );
  const body = {
    teamId: stack.team.teamId,
    callTemplateId: stack.team.templateId,
    toPhoneNumber: to,
    promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
  };
  try {
    const unheard = apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, stack.team.key);
    const res = await unheard.post('/v1/phoneCalls', body, { headers: { 'Idempotency-Key': key } });
    expect(errorMessages(res, 500)[0]).toMatch(
      /^the call could not be scheduled, and whether it was created is not known/,
    );
  } finally {
    server.close();
    await temporal.connection.close();
  }
  const [call, ...others] = await PhoneCall.find({
    teamId: new Types.ObjectId(stack.team.teamId),
    toPhoneNumber: to,
  }).lean();
  expect(others).toEqual([]);
  // The retry comes once the dead request's lease has run out (15 s; moved back here).
  await IdempotencyRecord.updateOne({ key }, { $set: { leaseUntil: new Date(Date.now() - 1_000) } });
  const retry = await apiClient(stack.baseUrl, stack.team.key).post('/v1/phoneCalls', body, {
    headers: { 'Idempotency-Key': key },
  });
  expect(retry.status).toBe(201);
  expect(retry.body.data._id).toBe(call!._id.toHexString());
  expect(await PhoneCall.countDocuments({ teamId: new Types.ObjectId(stack.team.teamId), toPhoneNumber: to })).toBe(1);
  const id = call!._id.toHexString();
  await callReaching(apiClient(stack.baseUrl, stack.team.key), id, 'completed', 60_000, `call ${id} to complete`);
  expect(stack.emulator.callsTo(to)).toBe(1);
});

/** Until the function it answers is called, a write of a call to `to` lands and then answers an error. */
function callWritesFailAfterLanding(to: string): () => void {
  const bulkWrite = PhoneCall.collection.bulkWrite.bind(PhoneCall.collection);
  PhoneCall.collection.bulkWrite = (async (...args: Parameters<typeof bulkWrite>) => {
    const result = await bulkWrite(...args);
    if (JSON.stringify(args[0]).includes(to)) throw new Error('connection lost after the write');
    return result;
  }) as typeof bulkWrite;
  return () => {
    PhoneCall.collection.bulkWrite = bulkWrite;
  };
}

/** A single create of a call to `to`, sent with `Idempotency-Key: key`. */
function createCallTo(to: string, key: string) {
  return apiClient(stack.baseUrl, stack.team.key).post(
    '/v1/phoneCalls',
    {
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: to,
      promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
    },
    { headers: { 'Idempotency-Key': key } },
  );
}

it('a create whose insert landed but answered an error keeps nothing, so its retry makes the one call', async () => {
  // The connection is lost after the server applied the write: the API sees a failure.
  const to = '+14155556081';
  const restore = callWritesFailAfterLanding(to);
  try {
    expect((await createCallTo(to, `insert-landed-${Date.now()}`)).status).toBe(500);
  } finally {
    restore();
  }
  expect(await PhoneCall.countDocuments({ toPhoneNumber: to })).toBe(0);
  const dispatcher = createDispatcher({ client: stack.temporal, config: stack.config });
  await reconcilePendingCalls({ dispatcher, logger: createLogger('silent', 'test'), olderThanMs: 0 });
  expect((await createCallTo(to, `insert-landed-retried-${Date.now()}`)).status).toBe(201);
  await eventually(async () => (stack.emulator.callsTo(to) === 1 ? true : undefined), 30_000, 'the one dial');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(stack.emulator.callsTo(to)).toBe(1);
  expect(await PhoneCall.countDocuments({ toPhoneNumber: to })).toBe(1);
});

it('a create that cannot remove what it may have written leaves its key to a retry, which answers with that call', async () => {
  const to = '+14155556082';
  const key = `cleanup-failed-${Date.now()}`;
  const restore = callWritesFailAfterLanding(to);
  const deleteMany = PhoneCall.deleteMany.bind(PhoneCall);
  PhoneCall.deleteMany = (() => {
    throw new Error('the store is gone too');
  }) as unknown as typeof deleteMany;
  try {
    expect((await createCallTo(to, key)).status).toBe(500);
  } finally {
    restore();
    PhoneCall.deleteMany = deleteMany;
  }
  // The key is still claimed, not freed: once its lease has run out a retry takes it over.
  expect((await IdempotencyRecord.findOne({ key }).lean())?.state).toBe('pending');
  await IdempotencyRecord.updateOne({ key }, { $set: { leaseUntil: new Date(Date.now() - 1_000) } });
  const written = await PhoneCall.findOne({ toPhoneNumber: to }).lean();
  const retried = await createCallTo(to, key);
  expect(retried.status).toBe(201);
  expect(retried.body.data._id).toBe(written!._id.toHexString());
  await eventually(async () => (stack.emulator.callsTo(to) === 1 ? true : undefined), 30_000, 'the one dial');
  expect(await PhoneCall.countDocuments({ toPhoneNumber: to })).toBe(1);
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
  const dispatcher = createDispatcher({ client: stack.temporal, config: stack.config });
  const logger = createLogger('silent', 'test');
  // The worker's own reconciler may get there first; either way the batch ends up started.
  await reconcilePendingCalls({ dispatcher, logger, olderThanMs: 60_000 });
  expect((await DispatchBatch.findById(batch._id).lean())?.state).toBe('started');
  const api = apiClient(stack.baseUrl, stack.team.key);
  for (const id of ids) {
    await callReaching(api, id.toHexString(), 'completed', 60_000);
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
  // Older than RECONCILE_AFTER_SECONDS: the worker's next pass takes it.
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

it("a batch's pause or cancel that finds a call its batch never started starts it with its update: a call due now is never dialled first", async () => {
  // Before, such a call started unpaused and the control's update followed: the workflow's first task
  // could begin the dial in between, ringing a callee of a paused or cancelled batch.
  const api = apiClient(stack.baseUrl, stack.team.key);
  const { EventType } = temporal.api.enums.v1;
  for (const [action, to] of [
    ['pause', '+14155557301'],
    ['cancel', '+14155557302'],
  ] as const) {
    const batch = await DispatchBatch.create({
      teamId: new Types.ObjectId(stack.team.teamId),
      size: 1,
      state: 'pending',
    });
    const id = new Types.ObjectId();
    await PhoneCall.collection.insertOne(rawQueuedCall(id, batch._id, to));
    const res = await api.post(`/v1/phoneCalls/batch/${batch._id.toHexString()}/${action}`);
    expect(res.status, action).toBe(200);
    expect(res.body.data, action).toMatchObject({ calls: 1, changed: 1, unchanged: 0, notQueued: 0 });
    const handle = stack.temporal.workflow.getHandle(`phoneCall-${id.toHexString()}`);
    // The update was taken before the workflow did anything else.
    const { events } = await handle.fetchHistory();
    const firstWork = events!.findIndex(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED ||
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    );
    const accepted = events!.findIndex((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    expect(accepted, action).toBeGreaterThan(0);
    if (firstWork >= 0) expect(accepted, action).toBeLessThan(firstWork);
    if (action === 'cancel') {
      expect((await handle.result()).phase).toBe('deleted');
      errorMessages(await api.get(`/v1/phoneCalls/${id.toHexString()}`), 404);
    } else {
      await eventually(
        async () => {
          const call = (await api.get(`/v1/phoneCalls/${id.toHexString()}`)).body.data;
          return call.statusExtraInfo?.statusCode === 'paused' ? call : undefined;
        },
        20_000,
        'the call to show paused',
      );
      await handle.terminate('test over');
    }
    expect(stack.emulator.callsTo(to), action).toBe(0);
  }
});

it('a control never starts a workflow for a call whose record is no longer queued', async () => {
  // A record left `ringing` whose workflow is gone (ended past the namespace's retention): a pause
  // or resume must not start a new workflow, which would dial the callee again.
  const api = apiClient(stack.baseUrl, stack.team.key);
  const batch = await DispatchBatch.create({
    teamId: new Types.ObjectId(stack.team.teamId),
    size: 1,
    state: 'started',
  });
  const id = new Types.ObjectId();
  const to = '+14155557303';
  await PhoneCall.collection.insertOne(rawQueuedCall(id, batch._id, to, { status: 'ringing' }));
  const res = await api.post(`/v1/phoneCalls/batch/${batch._id.toHexString()}/resume`);
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ calls: 1, changed: 0, notQueued: 1 });
  await expect(stack.temporal.workflow.getHandle(`phoneCall-${id.toHexString()}`).describe()).rejects.toThrow();
  expect(stack.emulator.callsTo(to)).toBe(0);
});

it("a control starts a queued call's workflow only while its batch waits for its starts, written whole", async () => {
  // Started: the workflow ended past retention or was terminated; a new one would dial the callee
  // again. Cut short: the batch is discarded and a retry of its request writes every call again; one
  // started now would be rung twice. Still being written: its request starts it once written.
  const api = apiClient(stack.baseUrl, stack.team.key);
  const later = new Date(Date.now() + 3_600_000);
  const queuedCall = async (
    state: 'started' | 'pending',
    size: number,
    to: string,
    { fileId }: { fileId?: string } = {},
  ) => {
    const batchId = new Types.ObjectId();
    const createdAt = new Date();
    await DispatchBatch.collection.insertOne({
      _id: batchId,
      teamId: new Types.ObjectId(stack.team.teamId),
      size,
      state,
      createdAt,
      updatedAt: createdAt,
    });
    const id = new Types.ObjectId();
    await PhoneCall.collection.insertOne(
      rawQueuedCall(id, batchId, to, { callDelayedUntil: later, ...(fileId ? { fileId, callOrigin: 'file' } : {}) }),
    );
    return { batchId: batchId.toHexString(), id: id.toHexString() };
  };
  const started = await queuedCall('started', 1, '+14155557311');
  const writing = await queuedCall('pending', 2, '+14155557313');
  for (const { batchId } of [started, writing]) {
    for (const action of ['pause', 'resume', 'cancel']) {
      const res = await api.post(`/v1/phoneCalls/batch/${batchId}/${action}`);
      expect(res.status, action).toBe(200);
      expect(res.body.data, action).toMatchObject({ calls: 1, changed: 0, unchanged: 0, notQueued: 1 });
    }
  }
  expect(errorMessages(await api.delete(`/v1/phoneCalls/${started.id}`), 400)).toEqual(['the call has ended']);
  expect(errorMessages(await api.delete(`/v1/phoneCalls/${writing.id}`), 400)).toEqual([
    'the request creating the call is still writing its batch: try again in a moment',
  ]);
  // Past 15 minutes the same batch counts as cut short (asked directly: the stack's reconciler
  // discards such a batch within seconds).
  const writingBatch = new Types.ObjectId(writing.batchId);
  expect(await batchStartOf(writingBatch)).toBe('writing');
  expect(await batchStartOf(writingBatch, Date.now() + 16 * 60_000)).toBe('cut-short');
  for (const { id } of [started, writing]) {
    await expect(stack.temporal.workflow.getHandle(`phoneCall-${id}`).describe()).rejects.toThrow();
    expect((await api.get(`/v1/phoneCalls/${id}`)).body.data.status).toBe('queued');
  }

  // Written whole, its file cancelled while its request still starts its calls (under the control it
  // read before): the cancel starts the workflow with its delete, so the request's start finds it.
  const fileId = `control-race-${new Types.ObjectId().toHexString()}`;
  const whole = await queuedCall('pending', 1, '+14155557314', { fileId });
  await setFileState(stack.team.teamId, fileId, 'cancelled');
  const cancelled = await api.post(`/v1/phoneCalls/batch/${whole.batchId}/cancel`);
  expect(cancelled.body.data).toMatchObject({ calls: 1, changed: 1, notQueued: 0 });
  errorMessages(await api.get(`/v1/phoneCalls/${whole.id}`), 404);
  expect((await stack.temporal.workflow.getHandle(`phoneCall-${whole.id}`).result()).phase).toBe('deleted');
  // A resume of a call written whole starts it too (its request may start it under a pause it read).
  const resumable = await queuedCall('pending', 1, '+14155557315');
  const resumed = await api.post(`/v1/phoneCalls/batch/${resumable.batchId}/resume`);
  expect(resumed.body.data).toMatchObject({ calls: 1, changed: 0, unchanged: 1, notQueued: 0 });
  const handle = stack.temporal.workflow.getHandle(`phoneCall-${resumable.id}`);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  await handle.terminate('test over');
  for (const to of ['+14155557311', '+14155557313', '+14155557314', '+14155557315'])
    expect(stack.emulator.callsTo(to)).toBe(0);
});

describe('a retry with the Idempotency-Key of a request whose API process died', () => {
  const numbers = ['+14155556021', '+14155556022', '+14155556023'];
  const body = () => ({
    phoneCalls: numbers.map((to) => ({
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: to,
      promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
    })),
  });

  /**
   * What the dead request left: its claim on the key (lease run out), its batch and `written` of its
   * calls; `claimedAgoMs` back, its batch in `state`.
   */
  async function deadRequest(
    key: string,
    written: number,
    { claimedAgoMs = 30_000, state = 'pending' }: { claimedAgoMs?: number; state?: 'pending' | 'started' } = {},
  ) {
    const batch = await DispatchBatch.create({
      teamId: new Types.ObjectId(stack.team.teamId),
      size: numbers.length,
      state,
    });
    const ids = numbers.slice(0, written).map(() => new Types.ObjectId());
    if (ids.length) {
      await PhoneCall.collection.insertMany(ids.map((id, i) => rawQueuedCall(id, batch._id, numbers[i]!)));
    }
    await IdempotencyRecord.create({
      teamId: new Types.ObjectId(stack.team.teamId),
      scope: 'POST /v1/phoneCalls/batch',
      key,
      requestHash: requestHashOf(body()),
      state: 'pending',
      createdAt: new Date(Date.now() - claimedAgoMs),
      leaseUntil: new Date(Date.now() - claimedAgoMs + 15_000),
      dispatchBatchId: batch._id,
    });
    return { batchId: batch._id.toHexString(), ids: ids.map((id) => id.toHexString()) };
  }

  const ended = (api: ReturnType<typeof apiClient>, ids: string[]) =>
    Promise.all(ids.map((id) => callReaching(api, id, 'completed', 60_000, `call ${id} to complete`)));

  it('gets the calls that request wrote, each dialled once, and the same answer after', async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const key = `died-after-writing-${Date.now()}`;
    const left = await deadRequest(key, numbers.length);
    const res = await api.post('/v1/phoneCalls/batch', body(), { headers: { 'Idempotency-Key': key } });
    expect(res.status).toBe(201);
    expect(res.body.batchId).toBe(left.batchId);
    expect(res.body.data.map((c: { _id: string }) => c._id)).toEqual(left.ids);
    await ended(api, left.ids);
    for (const to of numbers) expect(stack.emulator.callsTo(to), to).toBe(1);
    expect(await PhoneCall.countDocuments({ dispatchBatchId: new Types.ObjectId(left.batchId) })).toBe(3);
    const replay = await api.post('/v1/phoneCalls/batch', body(), { headers: { 'Idempotency-Key': key } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.map((c: { _id: string }) => c._id)).toEqual(left.ids);
  });

  it('takes the key over though a retry before it died while taking it over, once that claim is a lease old', async () => {
    // FerretDB 1.x never expires the claim that retry left: the key stayed wedged, its retries waiting.
    const api = apiClient(stack.baseUrl, stack.team.key);
    const key = `died-taking-over-${Date.now()}`;
    const left = await deadRequest(key, numbers.length);
    const record = await IdempotencyRecord.findOne({ key }).lean();
    const claimOf = `${stack.team.teamId}:POST /v1/phoneCalls/batch:${key}:${record!.createdAt.getTime()}`;
    await IdempotencyTakeover.create({ _id: claimOf, createdAt: new Date(Date.now() - 20_000) });
    const res = await api.post('/v1/phoneCalls/batch', body(), { headers: { 'Idempotency-Key': key } });
    expect(res.status).toBe(201);
    expect(res.body.data.map((c: { _id: string }) => c._id)).toEqual(left.ids);
    expect(await IdempotencyTakeover.exists({ _id: claimOf })).toBeNull();
    await ended(api, left.ids);
  });

  /**
   * A dead request that got as far as starting its calls: written, workflows started, batch closed.
   * Calls in `later` are scheduled an hour ahead and stay queued; the others are placed at once.
   */
  async function deadRequestStarted(
    scope: 'POST /v1/phoneCalls' | 'POST /v1/phoneCalls/batch',
    key: string,
    requestBody: unknown,
    tos: string[],
    later: Set<string>,
  ) {
    const batch = await DispatchBatch.create({ teamId: new Types.ObjectId(stack.team.teamId), size: tos.length });
    const ids = tos.map(() => new Types.ObjectId());
    await PhoneCall.collection.insertMany(
      ids.map((id, i) =>
        rawQueuedCall(
          id,
          batch._id,
          tos[i]!,
          later.has(tos[i]!) ? { callDelayedUntil: new Date(Date.now() + 3_600_000) } : {},
        ),
      ),
    );
    const dispatcher = createDispatcher({ client: stack.temporal, config: stack.config });
    await startWrittenBatch(
      dispatcher,
      batch._id,
      await PhoneCall.find({ _id: { $in: ids } })
        .sort({ _id: 1 })
        .lean(),
    );
    await IdempotencyRecord.create({
      teamId: new Types.ObjectId(stack.team.teamId),
      scope,
      key,
      requestHash: requestHashOf(requestBody),
      state: 'pending',
      createdAt: new Date(Date.now() - 30_000),
      leaseUntil: new Date(Date.now() - 15_000),
      dispatchBatchId: batch._id,
    });
    return ids.map((id) => id.toHexString());
  }

  it('answers with its calls as created though they were dialled or deleted since, and rings no one twice', async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const key = `died-before-answering-${Date.now()}`;
    const tos = ['+14155556041', '+14155556042', '+14155556043'];
    const requestBody = {
      phoneCalls: tos.map((to) => ({
        teamId: stack.team.teamId,
        callTemplateId: stack.team.templateId,
        toPhoneNumber: to,
        promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
      })),
    };
    const ids = await deadRequestStarted('POST /v1/phoneCalls/batch', key, requestBody, tos, new Set([tos[2]!]));
    await ended(api, ids.slice(0, 2));
    expect((await api.delete(`/v1/phoneCalls/${ids[2]}`)).status).toBe(200);

    const res = await api.post('/v1/phoneCalls/batch', requestBody, { headers: { 'Idempotency-Key': key } });
    expect(res.status).toBe(201);
    const data = res.body.data as Array<{ _id: string; status: string; createdAt: string; updatedAt: string }>;
    expect(data.map((c) => c._id)).toEqual(ids.slice(0, 2));
    for (const call of data) {
      expect(call.status).toBe('queued');
      expect(call.updatedAt).toBe(call.createdAt);
    }
    const replay = await api.post('/v1/phoneCalls/batch', requestBody, { headers: { 'Idempotency-Key': key } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(res.body);
    expect(tos.map((to) => stack.emulator.callsTo(to))).toEqual([1, 1, 0]);
    const team = new Types.ObjectId(stack.team.teamId);
    for (const [i, to] of tos.entries()) {
      expect(await PhoneCall.countDocuments({ teamId: team, toPhoneNumber: to }), to).toBe(i === 2 ? 0 : 1);
    }
  });

  it('answers a single create with its call as created, or 409 once that call was deleted', async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const [dialled, deleted] = ['+14155556044', '+14155556045'];
    const single = (to: string) => ({
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: to,
      promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
    });
    const keyA = `single-died-${Date.now()}-a`;
    const [id] = await deadRequestStarted('POST /v1/phoneCalls', keyA, single(dialled), [dialled], new Set());
    await ended(api, [id!]);
    const res = await api.post('/v1/phoneCalls', single(dialled), { headers: { 'Idempotency-Key': keyA } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ _id: id, status: 'queued', toPhoneNumber: dialled });

    const keyB = `single-died-${Date.now()}-b`;
    const [gone] = await deadRequestStarted(
      'POST /v1/phoneCalls',
      keyB,
      single(deleted),
      [deleted],
      new Set([deleted]),
    );
    expect((await api.delete(`/v1/phoneCalls/${gone}`)).status).toBe(200);
    for (let round = 0; round < 2; round += 1) {
      const again = await api.post('/v1/phoneCalls', single(deleted), { headers: { 'Idempotency-Key': keyB } });
      expect(errorMessages(again, 409)).toEqual([CALL_DELETED_SINCE]);
    }
    expect([stack.emulator.callsTo(dialled), stack.emulator.callsTo(deleted)]).toEqual([1, 0]);
    expect(
      await PhoneCall.countDocuments({ teamId: new Types.ObjectId(stack.team.teamId), toPhoneNumber: deleted }),
    ).toBe(0);
  });

  it('discards what a request cut short while writing left, and writes the batch once', async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const key = `died-while-writing-${Date.now()}`;
    const left = await deadRequest(key, 1);
    const res = await api.post('/v1/phoneCalls/batch', body(), { headers: { 'Idempotency-Key': key } });
    expect(res.status).toBe(201);
    const ids = res.body.data.map((c: { _id: string }) => c._id) as string[];
    expect(ids).toHaveLength(3);
    expect(ids).not.toContain(left.ids[0]);
    errorMessages(await api.get(`/v1/phoneCalls/${left.ids[0]}`), 404);
    expect(await DispatchBatch.exists({ _id: left.batchId })).toBeNull();
    expect(await PhoneCall.countDocuments({ dispatchBatchId: new Types.ObjectId(res.body.batchId as string) })).toBe(3);
  });

  it('retries arriving together: one takes the key over, the others get its answer', async () => {
    // Each round a dead request's key and four retries of it at once. On FerretDB 1.x two
    // conditional updates racing on one record can both apply: the takeover must not rest on one.
    const api = apiClient(stack.baseUrl, stack.team.key);
    for (let round = 0; round < 5; round += 1) {
      const key = `retried-together-${Date.now()}-${round}`;
      await deadRequest(key, 1);
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          api.post('/v1/phoneCalls/batch', body(), { headers: { 'Idempotency-Key': key } }),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual([201, 201, 201, 201]);
      const batchIds = new Set(answers.map((res) => res.body.batchId as string));
      expect(batchIds.size).toBe(1);
      const [batchId] = [...batchIds];
      expect(await PhoneCall.countDocuments({ dispatchBatchId: new Types.ObjectId(batchId) })).toBe(3);
      expect(answers.filter((res) => res.headers.get('idempotent-replayed') === 'true')).toHaveLength(3);
    }
  });

  it("past the key's 24 hours writes a new batch and leaves the old request's calls alone", async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const key = `died-a-day-ago-${Date.now()}`;
    // Its batch started (the request died before storing its answer), and may have been swept since.
    const left = await deadRequest(key, numbers.length, { claimedAgoMs: 25 * 3_600_000, state: 'started' });
    const res = await api.post('/v1/phoneCalls/batch', body(), { headers: { 'Idempotency-Key': key } });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const ids = res.body.data.map((c: { _id: string }) => c._id) as string[];
    expect(ids).toHaveLength(3);
    for (const id of left.ids) expect(ids).not.toContain(id);
    expect(await PhoneCall.countDocuments({ dispatchBatchId: new Types.ObjectId(left.batchId) })).toBe(3);
    await ended(api, ids);
    await PhoneCall.deleteMany({ dispatchBatchId: new Types.ObjectId(left.batchId) });
    await DispatchBatch.deleteOne({ _id: left.batchId });
  });

  it("past the key's 24 hours takes another body too, though the request before it died", async () => {
    // FerretDB keeps a dead request's pending record for ever (no TTL): before, a key so left answered
    // "already used with a different request body" to every other body, for good.
    const api = apiClient(stack.baseUrl, stack.team.key);
    const key = `died-a-day-ago-other-body-${Date.now()}`;
    const left = await deadRequest(key, 0, { claimedAgoMs: 25 * 3_600_000 });
    const other = { phoneCalls: [body().phoneCalls[0]!] };
    const res = await api.post('/v1/phoneCalls/batch', other, { headers: { 'Idempotency-Key': key } });
    expect(res.status).toBe(201);
    expect(res.body.data).toHaveLength(1);
    await ended(
      api,
      res.body.data.map((c: { _id: string }) => c._id),
    );
    await DispatchBatch.deleteOne({ _id: left.batchId });
  });
});

/** What `withIdempotency` reads of a request sent with `Idempotency-Key: key`, and where it answers. */
function requestWithKey(key: string) {
  const headers: Record<string, string> = { 'idempotency-key': key };
  return {
    headers,
    get: (name: string) => headers[name.toLowerCase()] ?? '',
    set: () => undefined,
    state: { log: createLogger('silent', 'test') },
  } as unknown as ApiContext & { status: number; body: unknown };
}

it("answers the request when its key's answer cannot be stored, and keeps its batch for a retry", async () => {
  // An answer over what one command may carry (48 MB; MongoDB also caps a document at 16 MiB, which
  // FerretDB does not): the store refuses it after the calls were made.
  const identity = { teamId: stack.team.teamId, scope: 'answer too large', key: `too-large-${Date.now()}` };
  const ctx = requestWithKey(identity.key);
  const forgotten: string[] = [];
  const answer = { calls: 'x'.repeat(50_000_000) };
  await withIdempotency(
    ctx,
    {
      teamId: identity.teamId,
      scope: identity.scope,
      body: { large: true },
      forgetBatch: async (batchId) => void forgotten.push(batchId.toHexString()),
    },
    async () => ({ status: 201, body: answer }),
  );
  expect(ctx.status).toBe(201);
  expect(ctx.body).toBe(answer);
  // The key stays pending, so that once its lease runs out a retry takes its batch over.
  const record = await IdempotencyRecord.findOne(identity, { state: 1, dispatchBatchId: 1 }).lean();
  expect(record?.state).toBe('pending');
  expect(record?.dispatchBatchId).toBeDefined();
  expect(forgotten).toEqual([]);
});

/** A key whose request died 30 s ago, its lease lapsed, naming `batch`. */
function abandonedKey(identity: { teamId: string; scope: string; key: string }, body: unknown, batch: Types.ObjectId) {
  return IdempotencyRecord.create({
    ...identity,
    requestHash: requestHashOf(body),
    state: 'pending',
    createdAt: new Date(Date.now() - 30_000),
    leaseUntil: new Date(Date.now() - 15_000),
    dispatchBatchId: batch,
  });
}

it("keeps naming the dead request's batch when a takeover's answer cannot be stored either", async () => {
  // The answer that could not be stored (over 16 MiB) cannot be stored on the retry either: each
  // later retry must still find the batch that holds the calls, or it would write them all again.
  const identity = { teamId: stack.team.teamId, scope: 'takeover too large', key: `takeover-${Date.now()}` };
  const deadBatch = new Types.ObjectId();
  const lapse = () =>
    IdempotencyRecord.updateOne(
      { ...identity, teamId: new Types.ObjectId(identity.teamId) },
      { $set: { leaseUntil: new Date(Date.now() - 1_000) } },
    );
  await abandonedKey(identity, { large: true }, deadBatch);
  const taken: Array<string | null> = [];
  for (let retry = 0; retry < 2; retry += 1) {
    await withIdempotency(
      requestWithKey(identity.key),
      { ...identity, body: { large: true }, forgetBatch: async () => undefined },
      async ({ abandonedBatchId }) => {
        taken.push(abandonedBatchId?.toHexString() ?? null);
        return { status: 201, body: { calls: 'x'.repeat(50_000_000) }, batchId: abandonedBatchId ?? undefined };
      },
    );
    await lapse();
  }
  expect(taken).toEqual([deadBatch.toHexString(), deadBatch.toHexString()]);
});

it("keeps the key naming the dead request's batch when settling that batch fails; a later retry settles it", async () => {
  // The batch taken over may be live (started, or soon by the reconciler): freeing the key on a failed
  // read would let the client's next retry write and start a second batch beside it.
  const identity = { teamId: stack.team.teamId, scope: 'takeover fails', key: `fails-${Date.now()}` };
  const deadBatch = new Types.ObjectId();
  await abandonedKey(identity, { fails: true }, deadBatch);
  const options = { ...identity, body: { fails: true }, forgetBatch: async () => undefined };
  await expect(
    withIdempotency(requestWithKey(identity.key), options, async () => {
      throw new Error('the store did not answer');
    }),
  ).rejects.toThrow('the store did not answer');
  const kept = await IdempotencyRecord.findOne(identity, { state: 1, dispatchBatchId: 1 }).lean();
  expect(kept).toMatchObject({ state: 'pending', dispatchBatchId: deadBatch });

  await IdempotencyRecord.updateOne(
    { ...identity, teamId: new Types.ObjectId(identity.teamId) },
    { $set: { leaseUntil: new Date(Date.now() - 1_000) } },
  );
  const taken: Array<string | null> = [];
  await withIdempotency(requestWithKey(identity.key), options, async ({ abandonedBatchId }) => {
    taken.push(abandonedBatchId?.toHexString() ?? null);
    return { status: 201, body: { settled: true }, batchId: abandonedBatchId ?? undefined };
  });
  expect(taken).toEqual([deadBatch.toHexString()]);
});

it("a takeover's key names the dead request's batch while it works, and its own only once it says so", async () => {
  // Should the retry die in turn before its answer is stored, the next one must find the batch that
  // holds the calls, not the retry's own unopened one (it would write every call again).
  const identity = { teamId: stack.team.teamId, scope: 'takeover names', key: `names-${Date.now()}` };
  const deadBatch = new Types.ObjectId();
  await abandonedKey(identity, { names: true }, deadBatch);
  const named = async () =>
    (await IdempotencyRecord.findOne(identity, { dispatchBatchId: 1 }).lean())?.dispatchBatchId?.toHexString();
  const seen: Array<string | undefined> = [];
  let own = '';
  await withIdempotency(
    requestWithKey(identity.key),
    { ...identity, body: { names: true }, forgetBatch: async () => undefined },
    async ({ batchId, nameOwnBatch }) => {
      own = batchId.toHexString();
      seen.push(await named());
      await nameOwnBatch();
      seen.push(await named());
      return { status: 201, body: {} };
    },
  );
  expect(seen).toEqual([deadBatch.toHexString(), own]);
});

it('a request stalled past its lease learns that a retry took its key over, and whether it has the batch', async () => {
  // The route then starts nothing, and removes its calls only when the retry made its own batch: a retry
  // that found the batch whole answers with those very calls (else both would ring the same people).
  for (const retryWritesItsOwn of [false, true]) {
    const identity = {
      teamId: stack.team.teamId,
      scope: 'stalled past lease',
      key: `stalled-${Date.now()}-${retryWritesItsOwn}`,
    };
    const body = { stalled: true };
    const held: string[] = [];
    const retryTook: Array<string | null> = [];
    let ownBatch = '';
    await withIdempotency(
      requestWithKey(identity.key),
      { ...identity, body, forgetBatch: async () => undefined },
      async (work) => {
        ownBatch = work.batchId.toHexString();
        held.push(await work.stillHolds());
        // The store stalls: the lease runs out, and the client's retry takes the key over meanwhile.
        await IdempotencyRecord.updateOne(
          { ...identity, teamId: new Types.ObjectId(identity.teamId) },
          { $set: { leaseUntil: new Date(Date.now() - 1_000) } },
        );
        await withIdempotency(
          requestWithKey(identity.key),
          { ...identity, body, forgetBatch: async () => undefined },
          async ({ abandonedBatchId, nameOwnBatch }) => {
            retryTook.push(abandonedBatchId?.toHexString() ?? null);
            // Found cut short, the abandoned batch is discarded and the retry names its own.
            if (retryWritesItsOwn) await nameOwnBatch();
            return { status: 201, body: { retried: true } };
          },
        );
        held.push(await work.stillHolds());
        return { status: 201, body: { first: true } };
      },
    );
    expect(held).toEqual(['held', retryWritesItsOwn ? 'replaced' : 'adopted']);
    expect(retryTook).toEqual([ownBatch]);
    // The key keeps the retry's answer.
    expect((await IdempotencyRecord.findOne(identity).lean())?.responseBody).toEqual({ retried: true });
  }
});

it('a request taken over waits for the retry to settle its batch, and counts a discarded batch as replaced', async () => {
  // The retry may find the batch cut short and remove its calls before the stalled request's last
  // insert lands. Until the retry names its own batch the key still names this one, so the request
  // must look at the batch itself: discarded, the calls it has left are its own to remove (else they
  // stay queued with no batch and no workflow); started by the retry, they are the retry's answer.
  for (const retry of ['discards', 'starts'] as const) {
    const identity = {
      teamId: stack.team.teamId,
      scope: 'taken over, settling',
      key: `settling-${Date.now()}-${retry}`,
    };
    const body = { settling: retry };
    const order: string[] = [];
    let namedAtVerdict: string | undefined;
    await withIdempotency(
      requestWithKey(identity.key),
      { ...identity, body, forgetBatch: async () => undefined },
      async (work) => {
        await DispatchBatch.create({ _id: work.batchId, teamId: new Types.ObjectId(identity.teamId), size: 3 });
        await IdempotencyRecord.updateOne(
          { ...identity, teamId: new Types.ObjectId(identity.teamId) },
          { $set: { leaseUntil: new Date(Date.now() - 1_000) } },
        );
        let asked!: () => void;
        const asking = new Promise<void>((resolve) => (asked = resolve));
        let verdictGiven!: () => void;
        const verdict = new Promise<void>((resolve) => (verdictGiven = resolve));
        const retried = withIdempotency(
          requestWithKey(identity.key),
          { ...identity, body, forgetBatch: async () => undefined },
          async ({ abandonedBatchId, nameOwnBatch }) => {
            expect(abandonedBatchId?.toHexString()).toBe(work.batchId.toHexString());
            // The stalled request asks while this retry is still deciding.
            await asking;
            await new Promise((resolve) => setTimeout(resolve, 600));
            if (retry === 'discards') {
              await DispatchBatch.deleteOne({ _id: abandonedBatchId });
              order.push('retry discarded the batch');
              // Naming its own batch comes later: the request has its verdict by the discard alone.
              await Promise.race([verdict, new Promise((resolve) => setTimeout(resolve, 5_000))]);
              await nameOwnBatch();
            } else {
              await DispatchBatch.updateOne({ _id: abandonedBatchId }, { $set: { state: 'started' } });
              order.push('retry started the batch');
            }
            return { status: 201, body: { retried: true } };
          },
        );
        // Let the retry claim the key first.
        for (let i = 0; i < 100; i += 1) {
          const record = await IdempotencyRecord.findOne(identity, { leaseUntil: 1 }).lean();
          if (record?.leaseUntil && record.leaseUntil.getTime() > Date.now()) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        asked();
        const hold = await work.stillHolds();
        order.push(`request: ${hold}`);
        namedAtVerdict = (await IdempotencyRecord.findOne(identity).lean())?.dispatchBatchId?.toHexString();
        verdictGiven();
        await retried;
        expect(namedAtVerdict).toBe(work.batchId.toHexString());
        return { status: 201, body: { first: true } };
      },
    );
    expect(order).toEqual(
      retry === 'discards'
        ? ['retry discarded the batch', 'request: replaced']
        : ['retry started the batch', 'request: adopted'],
    );
  }
});

it('stores the answer after the lease renewal under way: a finished key never goes back to pending', async () => {
  // Renewals every millisecond, so that one is nearly always under way when the answer is written.
  // On FerretDB 1.x an update is a read and then a write of the whole record: a renewal that read
  // the record before the answer was written and wrote it after would put it back to pending.
  for (let round = 0; round < 20; round += 1) {
    const identity = { teamId: stack.team.teamId, scope: 'lease renewal race', key: `race-${Date.now()}-${round}` };
    const ctx = requestWithKey(identity.key);
    await withIdempotency(
      ctx,
      {
        teamId: identity.teamId,
        scope: identity.scope,
        body: { round },
        forgetBatch: async () => undefined,
        leaseRenewMs: 1,
      },
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { status: 201, body: { round } };
      },
    );
    // Long enough for a renewal that was still under way to land.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const record = await IdempotencyRecord.findOne(identity).lean();
    expect({ state: record?.state, responseBody: record?.responseBody }).toEqual({
      state: 'done',
      responseBody: { round },
    });
  }
});

it("sweeps Idempotency-Key records past their 24 hours and takeover claims past their hour, as MongoDB's TTL would", async () => {
  const teamId = stack.team.teamId;
  const now = Date.now();
  const record = (key: string, agoMs: number) => ({
    teamId,
    scope: 'sweep test',
    key,
    requestHash: 'h',
    state: 'done' as const,
    responseStatus: 201,
    responseBody: { calls: ['Ada, +14155550123'] },
    createdAt: new Date(now - agoMs),
  });
  await IdempotencyRecord.create([record('sweep-old', 25 * 3_600_000), record('sweep-recent', 3_600_000)]);
  await IdempotencyTakeover.create([
    { _id: `sweep-old-claim-${now}`, createdAt: new Date(now - 2 * 3_600_000) },
    { _id: `sweep-recent-claim-${now}`, createdAt: new Date(now - 60_000) },
  ]);
  expect(await sweepIdempotencyRecords()).toBeGreaterThanOrEqual(2);
  const keys = await IdempotencyRecord.find({ teamId, scope: 'sweep test' }, { key: 1 }).lean();
  expect(keys.map((k) => k.key)).toEqual(['sweep-recent']);
  const claims = await IdempotencyTakeover.find({
    _id: { $in: [`sweep-old-claim-${now}`, `sweep-recent-claim-${now}`] },
  });
  expect(claims.map((c) => c._id)).toEqual([`sweep-recent-claim-${now}`]);
});

describe('dispatch batches are kept only while a retry may ask for them', () => {
  const batchOf = async (callId: string) =>
    (await PhoneCall.findById(callId, { dispatchBatchId: 1 }).lean())!.dispatchBatchId;
  const gone = (batchId: Types.ObjectId) =>
    eventually(
      async () => ((await DispatchBatch.exists({ _id: batchId })) ? undefined : true),
      10_000,
      'batch removed',
    );
  const call = (to: string) => ({
    teamId: stack.team.teamId,
    callTemplateId: stack.team.templateId,
    toPhoneNumber: to,
    promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
  });

  it('a create without an Idempotency-Key leaves none', async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const single = await api.post('/v1/phoneCalls', call('+14155556041'));
    expect(single.status).toBe(201);
    await gone(await batchOf(single.body.data._id));
    const batch = await api.post('/v1/phoneCalls/batch', { phoneCalls: [call('+14155556042')] });
    expect(batch.status).toBe(201);
    expect(await DispatchBatch.exists({ _id: batch.body.batchId })).toBeNull();
  });

  it('one with a key leaves none once its answer is stored, and its retry still gets that answer', async () => {
    const api = apiClient(stack.baseUrl, stack.team.key);
    const headers = { 'Idempotency-Key': `kept-until-answered-${Date.now()}` };
    const first = await api.post('/v1/phoneCalls', call('+14155556043'), { headers });
    expect(first.status).toBe(201);
    await gone(await batchOf(first.body.data._id));
    const replay = await api.post('/v1/phoneCalls', call('+14155556043'), { headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data._id).toBe(first.body.data._id);
    const batchHeaders = { 'Idempotency-Key': `batch-kept-until-answered-${Date.now()}` };
    const batch = await api.post(
      '/v1/phoneCalls/batch',
      { phoneCalls: [call('+14155556044')] },
      { headers: batchHeaders },
    );
    expect(batch.status).toBe(201);
    await gone(new Types.ObjectId(batch.body.batchId as string));
  });

  it('the sweep removes started batches past the retry window, and never a pending one', async () => {
    const teamId = new Types.ObjectId(stack.team.teamId);
    const [old, recent, pending] = await DispatchBatch.create([
      { teamId, size: 1, state: 'started' },
      { teamId, size: 1, state: 'started' },
      { teamId, size: 1, state: 'pending' },
    ]);
    const at = (agoMs: number) => ({ $set: { updatedAt: new Date(Date.now() - agoMs) } });
    await DispatchBatch.collection.updateOne({ _id: old!._id }, at(STARTED_BATCH_KEPT_MS + 60_000));
    await DispatchBatch.collection.updateOne({ _id: recent!._id }, at(STARTED_BATCH_KEPT_MS - 60_000));
    // Pending, however long unchanged: the reconciler's (created just now, so not yet in its reach).
    await DispatchBatch.collection.updateOne({ _id: pending!._id }, at(STARTED_BATCH_KEPT_MS + 60_000));
    expect(await sweepStartedBatches()).toBeGreaterThanOrEqual(1);
    expect(await DispatchBatch.exists({ _id: old!._id })).toBeNull();
    expect(await DispatchBatch.exists({ _id: recent!._id })).not.toBeNull();
    expect(await DispatchBatch.exists({ _id: pending!._id })).not.toBeNull();
    await DispatchBatch.deleteMany({ _id: { $in: [recent!._id, pending!._id] } });
  });
});

it("deleting some of a pending batch's calls together never makes it look cut short: the others stay and start", async () => {
  // Deletes race each other (a batch's cancel runs them side by side); FerretDB 1.x loses one of two
  // racing updates of a document, which made a count kept on the batch go wrong.
  const batch = await DispatchBatch.create({
    teamId: new Types.ObjectId(stack.team.teamId),
    size: 8,
    state: 'pending',
  });
  const ids = Array.from({ length: 8 }, () => new Types.ObjectId());
  const later = new Date(Date.now() + 3_600_000);
  await PhoneCall.collection.insertMany(
    ids.map((id, i) => rawQueuedCall(id, batch._id, `+1415555607${i}`, { callDelayedUntil: later })),
  );
  const api = apiClient(stack.baseUrl, stack.team.key);
  const deletes = await Promise.all(ids.slice(0, 6).map((id) => api.delete(`/v1/phoneCalls/${id.toHexString()}`)));
  expect(deletes.map((res) => res.status)).toEqual(Array(6).fill(200));
  // A deletion noted whose call then stayed (the delete's process died between its two writes) counts once.
  await noteDeletedFromBatch(ids[6]!, batch._id);
  // Long dead by then: a batch judged cut short would be discarded with its calls.
  await DispatchBatch.collection.updateOne(
    { _id: batch._id },
    { $set: { createdAt: new Date(Date.now() - 20 * 60_000) } },
  );
  const dispatcher = createDispatcher({ client: stack.temporal, config: stack.config });
  await reconcilePendingCalls({ dispatcher, logger: createLogger('silent', 'test'), olderThanMs: 60_000 });
  expect((await DispatchBatch.findById(batch._id).lean())?.state).toBe('started');
  for (const id of ids.slice(6)) {
    expect((await api.get(`/v1/phoneCalls/${id.toHexString()}`)).body.data).toMatchObject({ status: 'queued' });
    const description = await stack.temporal.workflow.getHandle(`phoneCall-${id.toHexString()}`).describe();
    expect(description.status.name).toBe('RUNNING');
  }
});

it('a delete retried after its first try removed the record still answers the call it deleted, own webhooks and all', async () => {
  // The workflow sends phoneCall.deleted only with the deleted call: a retry answering "already gone"
  // (the first try's answer lost) lost the event.
  const store = createCallStore();
  const id = new Types.ObjectId();
  const ownWebhooks = [
    { url: 'https://example.com/own', secretSealed: 'sealed', subscribedEvent: 'phoneCall.deleted' },
  ];
  await PhoneCall.collection.insertOne(
    rawQueuedCall(id, new Types.ObjectId(), '+14155556090', { phoneCallWebhooks: ownWebhooks }),
  );
  const first = await store.deleteIfQueued(id.toHexString());
  expect(first).toMatchObject({ outcome: 'deleted', call: { _id: id.toHexString(), status: 'queued' } });
  expect(await PhoneCall.exists({ _id: id })).toBeNull();
  const retried = await store.deleteIfQueued(id.toHexString());
  expect(retried).toEqual(first);
  // A call never deleted is missing, as before.
  expect(await store.deleteIfQueued(new Types.ObjectId().toHexString())).toEqual({ outcome: 'missing' });
});

it("a pending chunk of a file cancelled since is discarded, not started; a file's control reaches 24 hours", async () => {
  const fileId = `cancelled-${Date.now()}`;
  // The first controls of a file at once all land (FerretDB refuses one of two racing upsert inserts).
  await Promise.all(
    ['paused', 'cancelled', 'paused', 'cancelled'].map((s) => setFileState(stack.team.teamId, fileId, s as FileState)),
  );
  await setFileState(stack.team.teamId, fileId, 'cancelled');
  // A chunk whose request died after writing its calls, before it read the file's control.
  const batch = await DispatchBatch.create({
    teamId: new Types.ObjectId(stack.team.teamId),
    size: 2,
    state: 'pending',
  });
  const ids = [new Types.ObjectId(), new Types.ObjectId()];
  await PhoneCall.collection.insertMany(
    ids.map((id, i) => rawQueuedCall(id, batch._id, `+1415555609${i}`, { fileId, callOrigin: 'file' })),
  );
  await DispatchBatch.collection.updateOne(
    { _id: batch._id },
    { $set: { createdAt: new Date(Date.now() - 20 * 60_000) } },
  );
  const dispatcher = createDispatcher({ client: stack.temporal, config: stack.config });
  await reconcilePendingCalls({ dispatcher, logger: createLogger('silent', 'test'), olderThanMs: 60_000 });
  expect(await PhoneCall.countDocuments({ _id: { $in: ids } })).toBe(0);
  expect(await DispatchBatch.exists({ _id: batch._id })).toBeNull();
  await expect(stack.temporal.workflow.getHandle(`phoneCall-${ids[0]!.toHexString()}`).describe()).rejects.toThrow();
  // A day later the control no longer holds the file back: importing it again is a new import.
  expect(await fileStateOf(stack.team.teamId, fileId)).toBe('cancelled');
  await FileControl.updateOne(
    { fileId },
    { $set: { updatedAt: new Date(Date.now() - FILE_CONTROL_REACH_MS - 60_000) } },
  );
  expect(await fileStateOf(stack.team.teamId, fileId)).toBe('resumed');
});

it('the reconciler discards a batch whose writing was cut short long ago, and waits on a young one', async () => {
  const make = async (ageMs: number, to: string) => {
    const batch = await DispatchBatch.create({
      teamId: new Types.ObjectId(stack.team.teamId),
      size: 2,
      state: 'pending',
    });
    await DispatchBatch.collection.updateOne({ _id: batch._id }, { $set: { createdAt: new Date(Date.now() - ageMs) } });
    const id = new Types.ObjectId();
    await PhoneCall.collection.insertOne(rawQueuedCall(id, batch._id, to));
    return { batchId: batch._id, id };
  };
  const old = await make(20 * 60_000, '+14155556031');
  const young = await make(120_000, '+14155556032');
  const dispatcher = createDispatcher({ client: stack.temporal, config: stack.config });
  await reconcilePendingCalls({ dispatcher, logger: createLogger('silent', 'test'), olderThanMs: 60_000 });
  expect(await DispatchBatch.exists({ _id: old.batchId })).toBeNull();
  expect(await PhoneCall.exists({ _id: old.id })).toBeNull();
  expect((await DispatchBatch.findById(young.batchId).lean())?.state).toBe('pending');
  expect(await PhoneCall.exists({ _id: young.id })).not.toBeNull();
  // Neither was dialled.
  expect(stack.emulator.callsTo('+14155556031') + stack.emulator.callsTo('+14155556032')).toBe(0);
  await DispatchBatch.deleteOne({ _id: young.batchId });
  await PhoneCall.deleteOne({ _id: young.id });
});

// Calls end to end through each provider's adapter and the emulator: statuses for every emulated
// outcome, recording, transcript and results; callback signatures, duplicates and reordering; a
// retried dial that rings once; voices and transcripts endpoints.
import { ActivityCancellationDetails, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import mongoose, { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCaptureActivities, type Captured } from '../../activities/capture';
import { createDialActivities, type Dialled } from '../../activities/dial';
import { pacingDefaults } from '../../src/calls/pacing-defaults';
import { parseWavHeader } from '../../src/audio';
import { createCallbackProviderResolver, createProviderEventSink } from '../../src/calls/provider-events';
import { callWorkflowId } from '../../src/contracts/ids';
import { createSecretBox } from '../../src/crypto/secret-box';
import { PhoneCall } from '../../src/data/models/phone-call';
import {
  ProviderCallSighting,
  SIGHTING_KEPT_MS,
  sweepProviderCallSightings,
} from '../../src/data/models/provider-call-sighting';
import { createMongoStores } from '../../src/data/stores';
import { numberForScenario } from '../../src/emulator';
import { createLogger } from '../../src/logger';
import { createWorkerMetrics } from '../../src/observability/metrics';
import { twilioSignature } from '../../src/telephony/twilio';
import type { TelephonyProvider } from '../../src/telephony/provider';
import { createTeamProviderResolver } from '../../src/telephony/team-providers';
import { providerEventSignal } from '../../workflows/messages';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

/** One try of an activity, with a minute to run (the mock's default second leaves a dial no time to place its call). */
const activityTry = (attempt: number) => new MockActivityEnvironment({ attempt, startToCloseTimeoutMs: 60_000 });

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
beforeAll(async () => {
  stack = await startTestStack();
  api = apiClient(stack.baseUrl, stack.team.key);
});
afterAll(async () => {
  await stack?.stop();
});

const TERMINAL = new Set(['completed', 'busy', 'noAnswer', 'failed', 'cancelled']);

async function place(to: string, extra: Record<string, unknown> = {}) {
  const res = await api.post('/v1/phoneCalls', {
    teamId: stack.team.teamId,
    callTemplateId: stack.team.templateId,
    toPhoneNumber: to,
    nameOfHuman: 'Grace',
    promptVariableValues: [
      { key: 'firstName', value: 'Grace' },
      { key: 'when', value: 'next week' },
    ],
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body.data._id as string;
}

async function untilEnded(id: string) {
  return eventually(
    async () => {
      const call = (await api.get(`/v1/phoneCalls/${id}`)).body.data;
      return TERMINAL.has(call.status) ? call : undefined;
    },
    60_000,
    `call ${id} to end`,
  );
}

describe.each(['twilio', 'vonage', 'telnyx'] as const)('a completed, recorded call through %s', (provider) => {
  it('has its status, timings, playable recording, ordered transcript and results', async () => {
    const to = numberForScenario('meeting-tuesday', '+1415555');
    const id = await place(to, {
      phoneNumberId: stack.team.phoneNumberIds[provider],
      telephonyProvider: provider,
      record: true,
    });
    const call = await untilEnded(id);
    expect(call).toMatchObject({
      status: 'completed',
      telephonyProvider: provider,
      statusExtraInfo: { statusCode: 'completed' },
    });
    const [triggered, started, ended] = [call.callTriggeredAt, call.callStartedAt, call.callEndedAt].map((t: string) =>
      Date.parse(t),
    );
    expect(triggered).toBeLessThanOrEqual(started!);
    // Twilio stamps whole seconds, and at 50x speed a conversation can fit inside one of them.
    expect(started).toBeLessThanOrEqual(ended!);
    expect(call.callDuration).toBeCloseTo((ended! - started!) / 1000, 1);

    expect(call.recordingUrl).toMatch(new RegExp(`^${stack.baseUrl}/recordings/[A-Za-z0-9_-]{32}\\.wav$`));
    const audio = await fetch(call.recordingUrl);
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/wav');
    const header = parseWavHeader(Buffer.from(await audio.arrayBuffer()));
    expect(header.durationSeconds).toBeGreaterThan(1);

    const transcripts = (await api.get(`/v1/transcripts?phoneCallId=${id}`)).body.data;
    expect(transcripts.length).toBeGreaterThan(2);
    expect(transcripts[0]).toMatchObject({
      speaker: 'agent',
      phoneCallId: id,
      teamId: stack.team.teamId,
      text: 'Hello Grace, this is Ada from Acme Dental. Could we book your check-up next week?',
    });
    expect(transcripts.some((t: { speaker: string }) => t.speaker === 'human')).toBe(true);
    const times = transcripts.map((t: { createdAt: string }) => t.createdAt);
    expect([...times].sort()).toEqual(times);

    expect(call.resultValues.map((r: { columnName: string }) => r.columnName)).toEqual([
      'interested',
      'meetingTime',
      'summary',
    ]);
    // The workflow was signalled the provider's events it acts on, not its ringing callback: the call
    // rang from the accepted dial on, and each signal would cost it a workflow task.
    const { events } = await stack.temporal.workflow.getHandle(callWorkflowId(id)).fetchHistory();
    const signalled = events!.flatMap((e) => {
      const signal = e.workflowExecutionSignaledEventAttributes;
      if (signal?.signalName !== providerEventSignal.name) return [];
      return [(JSON.parse(Buffer.from(signal.input!.payloads![0]!.data!).toString('utf8')) as { kind: string }).kind];
    });
    expect(signalled).toContain('answered');
    expect(signalled).toContain('completed');
    expect(signalled).not.toContain('ringing');

    expect(call.fixedMeetingTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(new Date(call.fixedMeetingTime).getUTCDay()).toBe(2);
    expect(call.resultValues.find((r: { columnName: string }) => r.columnName === 'meetingTime').value).toBe(
      call.fixedMeetingTime,
    );
  });
});

describe.each([
  ['twilio', '+1415555'],
  ['vonage', '+1415556'],
  ['telnyx', '+1415557'],
] as const)('every emulated outcome through %s ends in the right status', (provider, prefix) => {
  it.each([
    ['1486', 'busy', 'busy', false],
    ['1408', 'noAnswer', 'no-answer', false],
    ['1404', 'failed', 'invalid-number', false],
    ['1500', 'failed', 'provider-error', true],
    ['1200', 'completed', 'completed', true],
  ])('a number ending %s ends %s (%s)', async (digits, status, code, answered) => {
    const to = `${prefix}${digits}`;
    const id = await place(to, {
      record: true,
      phoneNumberId: stack.team.phoneNumberIds[provider],
      telephonyProvider: provider,
    });
    const call = await untilEnded(id);
    expect(call.status).toBe(status);
    expect(call.statusExtraInfo.statusCode).toBe(code);
    expect(Boolean(call.callStartedAt)).toBe(answered);
    if (!answered) expect(call.recordingUrl).toBeUndefined();
    if (digits === '1404') expect(stack.emulator.callsTo(to)).toBe(0);
    if (digits === '1200') {
      // A silent callee: the agent spoke, and only the agent.
      const speakers = (await api.get(`/v1/transcripts?phoneCallId=${id}`)).body.data.map(
        (t: { speaker: string }) => t.speaker,
      );
      expect(speakers.length).toBeGreaterThan(0);
      expect(new Set(speakers)).toEqual(new Set(['agent']));
    }
  });
});

describe('provider callbacks', () => {
  it('answers a callback without a usable callId with a 400 naming it, in the error shape', async () => {
    const post = (query: string) =>
      apiClient(stack.baseUrl).request('POST', `/telephony/twilio/events${query}`, {
        rawBody: 'CallStatus=completed',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    expect(errorMessages(await post(''), 400)).toEqual(['callId is required']);
    expect(errorMessages(await post('?callId=a%2Fb'), 400)).toEqual(['callId must be 1 to 64 letters, digits, _ or -']);
    expect(errorMessages(await post('?callId=a&callId=b'), 400)).toEqual(['callId may be given only once']);
    // A usable id that names no call is answered as a bad signature, as before.
    expect((await post('?callId=a')).status).toBe(401);
  });

  it('rejects a bad signature and changes nothing; ignores duplicate and late callbacks', async () => {
    const to = '+14155559101';
    const id = await place(to);
    const done = await untilEnded(id);
    expect(done.status).toBe('completed');
    const callSid = (await PhoneCall.findById(id).lean())!.providerCallId!;
    const url = `${stack.baseUrl}/telephony/twilio/events?callId=${id}`;
    const post = (params: URLSearchParams, signature: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
        body: params.toString(),
      });

    const ringing = new URLSearchParams({
      AccountSid: stack.team.twilio.accountSid,
      CallSid: callSid,
      CallStatus: 'ringing',
      Timestamp: new Date().toUTCString(),
    });
    const forged = await post(ringing, 'bm90IGEgc2lnbmF0dXJl');
    expect([401, 403]).toContain(forged.status);

    // Correctly signed, but a duplicate "completed" and a late "ringing": the call stays as it was.
    const completed = new URLSearchParams({
      AccountSid: stack.team.twilio.accountSid,
      CallSid: callSid,
      CallStatus: 'completed',
      Timestamp: new Date().toUTCString(),
    });
    for (const params of [completed, ringing]) {
      const res = await post(params, twilioSignature(stack.team.twilio.authToken, url, params));
      expect(res.status).toBeLessThan(300);
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const after = (await api.get(`/v1/phoneCalls/${id}`)).body.data;
    expect(after.status).toBe('completed');
    expect(after.statusExtraInfo).toEqual(done.statusExtraInfo);
    expect(after.updatedAt).toBe(done.updatedAt);
    expect(stack.emulator.callsTo(to)).toBe(1);
  });

  it("records the provider's call id apart and never writes the call's record, so no status change is lost to a callback", async () => {
    // Scheduled an hour ahead: its workflow sleeps, and this test is the record's only other writer.
    const id = await place('+14155559104', { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() });
    const sink = createProviderEventSink({ temporal: stack.temporal, logger: createLogger('silent', 'test') });
    const calls = createMongoStores().calls;
    const ringing = (providerCallId: string) => ({
      callId: id,
      provider: 'twilio' as const,
      providerCallId,
      kind: 'ringing' as const,
      occurredAt: new Date().toISOString(),
      providerStatus: 'ringing',
    });
    const before = await PhoneCall.findById(id).lean();
    await sink([ringing('CA-sighted-1'), ringing('CA-sighted-1'), ringing('CA-sighted-2')]);
    expect(await calls.sightedProviderCallIds(id)).toEqual(['CA-sighted-2', 'CA-sighted-1']);
    const after = await PhoneCall.findById(id).lean();
    expect(after!.updatedAt).toEqual(before!.updatedAt);
    expect(after!.providerCallId ?? null).toBeNull();

    // A workflow's write racing a callback: FerretDB 1.x applies an update by reading the document
    // and writing it back whole, so a callback that wrote the record would undo the other write.
    // Each round is a dial attempt's first callback, meeting a record without a provider call id.
    for (let i = 0; i < 20; i++) {
      const statusCode = `race-${i}`;
      await PhoneCall.updateOne({ _id: id }, { $unset: { providerCallId: 1 } });
      await Promise.all([calls.setQueuedStatusCode(id, statusCode, new Date()), sink([ringing(`CA-race-${i}`)])]);
      expect((await PhoneCall.findById(id).lean())!.statusExtraInfo?.statusCode).toBe(statusCode);
    }
    await api.delete(`/v1/phoneCalls/${id}`);
  });

  it("sweeps sightings once a dial's retries are long over", async () => {
    const callId = new Types.ObjectId();
    const sighting = (providerCallId: string, agoMs: number) => ({
      _id: `${callId.toHexString()}:${providerCallId}`,
      callId,
      providerCallId,
      seenAt: new Date(Date.now() - agoMs),
    });
    await ProviderCallSighting.create([sighting('CA-old', SIGHTING_KEPT_MS + 60_000), sighting('CA-recent', 60_000)]);
    expect(await sweepProviderCallSightings()).toBeGreaterThanOrEqual(1);
    expect(await createMongoStores().calls.sightedProviderCallIds(callId.toHexString())).toEqual(['CA-recent']);
  });
});

/** The worker's dial and capture activities on the stack's database and emulator, to run one by hand as a retry runs. */
function workerActivities(change: (deps: WorkerActivityDeps) => WorkerActivityDeps = (deps) => deps) {
  const deps = change(workerActivityDeps());
  return { ...createDialActivities(deps), ...createCaptureActivities(deps) };
}

type WorkerActivityDeps = ReturnType<typeof workerActivityDeps>;

function workerActivityDeps() {
  return {
    config: stack.config,
    logger: createLogger('silent', 'test'),
    metrics: createWorkerMetrics(),
    ...createMongoStores(),
    pacingDefaults: pacingDefaults(stack.config),
    temporal: { client: stack.temporal, taskQueue: stack.config.TEMPORAL_TASK_QUEUE },
    providers: createTeamProviderResolver({
      secretBox: createSecretBox(stack.config.ENCRYPTION_KEY),
      baseUrls: {
        twilio: stack.config.TWILIO_API_BASE_URL,
        vonage: stack.config.VONAGE_API_BASE_URL,
        telnyx: stack.config.TELNYX_API_BASE_URL,
      },
    }),
  };
}

it("reads a call and its team's credentials once for all of its callbacks, again only when asked for fresh ones", async () => {
  // Due months ahead: nothing but this test reads the call meanwhile.
  const id = await place('+14155550007', { callDelayedUntil: new Date(Date.now() + 90 * 86_400_000).toISOString() });
  const asked: string[] = [];
  const adapter = {} as TelephonyProvider; // never used by the resolver itself
  const resolve = createCallbackProviderResolver(async (teamId, provider) => {
    asked.push(`${String(teamId)}:${provider}`);
    return adapter;
  });
  const reads: string[] = [];
  mongoose.set('debug', (collection: string, method: string) => {
    if (collection === PhoneCall.collection.collectionName) reads.push(method);
  });
  try {
    const first = await resolve('twilio', id);
    const later = [await resolve('twilio', id), await resolve('twilio', id), await resolve('twilio', id)];
    expect(first).toEqual({ adapter, remembered: false });
    expect(later).toEqual([1, 2, 3].map(() => ({ adapter, remembered: true })));
    expect(reads).toEqual(['findOne']);
    expect(asked).toEqual([`${stack.team.teamId}:twilio`]);

    // Another provider's callback for it is refused without a read; `fresh` builds the adapter again.
    expect(await resolve('vonage', id)).toBeNull();
    expect(await resolve('twilio', id, { fresh: true })).toEqual({ adapter, remembered: false });
    expect(asked).toHaveLength(2);
    expect(reads).toHaveLength(1);

    // An id that names no call is never remembered: each callback for it looks again.
    const unknown = new Types.ObjectId().toHexString();
    expect([await resolve('twilio', unknown), await resolve('twilio', unknown)]).toEqual([null, null]);
    expect(reads).toHaveLength(3);
  } finally {
    mongoose.set('debug', false);
  }
});

it('a dial retried after the provider accepted the call rings once', async () => {
  const to = '+14155559102';
  const id = await place(to, { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() });
  const activities = workerActivities();
  const first = (await activityTry(1).run(activities.dialCall, { callId: id })) as {
    providerCallId: string;
  };
  expect(stack.emulator.callsTo(to)).toBe(1);
  // The first attempt's answer was lost before it was recorded: the retry must find the call.
  await PhoneCall.updateOne({ _id: id }, { $unset: { providerCallId: 1 } });
  const retried = (await activityTry(2).run(activities.dialCall, { callId: id })) as {
    providerCallId: string;
  };
  expect(retried.providerCallId).toBe(first.providerCallId);
  expect(stack.emulator.callsTo(to)).toBe(1);
  await api.delete(`/v1/phoneCalls/${id}`);
});

it('a dial asked to write the move to ringing writes it with the provider call id, once across a retry', async () => {
  const to = '+14155559104';
  const id = await place(to, { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() });
  // The sleeping workflow stays out of it: the activity is run here, as a retry would run it.
  await stack.temporal.workflow.getHandle(callWorkflowId(id)).terminate('the test dials by hand');
  const activities = workerActivities();
  const ringing = { at: '2026-11-26T10:00:01.000Z', callTriggeredAt: '2026-11-26T10:00:00.000Z' };
  const first = (await activityTry(1).run(activities.dialCall, {
    callId: id,
    ringing,
  })) as Dialled;
  expect(first.ringing).toMatchObject({ applied: true, call: { status: 'ringing' } });
  const record = await PhoneCall.findById(id).lean();
  expect(record).toMatchObject({
    status: 'ringing',
    providerCallId: first.providerCallId,
    statusExtraInfo: { statusCode: 'dialling', dateTime: new Date(ringing.at) },
    callTriggeredAt: new Date(ringing.callTriggeredAt),
  });
  // Its answer was lost after the write: the retry finds the call, rings nobody, and knows the write.
  const retried = await activityTry(2).run(activities.dialCall, { callId: id, ringing });
  expect(retried).toMatchObject({ providerCallId: first.providerCallId, ringing: { applied: true } });
  expect(stack.emulator.callsTo(to)).toBe(1);
});

it("a retry that placed a second call follows the one an earlier try's ringing write put on the record, and hangs up its own", async () => {
  // The documented double dial: try 1 placed a call and lost its answer; try 2 read the record before
  // try 1's write landed, and no lookup found try 1's call (no callback yet, the provider's search
  // behind), so it placed another. Its write of the same move finds try 1's on the record.
  // A person who answers and stays on the line until the caller hangs up: the first call is still live
  // at the end, so that it can be seen not to have been hung up.
  const to = '+14155591440';
  const id = await place(to, { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() });
  await stack.temporal.workflow.getHandle(callWorkflowId(id)).terminate('the test dials by hand');
  const asQueued = await PhoneCall.findById(id).lean();
  const ringing = { at: '2026-11-26T10:00:01.000Z', callTriggeredAt: '2026-11-26T10:00:00.000Z' };
  const first = (await activityTry(1).run(workerActivities().dialCall, { callId: id, ringing })) as Dialled;

  const blind = workerActivities((deps) => ({
    ...deps,
    calls: {
      ...deps.calls,
      findById: async () => asQueued,
      sightedProviderCallIds: async () => [],
    },
    providers: async (teamId, name) => {
      const provider = await deps.providers(teamId, name);
      return { ...provider, name: provider.name, findPlacedCall: async () => null };
    },
  }));
  // Scheduled now: the mock's default (1970) would put the try past its placing window.
  const secondTry = new MockActivityEnvironment({
    attempt: 2,
    startToCloseTimeoutMs: 60_000,
    scheduledTimestampMs: Date.now(),
  });
  const retried = (await secondTry.run(blind.dialCall, { callId: id, ringing })) as Dialled;
  expect(stack.emulator.callsTo(to)).toBe(2);
  expect(retried).toMatchObject({ providerCallId: first.providerCallId, ringing: { applied: true } });
  expect(retried).not.toHaveProperty('ringing.recordedProviderCallId');
  expect(await PhoneCall.findById(id).lean()).toMatchObject({
    status: 'ringing',
    providerCallId: first.providerCallId,
  });
  // The second call is hung up before anyone answers it; the first rings on, as the record says.
  const second = stack.emulator.calls().find((c) => c.to === to && c.providerCallId !== first.providerCallId);
  expect(second).toBeDefined();
  const ended = await eventually(
    async () => stack.emulator.calls().find((c) => c.providerCallId === second!.providerCallId && c.end),
    10_000,
    'the second call to end',
  );
  // Hung up by us, most likely before it was answered (at 50x, it rings for a few tens of ms).
  expect(ended.end).toMatchObject({ hungUpBy: 'caller' });
  expect(stack.emulator.calls().find((c) => c.providerCallId === first.providerCallId)?.end).toBeUndefined();
  await activityTry(1).run(workerActivities().hangUpCall, { callId: id, providerCallId: first.providerCallId });
});

/**
 * A recorded call to `to` dialled by hand (its workflow terminated), its conversation over and its
 * recording processed, recorded as answered: the capture's input, writing `completed` with the results.
 */
async function answeredCallToCapture(to: string) {
  const id = await place(to, { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(), record: true });
  await stack.temporal.workflow.getHandle(callWorkflowId(id)).terminate('the test runs the activities by hand');
  const activities = workerActivities();
  const { providerCallId } = (await activityTry(1).run(activities.dialCall, {
    callId: id,
    ringing: { at: '2026-11-26T10:00:01.000Z', callTriggeredAt: '2026-11-26T10:00:00.000Z' },
  })) as Dialled;
  await eventually(
    async () => stack.emulator.calls().find((c) => c.providerCallId === providerCallId && c.state === 'ended'),
    30_000,
    'the emulated conversation to end',
  );
  // And its recording processed (listed as processing for a few emulated seconds after the hang-up):
  // the capture below is told the call ended long ago, so it does not wait for it.
  await stack.emulator.idle();
  const stores = createMongoStores();
  const answered = await stores.calls.applyStatusChange({
    callId: id,
    status: 'inProgress',
    statusCode: 'answered',
    at: '2026-11-26T10:00:05.000Z',
    fields: { callStartedAt: '2026-11-26T10:00:05.000Z' },
  });
  expect(answered.outcome).toBe('applied');
  const endedAt = '2026-11-26T10:01:05.000Z';
  const endedAttempt = {
    attempt: 1,
    providerCallId,
    callTriggeredAt: '2026-11-26T10:00:00.000Z',
    callStartedAt: '2026-11-26T10:00:05.000Z',
    callEndedAt: endedAt,
    status: 'completed' as const,
    statusCode: 'completed',
  };
  const input = {
    callId: id,
    providerCallId,
    record: true,
    answeredAt: '2026-11-26T10:00:05.000Z',
    endedAt,
    final: {
      callId: id,
      status: 'completed' as const,
      statusCode: 'completed',
      at: '2026-11-26T10:01:06.000Z',
      fields: { callEndedAt: endedAt, callDuration: 60 },
      endedAttempt,
    },
  };
  return { id, activities, input };
}

it('a capture asked to write the final status writes it with the results, once across a retry', async () => {
  const { id, activities, input } = await answeredCallToCapture(numberForScenario('meeting-tuesday', '+1415555'));
  const first = (await activityTry(1).run(activities.captureCallOutputs, input)) as Captured;
  expect(first.final).toMatchObject({ applied: true, call: { status: 'completed', callDuration: 60 } });
  // One write: the status with everything the conversation left, so the event's payload has it all.
  expect(first.final!.call).toMatchObject({
    recordingUrl: expect.stringContaining('/recordings/'),
    resultValues: expect.arrayContaining([expect.objectContaining({ columnName: expect.any(String) })]),
  });
  const record = await PhoneCall.findById(id).lean();
  expect(record).toMatchObject({ status: 'completed', statusExtraInfo: { statusCode: 'completed' } });
  expect(record!.attempts).toHaveLength(1);
  // Its answer was lost after the write: the retry writes the same and knows the write as its own.
  const retried = (await activityTry(2).run(activities.captureCallOutputs, input)) as Captured;
  expect(retried.final).toMatchObject({ applied: true, call: { status: 'completed' } });
  expect((await PhoneCall.findById(id).lean())!.attempts).toHaveLength(1);
  // A final change the status machine refuses (another time: not this capture's) still leaves the results.
  await PhoneCall.updateOne({ _id: id }, { $set: { resultValues: [] } });
  const refused = (await activityTry(1).run(activities.captureCallOutputs, {
    ...input,
    final: { ...input.final, at: '2026-11-26T10:02:00.000Z' },
  })) as Captured;
  expect(refused.final).toEqual({ applied: false, call: null });
  const after = await PhoneCall.findById(id).lean();
  expect(after!.resultValues).toEqual(record!.resultValues);
  expect(after!.statusExtraInfo!.dateTime).toEqual(new Date('2026-11-26T10:01:06.000Z'));
});

it('a capture try the server gave up on writes nothing more; one cancelled as its worker stops, and the next, write it all', async () => {
  const { id, activities, input } = await answeredCallToCapture(numberForScenario('meeting-tuesday', '+1415556'));
  // A try whose store round trip hung past its start-to-close: the SDK cancels it as timed out, and
  // the try after it (or the next attempt's capture) may have written.
  const givenUp = activityTry(1);
  givenUp.cancel('TIMED_OUT', new ActivityCancellationDetails({ timedOut: true }));
  await expect(givenUp.run(activities.captureCallOutputs, input)).rejects.toBeInstanceOf(CancelledFailure);
  const untouched = await PhoneCall.findById(id).lean();
  expect(untouched).toMatchObject({ status: 'inProgress', resultValues: [], attempts: [] });
  expect(untouched!.recordingUrl).toBeUndefined();
  expect((await api.get(`/v1/transcripts?phoneCallId=${id}`)).body.data).toEqual([]);

  // Cancelled as its worker stops (after the shutdown's grace time): no try follows until it ends, so
  // it finishes its work rather than lose it (on a last try, for good).
  const stopping = activityTry(2);
  stopping.cancel('WORKER_SHUTDOWN', new ActivityCancellationDetails({ workerShutdown: true }));
  const finished = (await stopping.run(activities.captureCallOutputs, input)) as Captured;
  expect(finished.final).toMatchObject({ applied: true, call: { status: 'completed' } });
  expect((await api.get(`/v1/transcripts?phoneCallId=${id}`)).body.data.length).toBeGreaterThan(2);
  const next = (await activityTry(3).run(activities.captureCallOutputs, input)) as Captured;
  expect(next.final).toMatchObject({ applied: true, call: { status: 'completed' } });
});

it('an operator cancelling a queued call ends it as cancelled', async () => {
  const to = '+14155559103';
  const id = await place(to, { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() });
  await stack.temporal.workflow.getHandle(`phoneCall-${id}`).cancel();
  const call = await untilEnded(id);
  expect(call).toMatchObject({ status: 'cancelled', statusExtraInfo: { statusCode: 'cancelled-by-operator' } });
  expect(stack.emulator.callsTo(to)).toBe(0);
  errorMessages(await api.delete(`/v1/phoneCalls/${id}`), 400);
});

describe('voices and transcripts endpoints', () => {
  it('lists at least a dozen voices, each with a playable sample', async () => {
    const res = await api.get('/v1/voices');
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThanOrEqual(12);
    for (const voice of res.body.data)
      expect(Object.keys(voice).sort()).toEqual(['gender', 'id', 'isRecommended', 'voiceName', 'voiceSampleUrl']);
    const genders = new Set(res.body.data.map((v: { gender: string }) => v.gender));
    expect([...genders].some((g) => g !== String(g).toLowerCase())).toBe(true);
    const sample = await fetch(res.body.data[0].voiceSampleUrl);
    expect(sample.status).toBe(200);
    expect(sample.headers.get('content-type')).toBe('audio/wav');
    expect(parseWavHeader(Buffer.from(await sample.arrayBuffer())).durationSeconds).toBeGreaterThan(0.5);
  });

  it('pages transcripts in spoken order and keeps teams apart', async () => {
    const id = await place(numberForScenario('send-email', '+1415555'));
    await untilEnded(id);
    const all = (await api.get(`/v1/transcripts?phoneCallId=${id}`)).body.data;
    const pageOne = await api.get(`/v1/transcripts?phoneCallId=${id}&limit=2`);
    expect(pageOne.body.data).toEqual(all.slice(0, 2));
    const pageTwo = await api.get(`/v1/transcripts?phoneCallId=${id}&limit=2&cursor=${pageOne.body.nextCursor}`);
    expect(pageTwo.body.data).toEqual(all.slice(2, 4));
    const other = await stack.seedTeam('Transcript tenant');
    const theirs = await apiClient(stack.baseUrl, other.key).get(`/v1/transcripts?phoneCallId=${id}`);
    expect(theirs.body.data).toEqual([]);
    expect(errorMessages(await api.get('/v1/transcripts?phoneCallId=nope'), 400)).toEqual([
      'phoneCallId must be a 24-character hex id',
    ]);
    const noScope = await (
      await import('../../src/admin/commands')
    ).createKey({ team: stack.team.teamId, scopes: 'calls:read' });
    errorMessages(await api.get('/v1/transcripts', { key: noScope.key }), 403);
  });
});

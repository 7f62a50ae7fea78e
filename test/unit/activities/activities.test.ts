// Each activity alone under MockActivityEnvironment: in-memory stores, real provider adapters against
// the emulator over real HTTP, a real webhook receiver. No database, no Temporal server.
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities';
import { DIAL_PLACING_WINDOW_MS } from '../../../activities/dial';
import type { MadeAttempt } from '../../../activities/webhooks';
import { FAILURES } from '../../../src/contracts/failures';
import { createSecretBox, type SecretBox } from '../../../src/crypto/secret-box';
import type { PhoneCallDoc } from '../../../src/data/models/phone-call';
import type { WebhookDoc } from '../../../src/data/models/webhook';
import { deliveryWriteOrder } from '../../../src/data/webhook-store';
import { signWebhook } from '../../../src/webhooks/signing';
import { numberForScenario } from '../../../src/emulator';
import { createLogger } from '../../../src/logger';
import { createWorkerMetrics } from '../../../src/observability/metrics';
import { ProviderNotConfiguredError, type TeamProviderResolver } from '../../../src/telephony/team-providers';
import type { WebhookEvent } from '../../../workflows/types';
import { memoryPacingStore } from '../../helpers/memory-pacing-store';
import { startReceiver } from '../../helpers/receiver';
import { startHarness, uniqueNumber, type Harness } from '../telephony/harness';
import { callDoc, memoryStores, templateDoc } from './memory-stores';

let harness: Harness;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  harness = await startHarness();
  receiver = await startReceiver();
});
afterAll(async () => {
  await harness?.close();
  await receiver?.close();
});

const secretBox = createSecretBox(randomBytes(32).toString('base64'));

function setUp(
  options: {
    providers?: TeamProviderResolver;
    retryDelays?: number[];
    pacing?: ReturnType<typeof memoryPacingStore>;
    temporalClient?: Client;
    secretBox?: SecretBox;
  } = {},
) {
  const memory = memoryStores();
  const metrics = createWorkerMetrics();
  const activities = createActivities({
    config: {
      PUBLIC_BASE_URL: harness.routerUrl,
      WEBHOOK_RETRY_DELAYS: options.retryDelays ?? [5_000],
      ALLOW_PRIVATE_WEBHOOK_URLS: true,
    },
    logger: createLogger('silent', 'test'),
    metrics,
    secretBox: options.secretBox ?? secretBox,
    providers: options.providers ?? (async (_team, provider) => harness.provider(provider)),
    ...memory.stores,
    // The pacer's activities are exercised by test/workflows/team-pacer.test.ts; this client is lazy and unused.
    pacing: (options.pacing ?? memoryPacingStore()).store,
    pacingDefaults: { maxConcurrentCalls: 10, dialsPerSecond: { twilio: 1, vonage: 3, telnyx: 1 } },
    temporal: { client: options.temporalClient ?? new Client(), taskQueue: 'unused' },
  });
  return { memory, activities, metrics };
}

/** Runs one activity as a given attempt, keeping its argument and result types. */
function run<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  args: A,
  attempt = 1,
  info: {
    scheduledTimestampMs?: number;
    startToCloseTimeoutMs?: number;
    retryPolicy?: { maximumAttempts: number };
  } = {},
): Promise<R> {
  // Failures are what several tests expect: keep the SDK's activity log quiet.
  // The first try scheduled now, unless the test says otherwise (the SDK's mock says 1970), with a
  // minute to run (the mock's second would leave a dial no time to place its call).
  return new MockActivityEnvironment(
    { attempt, scheduledTimestampMs: Date.now(), startToCloseTimeoutMs: 60_000, ...info },
    { logger: new DefaultLogger('ERROR', () => undefined) },
  ).run(fn, ...args) as Promise<R>;
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

/** A Twilio call to a fresh number, stored; the harness's router knows it, so the emulator's callbacks land. */
function addRoutedCall(memory: ReturnType<typeof setUp>['memory'], template = templateDoc()) {
  const request = harness.request('twilio');
  const call = callDoc(template, { _id: new Types.ObjectId(request.callId), toPhoneNumber: uniqueNumber() });
  memory.add(template, call);
  return { call, callId: call._id.toHexString() };
}

/** Another of our calls to the same person from the same number (a follow-up, a duplicate row), routed too. */
function addCallLike(
  memory: ReturnType<typeof setUp>['memory'],
  template: ReturnType<typeof templateDoc>,
  other: PhoneCallDoc,
) {
  const call = callDoc(template, {
    _id: new Types.ObjectId(harness.request('twilio').callId),
    toPhoneNumber: other.toPhoneNumber,
    fromPhoneNumber: other.fromPhoneNumber,
  });
  memory.add(template, call);
  return call;
}

/** A Twilio call that booked a meeting, placed and ended at the emulator, and stored. */
async function endedMeetingCall(memory: ReturnType<typeof setUp>['memory']) {
  const template = templateDoc();
  const request = harness.request('twilio', { to: numberForScenario('meeting-tuesday', '+1415557') });
  const placed = await harness.provider('twilio').placeCall(request);
  await harness.waitFor(request.callId, 'terminal');
  memory.add(
    template,
    callDoc(template, {
      _id: new Types.ObjectId(request.callId),
      toPhoneNumber: request.to,
      providerCallId: placed.providerCallId,
      // Answered, as the record of a call whose outputs are captured reads.
      status: 'inProgress',
    }),
  );
  return { request, placed };
}

describe('dialCall', () => {
  it('places the call once, and a retry whose first answer was lost finds it instead of ringing again', async () => {
    const { memory, activities } = setUp();
    const { call, callId } = addRoutedCall(memory);

    const first = await run(activities.dialCall, [{ callId }]);
    expect(memory.calls.get(callId)?.providerCallId).toBe(first.providerCallId);
    memory.calls.get(callId)!.providerCallId = undefined;
    const retried = await run(activities.dialCall, [{ callId }], 2);
    expect(retried).toEqual(first);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(1);
  });

  it('a retry past the placing window takes the call an earlier try placed, and never places one itself', async () => {
    // Our store was down for longer than the window: the try that placed the call lost its answer.
    const { memory, activities } = setUp();
    const { call, callId } = addRoutedCall(memory);
    const placed = await run(activities.dialCall, [{ callId }]);
    memory.calls.get(callId)!.providerCallId = undefined;
    const firstTry = { scheduledTimestampMs: Date.now() - DIAL_PLACING_WINDOW_MS - 60_000 };
    expect(await run(activities.dialCall, [{ callId }], 12, firstTry)).toEqual(placed);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(1);

    // No try placed this one (the provider was down): it is not placed this late.
    const { call: never, callId: neverId } = addRoutedCall(memory);
    const failure = await failureOf(run(activities.dialCall, [{ callId: neverId }], 12, firstTry));
    expect(failure.type).toBe(FAILURES.dialWindowPassed);
    expect(failure.nonRetryable).toBe(true);
    expect(harness.emulator.callsTo(never.toPhoneNumber)).toBe(0);
  });

  it('places nothing for a number listed as do-not-call while its retry looked for an earlier call', async () => {
    let listDuringLookup = () => undefined as void;
    const { memory, activities } = setUp({
      providers: async (_team, name) => {
        const provider = harness.provider(name);
        return Object.assign(Object.create(provider) as typeof provider, {
          findPlacedCall: async (...args: Parameters<typeof provider.findPlacedCall>) => {
            // The provider's search takes its time; the team lists the number meanwhile.
            await new Promise((resolve) => setTimeout(resolve, 700));
            listDuringLookup();
            return provider.findPlacedCall(...args);
          },
        });
      },
    });
    const { call, callId } = addRoutedCall(memory);
    listDuringLookup = () => {
      void memory.stores.doNotCall.add(call.teamId.toHexString(), [{ phoneNumber: call.toPhoneNumber }], {
        source: 'api',
        keyId: new Types.ObjectId().toHexString(),
      });
    };
    const failure = await failureOf(run(activities.dialCall, [{ callId }], 2));
    expect(failure.type).toBe(FAILURES.doNotCall);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(0);
  });

  it('places nothing once the calling hours it was told of have closed; a retry still takes a call placed before', async () => {
    // A first try that started late (its workers busy): the person is not rung after the close.
    const { memory, activities, metrics } = setUp();
    const { call, callId } = addRoutedCall(memory);
    const closed = new Date(Date.now() - 1_000).toISOString();
    const failure = await failureOf(run(activities.dialCall, [{ callId, placeBefore: closed }]));
    expect(failure.type).toBe(FAILURES.callingHoursClosed);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.details).toEqual([1]);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(0);
    expect(await metrics.registry.getSingleMetricAsString('phone_call_dials_total')).toContain(
      'outcome="hours-closed"',
    );
    // Before the close it places the call; a retry after the close takes that call, placing none.
    const open = new Date(Date.now() + 60_000).toISOString();
    const placed = await run(activities.dialCall, [{ callId, placeBefore: open }]);
    memory.calls.get(callId)!.providerCallId = undefined;
    expect(await run(activities.dialCall, [{ callId, placeBefore: closed }], 2)).toEqual(placed);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(1);

    // Past its placing window too, a later try that finds nothing says the hours closed, which the
    // workflow waits out, not that the window passed, which would end the call as of unknown outcome.
    const other = addRoutedCall(memory);
    const longAgo = new Date(Date.now() - DIAL_PLACING_WINDOW_MS - 60_000).toISOString();
    const late = await failureOf(
      run(activities.dialCall, [{ callId: other.callId, placeBefore: closed, placedSince: longAgo }], 2),
    );
    expect([late.type, late.details]).toEqual([FAILURES.callingHoursClosed, [2]]);
    expect(harness.emulator.callsTo(other.call.toPhoneNumber)).toBe(0);
  });

  it('places nothing when its lookup left too little of the try for the provider request: the next try looks first', async () => {
    // The server gives up on a try at its timeout and starts the next without stopping this one: a
    // request begun so late could still be placing the call while the next try looks and finds none.
    let lookupMs = 2_500;
    const { memory, activities, metrics } = setUp({
      providers: async (_team, name) => {
        const provider = harness.provider(name);
        return Object.assign(Object.create(provider) as typeof provider, {
          findPlacedCall: async (...args: Parameters<typeof provider.findPlacedCall>) => {
            await new Promise((resolve) => setTimeout(resolve, lookupMs));
            return provider.findPlacedCall(...args);
          },
        });
      },
    });
    const { call, callId } = addRoutedCall(memory);
    // 20 s to close, 2.5 s of lookup: 17.5 s left, under a request's 15 s and the margin.
    const late = await failureOf(run(activities.dialCall, [{ callId }], 2, { startToCloseTimeoutMs: 20_000 }));
    expect({ type: late.type, nonRetryable: late.nonRetryable }).toEqual({
      type: FAILURES.dialTryOutOfTime,
      nonRetryable: false,
    });
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(0);
    expect(memory.calls.get(callId)?.providerCallId).toBeUndefined();

    // Paced, a try keeps room for its turn's wait too (3 s): 20.5 s with no lookup at all is too little,
    // and the account's turn is not taken for nothing.
    lookupMs = 0;
    const paced = await failureOf(
      run(activities.dialCall, [{ callId, paced: true }], 1, { startToCloseTimeoutMs: 20_500 }),
    );
    expect(paced.type).toBe(FAILURES.dialTryOutOfTime);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(0);
    const placed = await run(activities.dialCall, [{ callId }], 3);
    expect(memory.calls.get(callId)?.providerCallId).toBe(placed.providerCallId);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(1);
    const dials = await metrics.registry.getSingleMetric('phone_call_dials_total')!.get();
    expect(dials.values.map((v) => [v.labels.outcome, v.value])).toEqual([
      ['try-out-of-time', 2],
      ['placed', 1],
    ]);
  });

  it("a dial told an earlier one may have placed the call counts the placing window from that one's start", async () => {
    // A run of 429s after a later try: each new dial must not open a window of its own, or the call
    // could be placed hours after the calling hours were checked.
    const { memory, activities } = setUp();
    const { call, callId } = addRoutedCall(memory);
    const since = new Date(Date.now() - DIAL_PLACING_WINDOW_MS - 60_000).toISOString();
    const failure = await failureOf(run(activities.dialCall, [{ callId, placedSince: since }]));
    expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({
      type: FAILURES.dialWindowPassed,
      nonRetryable: true,
    });
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(0);
  });

  it('a dial told an earlier try may have placed the call looks for it first, even on its own first try', async () => {
    const { memory, activities } = setUp();
    const { call, callId } = addRoutedCall(memory);
    const since = new Date(Date.now() - 1_000).toISOString();
    const first = await run(activities.dialCall, [{ callId }]);
    memory.calls.get(callId)!.providerCallId = undefined;
    expect(await run(activities.dialCall, [{ callId, placedSince: since }])).toEqual(first);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(1);
  });

  it("a retry never takes another call's to the same number as its own: it dials", async () => {
    // Twilio lists calls by their two numbers only. A follow-up to the same person whose first dial
    // never reached the provider must not take over the call already placed for the other record.
    const { memory, activities } = setUp();
    const template = templateDoc();
    const { call: other, callId: otherId } = addRoutedCall(memory, template);
    const placed = await run(activities.dialCall, [{ callId: otherId }]);
    const followUp = addCallLike(memory, template, other);
    const retried = await run(activities.dialCall, [{ callId: followUp._id.toHexString() }], 2);
    expect(retried.providerCallId).not.toBe(placed.providerCallId);
    expect(harness.emulator.callsTo(other.toPhoneNumber)).toBe(2);
  });

  it("never takes a sighting of a call another of our calls holds (a callback replayed to this call's URL)", async () => {
    const { memory, activities } = setUp();
    const template = templateDoc();
    const { call: other, callId: otherId } = addRoutedCall(memory, template);
    const placed = await run(activities.dialCall, [{ callId: otherId }]);
    const followUp = addCallLike(memory, template, other);
    const followUpId = followUp._id.toHexString();
    memory.sightings.set(followUpId, [placed.providerCallId]);
    const retried = await run(activities.dialCall, [{ callId: followUpId }], 2);
    expect(retried.providerCallId).not.toBe(placed.providerCallId);
    expect(harness.emulator.callsTo(other.toPhoneNumber)).toBe(2);
    // The other call's own retry, its call sighted by both (the replay above), still takes its call:
    // only a record counts against a sighting, and the call is on no other record.
    memory.calls.get(otherId)!.providerCallId = undefined;
    memory.sightings.set(otherId, [placed.providerCallId]);
    expect(await run(activities.dialCall, [{ callId: otherId }], 2)).toEqual({ providerCallId: placed.providerCallId });
    expect(harness.emulator.callsTo(other.toPhoneNumber)).toBe(2);
  });

  it("takes a retry's call from the callbacks' sightings without asking the provider, but never an earlier attempt's", async () => {
    // The provider's search must not be needed: it may no longer list a call that has ended.
    const asked: string[] = [];
    const { memory, activities } = setUp({
      providers: async (_team, name) => {
        const provider = harness.provider(name);
        return Object.assign(Object.create(provider) as typeof provider, {
          findPlacedCall: async (...args: Parameters<typeof provider.findPlacedCall>) => {
            asked.push(args[0].callId);
            return provider.findPlacedCall(...args);
          },
        });
      },
    });
    const { call, callId } = addRoutedCall(memory);

    const first = await run(activities.dialCall, [{ callId }]);
    memory.calls.get(callId)!.providerCallId = undefined;
    memory.sightings.set(callId, [first.providerCallId]);
    expect(await run(activities.dialCall, [{ callId }], 2)).toEqual({ providerCallId: first.providerCallId });
    expect(memory.calls.get(callId)?.providerCallId).toBe(first.providerCallId);
    expect(asked).toEqual([]);

    // Redialled: the first attempt's call is in the attempts, and its sighting is not this attempt's.
    const stored = memory.calls.get(callId)!;
    stored.providerCallId = undefined;
    stored.attempts = [{ providerCallId: first.providerCallId }] as unknown as PhoneCallDoc['attempts'];
    const redial = await run(activities.dialCall, [{ callId }], 2);
    expect(redial.providerCallId).not.toBe(first.providerCallId);
    expect(asked).toEqual([callId]);
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(2);
  });

  it("spaces a paced team's requests at its account's rate as the provider sees them; an unpaced call's go at once", async () => {
    const { memory, activities } = setUp({ pacing: memoryPacingStore({ dialsPerSecond: { twilio: 4 } }) });
    const template = templateDoc();
    const placedAt = async (paced: boolean) => {
      const calls = [1, 2, 3].map(() => addRoutedCall(memory, template));
      // Granted together, as a late dial arrives with the next one's grant.
      await Promise.all(calls.map(({ callId }) => run(activities.dialCall, [{ callId, paced }])));
      const numbers = new Set(calls.map(({ call }) => call.toPhoneNumber));
      return harness.emulator
        .calls()
        .filter((c) => numbers.has(c.to))
        .map((c) => c.placedAt!)
        .sort((a, b) => a - b);
    };

    const paced = await placedAt(true);
    expect(paced).toHaveLength(3);
    // Sent 250 ms apart at 4 per second; the emulator's clock adds each request's way there, longest for
    // the first on a new connection on a busy machine (81 ms seen beside a CI run), which shortens the
    // gap after it: each counted from the first, with 150 ms allowed. Unpaced, all three come within 240 ms.
    expect(paced[1]! - paced[0]!).toBeGreaterThanOrEqual(250 - 150);
    expect(paced[2]! - paced[0]!).toBeGreaterThanOrEqual(500 - 150);

    const unpaced = await placedAt(false);
    expect(unpaced).toHaveLength(3);
    expect(unpaced[2]! - unpaced[0]!).toBeLessThan(240);
  });

  it('leaves a turn further off than the activity may wait to the workflow, saying whose rate it is, and rings nobody', async () => {
    // One dial every 5 s: the second dial's turn is beyond the activity's 3 s.
    const { memory, activities, metrics } = setUp({ pacing: memoryPacingStore({ dialsPerSecond: { twilio: 0.2 } }) });
    const template = templateDoc();
    const first = addRoutedCall(memory, template);
    const second = addRoutedCall(memory, template);
    await run(activities.dialCall, [{ callId: first.callId, paced: true }]);
    const refused = await failureOf(run(activities.dialCall, [{ callId: second.callId, paced: true }]));
    // The team's own rate, not the provider's: the workflow waits alike but says so.
    expect({ type: refused.type, nonRetryable: refused.nonRetryable }).toEqual({
      type: FAILURES.accountDialRateReached,
      nonRetryable: true,
    });
    expect(Number(refused.details?.[0])).toBeGreaterThan(3_000);
    expect(Number(refused.details?.[0])).toBeLessThanOrEqual(5_000);
    expect(harness.emulator.callsTo(second.call.toPhoneNumber)).toBe(0);
    expect(memory.calls.get(second.callId)?.providerCallId).toBeUndefined();
    const dials = await metrics.registry.getSingleMetric('phone_call_dials_total')!.get();
    expect(dials.values.map((v) => [v.labels.outcome, v.value])).toEqual([
      ['placed', 1],
      ['turn-ahead', 1],
    ]);
  });

  it('fails for good when the record is gone, the provider refuses the number, or the team has no credentials', async () => {
    const { memory, activities } = setUp();
    const missing = await failureOf(run(activities.dialCall, [{ callId: new Types.ObjectId().toHexString() }]));
    expect({ type: missing.type, nonRetryable: missing.nonRetryable }).toEqual({
      type: FAILURES.callRecordMissing,
      nonRetryable: true,
    });

    const template = templateDoc();
    // The emulator refuses numbers ending in 1404 (decisions.md).
    const refused = callDoc(template, { toPhoneNumber: uniqueNumber('1404') });
    memory.add(template, refused);
    const rejection = await failureOf(run(activities.dialCall, [{ callId: refused._id.toHexString() }]));
    expect({ type: rejection.type, nonRetryable: rejection.nonRetryable, details: rejection.details }).toEqual({
      type: FAILURES.providerRejected,
      nonRetryable: true,
      details: ['invalid-number'],
    });

    const unconfigured = setUp({
      providers: async (teamId, provider) => {
        throw new ProviderNotConfiguredError(`team ${String(teamId)} has no ${provider} credentials`);
      },
    });
    const call = callDoc(template);
    unconfigured.memory.add(template, call);
    const notConfigured = await failureOf(run(unconfigured.activities.dialCall, [{ callId: call._id.toHexString() }]));
    expect({ type: notConfigured.type, nonRetryable: notConfigured.nonRetryable }).toEqual({
      type: FAILURES.providerNotConfigured,
      nonRetryable: true,
    });
    expect(harness.emulator.callsTo(call.toPhoneNumber)).toBe(0);

    // So do the provider's other steps: hang-up, status poll, voicemail and capture (they retried
    // their whole policy, minutes each, for credentials that cannot come back).
    const callId = call._id.toHexString();
    const steps = [
      run(unconfigured.activities.hangUpCall, [{ callId, providerCallId: 'pc-1' }]),
      run(unconfigured.activities.pollCallEvents, [{ callId, providerCallId: 'pc-1' }]),
      run(unconfigured.activities.leaveVoicemail, [{ callId, providerCallId: 'pc-1' }]),
      run(unconfigured.activities.captureCallOutputs, [
        {
          callId,
          providerCallId: 'pc-1',
          record: true,
          answeredAt: new Date().toISOString(),
          endedAt: new Date().toISOString(),
        },
      ]),
    ];
    for (const step of steps) {
      const failure = await failureOf(step);
      expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({
        type: FAILURES.providerNotConfigured,
        nonRetryable: true,
      });
    }
  });
});

describe('hangUpCall', () => {
  const stateOf = (providerCallId: string) =>
    harness.emulator.calls().find((c) => c.providerCallId === providerCallId)?.state;

  it('cut short mid-dial, finds the call a try placed and lost, and hangs it up, never another call to the number', async () => {
    const { memory, activities } = setUp();
    const template = templateDoc();
    const { call: other, callId: otherId } = addRoutedCall(memory, template);
    const dialledSince = new Date().toISOString();
    const others = await run(activities.dialCall, [{ callId: otherId }]);
    // Another of our calls to the same person, from the same number: its try placed the call, then
    // lost its answer (nothing on the record, no callback seen yet).
    const cut = addCallLike(memory, template, other);
    const cutId = cut._id.toHexString();
    // Not yet placed: nothing to hang up, and the other call is not taken for it.
    expect(await run(activities.hangUpCall, [{ callId: cutId, dialledSince }])).toBeNull();
    expect(stateOf(others.providerCallId)).not.toBe('ended');

    const placed = await run(activities.dialCall, [{ callId: cutId }]);
    memory.calls.get(cutId)!.providerCallId = undefined;
    // Without the dial's start the hang-up knows of no call.
    expect(await run(activities.hangUpCall, [{ callId: cutId }])).toBeNull();
    expect(stateOf(placed.providerCallId)).not.toBe('ended');

    expect(await run(activities.hangUpCall, [{ callId: cutId, dialledSince }])).toBe(placed.providerCallId);
    expect(stateOf(placed.providerCallId)).toBe('ended');
    expect(stateOf(others.providerCallId)).not.toBe('ended');
    expect(harness.emulator.callsTo(other.toPhoneNumber)).toBe(2);
  });
});

describe('recordStatus of a call whose capture failed for good', () => {
  it("writes an empty value for each of the template's result columns with the final status", async () => {
    const { memory, activities } = setUp();
    const template = templateDoc();
    const call = callDoc(template, { status: 'inProgress' });
    memory.add(template, call);
    const callId = call._id.toHexString();
    const at = new Date().toISOString();
    const change = { callId, status: 'completed' as const, statusCode: 'completed', at, emptyResults: true as const };
    expect(await run(activities.recordStatus, [change])).toMatchObject({ applied: true });
    expect(memory.calls.get(callId)).toMatchObject({
      status: 'completed',
      resultValues: [
        { columnName: 'interested', value: '' },
        { columnName: 'meetingTime', value: '' },
      ],
      customTagsHitOnCall: [],
    });
  });
});

describe('recordStatus and deleteCallRecord', () => {
  it('report a refused change as not applied, a missing record as a failure, and a dialled call as not deletable', async () => {
    const { memory, activities } = setUp();
    const template = templateDoc();
    const call = callDoc(template);
    memory.add(template, call);
    const callId = call._id.toHexString();
    const at = new Date().toISOString();
    const applied = await run(activities.recordStatus, [
      { callId, status: 'ringing' as const, statusCode: 'dialling', at },
    ]);
    expect(applied).toMatchObject({ applied: true, call: { _id: callId, status: 'ringing' } });
    memory.skipNextStatusChanges();
    expect(
      await run(activities.recordStatus, [{ callId, status: 'queued' as const, statusCode: 'queued', at }]),
    ).toEqual({ applied: false, call: null });
    const missing = await failureOf(
      run(activities.recordStatus, [
        { callId: new Types.ObjectId().toHexString(), status: 'failed' as const, statusCode: 'provider-error', at },
      ]),
    );
    expect(missing.type).toBe(FAILURES.callRecordMissing);

    const notQueued = await failureOf(run(activities.deleteCallRecord, [{ callId }]));
    expect({ type: notQueued.type, message: notQueued.message }).toEqual({
      type: FAILURES.callNotQueued,
      message: `phone call ${callId} is ringing, not queued`,
    });
    expect(memory.calls.has(callId)).toBe(true);

    const queued = callDoc(template);
    memory.add(template, queued);
    expect(await run(activities.deleteCallRecord, [{ callId: queued._id.toHexString() }])).toMatchObject({
      deletedCall: { _id: queued._id.toHexString(), status: 'queued' },
      ownTargets: [],
    });
    expect(memory.calls.has(queued._id.toHexString())).toBe(false);
    expect(await run(activities.deleteCallRecord, [{ callId: queued._id.toHexString() }])).toBeNull();
  });
});

describe('captureCallOutputs', () => {
  /** A recorded Twilio call that talked about a meeting and has ended, stored; the capture's input. */
  async function endedConversation(memory: ReturnType<typeof setUp>['memory']) {
    const template = templateDoc();
    const request = harness.request('twilio', { to: numberForScenario('meeting-tuesday', '+1415555') });
    const placed = await harness.provider('twilio').placeCall(request);
    await harness.waitFor(request.callId, 'terminal');
    const call = callDoc(template, {
      _id: new Types.ObjectId(request.callId),
      toPhoneNumber: request.to,
      providerCallId: placed.providerCallId,
      status: 'inProgress',
    });
    memory.add(template, call);
    return {
      request,
      input: {
        callId: request.callId,
        providerCallId: placed.providerCallId,
        record: true,
        answeredAt: new Date(Date.now() - 60_000).toISOString(),
        endedAt: new Date().toISOString(),
      },
    };
  }

  it('stores the recording under a stable token, the transcript in spoken order and the results; a retry rewrites the same', async () => {
    const { memory, activities } = setUp();
    const { request, input } = await endedConversation(memory);

    const first = await run(activities.captureCallOutputs, [input]);
    const second = await run(activities.captureCallOutputs, [input], 2);
    expect(second).toEqual(first);
    const stored = memory.calls.get(request.callId)!;
    expect(stored.recordingUrl).toBe(
      `${harness.routerUrl}/recordings/${memory.recordings.get(request.callId)!.token}.wav`,
    );
    expect(memory.recordings.size).toBe(1);
    const utterances = memory.transcripts.get(request.callId)!;
    expect(utterances[0]).toMatchObject({ speaker: 'agent' });
    expect(utterances.map((u) => u.at.getTime())).toEqual(
      [...utterances.map((u) => u.at.getTime())].sort((a, b) => a - b),
    );
    expect(new Set(utterances.map((u) => u.at.getTime())).size).toBe(utterances.length);
    expect(first.transcriptEvent).toMatchObject({ phoneCallId: request.callId, transcripts: expect.any(Array) });
    expect(stored.resultValues.map((r) => r.columnName)).toEqual(['interested', 'meetingTime']);
    expect(stored.fixedMeetingTime).toBeInstanceOf(Date);
  });

  it('leaves no recording or transcript of a call deleted while a try the server gave up on still writes', async () => {
    const { memory, activities } = setUp();
    const { request, input } = await endedConversation(memory);
    // The call, queued again for its redial, is deleted (its record, then what it finds of its
    // conversation) just before this try's recording lands.
    const { conversations } = memory.stores;
    const save = conversations.saveRecording.bind(conversations);
    conversations.saveRecording = async (ref, audio, contentType) => {
      memory.calls.delete(request.callId);
      await conversations.remove(ref);
      return save(ref, audio, contentType);
    };
    const failure = await failureOf(run(activities.captureCallOutputs, [input]));
    expect(failure.type).toBe(FAILURES.callRecordMissing);
    expect(failure.nonRetryable).toBe(true);
    expect(memory.recordings.has(request.callId)).toBe(false);
    expect(memory.transcripts.has(request.callId)).toBe(false);
  });
});

describe('captureCallOutputs and a recording not ready or not fetched', () => {
  it('waits for a Twilio recording still processing at the hang-up, then stores it with the transcript and results', async () => {
    // Slower emulated time: the recording is processing for 600 ms of wall time after the hang-up.
    const slow = await startHarness({ speedFactor: 0.2 });
    try {
      const { memory, activities } = setUp({ providers: async (_team, provider) => slow.provider(provider) });
      const template = templateDoc();
      const request = slow.request('twilio');
      const adapter = slow.provider('twilio');
      const placed = await adapter.placeCall(request);
      await slow.waitFor(request.callId, 'answered');
      await adapter.hangUp(placed.providerCallId);
      await slow.waitFor(request.callId, 'terminal');
      const endedAt = new Date().toISOString();
      // As Twilio does: listed at once, processing.
      const { accountSid, authToken } = slow.credentials.twilio.twilio;
      const listed = await fetch(
        `${slow.emulator.url}/2010-04-01/Accounts/${accountSid}/Recordings.json?CallSid=${placed.providerCallId}`,
        { headers: { Authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}` } },
      );
      expect(((await listed.json()) as { recordings: { status: string }[] }).recordings).toMatchObject([
        { status: 'processing' },
      ]);
      memory.add(
        template,
        callDoc(template, {
          _id: new Types.ObjectId(request.callId),
          toPhoneNumber: request.to,
          providerCallId: placed.providerCallId,
          status: 'inProgress',
        }),
      );

      await run(activities.captureCallOutputs, [
        {
          callId: request.callId,
          providerCallId: placed.providerCallId,
          record: true,
          answeredAt: new Date(Date.now() - 1_000).toISOString(),
          endedAt,
        },
      ]);
      const stored = memory.calls.get(request.callId)!;
      expect(stored.recordingUrl).toBe(
        `${harness.routerUrl}/recordings/${memory.recordings.get(request.callId)!.token}.wav`,
      );
      // Hung up as soon as answered: a transcript (of nothing said) was had, so each column has its value.
      expect(memory.transcripts.has(request.callId)).toBe(true);
      expect(stored.resultValues.map((r) => r.columnName)).toEqual(['interested', 'meetingTime']);
    } finally {
      await slow.close();
    }
  });

  it("stores a transcript in the provider's order even when its offsets run back (people talking over each other)", async () => {
    const twilio = harness.provider('twilio');
    const overlapping = {
      ...twilio,
      fetchTranscript: async () => [
        { speaker: 'agent' as const, text: 'Would Tuesday suit you?', offsetSeconds: 1.0 },
        { speaker: 'human' as const, text: 'Yes.', offsetSeconds: 0.8 },
        { speaker: 'agent' as const, text: 'Great.', offsetSeconds: 5.0 },
      ],
    };
    const { memory, activities } = setUp({ providers: async () => overlapping });
    const template = templateDoc();
    const call = callDoc(template, { providerCallId: 'pc-overlap' });
    memory.add(template, call);
    const answeredAt = new Date('2026-03-06T15:00:00.000Z');
    await run(activities.captureCallOutputs, [
      {
        callId: call._id.toHexString(),
        providerCallId: 'pc-overlap',
        record: false,
        answeredAt: answeredAt.toISOString(),
        endedAt: new Date(answeredAt.getTime() + 10_000).toISOString(),
      },
    ]);
    const stored = memory.transcripts.get(call._id.toHexString())!;
    expect(stored.map((u) => u.text)).toEqual(['Would Tuesday suit you?', 'Yes.', 'Great.']);
    // Read back by time (as GET /v1/transcripts lists them), the order is the same.
    expect(stored.map((u) => u.at.getTime() - answeredAt.getTime())).toEqual([1_000, 1_001, 5_000]);
  });

  it("stores the transcript and results without a recording that cannot be fetched, on the capture's last attempt", async () => {
    const twilio = harness.provider('twilio');
    let asked = 0;
    const failing = {
      ...twilio,
      fetchRecording: async () => {
        asked += 1;
        throw new Error('twilio recording download answered 500');
      },
    };
    const { memory, activities } = setUp({ providers: async () => failing });
    const { request, placed } = await endedMeetingCall(memory);
    // Retried now and then: the capture runs past the wait for the recording.
    const input = {
      callId: request.callId,
      providerCallId: placed.providerCallId,
      record: true,
      answeredAt: new Date(Date.now() - 200_000).toISOString(),
      endedAt: new Date(Date.now() - 100_000).toISOString(),
    };
    const retryPolicy = { maximumAttempts: 10 };
    // An attempt before the last fails, for Temporal to retry: the recording may yet come.
    await expect(run(activities.captureCallOutputs, [input], 9, { retryPolicy })).rejects.toThrow(
      'twilio recording download answered 500',
    );
    expect(memory.transcripts.has(request.callId)).toBe(false);
    // The last one stores everything else.
    const captured = await run(activities.captureCallOutputs, [input], 10, { retryPolicy });
    expect(asked).toBe(2);
    expect(captured.transcriptEvent).toMatchObject({ phoneCallId: request.callId });
    const stored = memory.calls.get(request.callId)!;
    expect(stored.recordingUrl).toBeUndefined();
    expect(memory.recordings.size).toBe(0);
    expect(stored.resultValues.map((r) => r.columnName)).toEqual(['interested', 'meetingTime']);
    expect(stored.fixedMeetingTime).toBeInstanceOf(Date);
  });
});

describe('captureCallOutputs when the transcript cannot be fetched', () => {
  it("stores and links the recording without a transcript or results, on the capture's last attempt", async () => {
    const twilio = harness.provider('twilio');
    const failing = {
      ...twilio,
      fetchTranscript: async () => {
        throw new Error('twilio transcript GT123 is failed');
      },
    };
    const { memory, activities } = setUp({ providers: async () => failing });
    const { request, placed } = await endedMeetingCall(memory);
    const input = {
      callId: request.callId,
      providerCallId: placed.providerCallId,
      record: true,
      answeredAt: new Date(Date.now() - 20_000).toISOString(),
      endedAt: new Date().toISOString(),
    };
    const retryPolicy = { maximumAttempts: 10 };
    // An attempt before the last fails, for Temporal to retry: the transcript may yet come.
    await expect(run(activities.captureCallOutputs, [input], 9, { retryPolicy })).rejects.toThrow(
      'twilio transcript GT123 is failed',
    );
    // The last one stores the recording and links it.
    const captured = await run(activities.captureCallOutputs, [input], 10, { retryPolicy });
    expect(captured.transcriptEvent).toBeNull();
    const stored = memory.calls.get(request.callId)!;
    expect(stored.recordingUrl).toBe(
      `${harness.routerUrl}/recordings/${memory.recordings.get(request.callId)!.token}.wav`,
    );
    expect(memory.transcripts.get(request.callId) ?? []).toEqual([]);
    // Nothing is said of a conversation nobody could read (not "the callee did not speak"): an empty
    // value for each of the template's columns.
    expect(stored.resultValues).toEqual([
      { columnName: 'interested', value: '' },
      { columnName: 'meetingTime', value: '' },
    ]);
    expect(stored.customTagsHitOnCall).toEqual([]);
    expect(stored.fixedMeetingTime).toBeNull();
  });
});

describe('captureCallOutputs hands events on in order', () => {
  it('leaves the final status to the workflow when the transcript could not be handed on', async () => {
    // The first stream signal fails (Temporal unreachable for a moment), the next would go through:
    // the workflow routes the transcript, and must route the final status after it, not find it handed
    // on already.
    let signals = 0;
    const blinking = {
      workflow: {
        getHandle: () => ({
          signal: async () => {
            signals += 1;
            if (signals === 1) throw new Error('Temporal is unreachable');
          },
        }),
      },
    } as unknown as Client;
    const { memory, activities } = setUp({ temporalClient: blinking });
    const template = templateDoc();
    memory.teamWebhooks.push({
      _id: new Types.ObjectId(),
      teamId: template.teamId,
      url: `${receiver.url}/ordered`,
      method: 'POST',
      subscribedEvents: ['*'],
      secretSealed: secretBox.seal('ordered-secret'),
    } as unknown as WebhookDoc);
    const request = harness.request('twilio', { to: numberForScenario('meeting-tuesday', '+1415556') });
    const placed = await harness.provider('twilio').placeCall(request);
    await harness.waitFor(request.callId, 'terminal');
    memory.add(
      template,
      callDoc(template, {
        _id: new Types.ObjectId(request.callId),
        toPhoneNumber: request.to,
        providerCallId: placed.providerCallId,
        status: 'inProgress',
      }),
    );
    const endedAt = new Date().toISOString();
    const eventOf = (type: WebhookEvent['type'], id: string) => ({
      eventId: id,
      type,
      timestamp: endedAt,
      callId: request.callId,
      teamId: template.teamId.toHexString(),
    });
    const endpointKey = `wh-${memory.teamWebhooks.at(-1)!._id.toHexString()}`;
    const captured = await run(activities.captureCallOutputs, [
      {
        callId: request.callId,
        providerCallId: placed.providerCallId,
        record: false,
        answeredAt: new Date(Date.now() - 60_000).toISOString(),
        endedAt,
        final: { callId: request.callId, status: 'completed', statusCode: 'completed', at: endedAt, fields: {} },
        route: {
          // The endpoint's stream runs: handing the transcript to it fails.
          transcript: { event: eventOf('transcript.created', 'evt_t'), streams: { [endpointKey]: 'stream-1' } },
          final: { event: eventOf('phoneCall.completed', 'evt_c'), streams: { [endpointKey]: 'stream-1' } },
        },
      },
    ]);
    expect(captured.transcriptEvent).not.toBeNull();
    expect(captured.transcriptRouted).toBeUndefined();
    expect(captured.final).toMatchObject({ applied: true });
    expect(captured.final?.routed).toBeUndefined();
    expect(signals).toBe(1);
  });
});

describe('webhook activities', () => {
  function event(callId: string): WebhookEvent {
    return {
      eventId: `evt_${callId}_phoneCall.completed`,
      type: 'phoneCall.completed',
      timestamp: new Date().toISOString(),
      callId,
      teamId: '',
      data: { _id: callId },
    };
  }

  it('resolve team and per-call endpoints subscribed to the event, and record every attempt with its outcome', async () => {
    const { memory, activities } = setUp({ retryDelays: [5_000, 60_000] });
    const template = templateDoc();
    const call = callDoc(template, {
      phoneCallWebhooks: [
        {
          url: `${receiver.url}/per-call`,
          subscribedEvent: 'phoneCall.completed',
          secretSealed: secretBox.seal('per-call-secret'),
        },
        {
          url: `${receiver.url}/other`,
          subscribedEvent: 'phoneCall.ringing',
          secretSealed: secretBox.seal('other-secret'),
        },
      ] as PhoneCallDoc['phoneCallWebhooks'],
    });
    memory.add(template, call);
    const hook = {
      _id: new Types.ObjectId(),
      teamId: template.teamId,
      url: `${receiver.url}/team`,
      method: 'POST',
      subscribedEvents: ['*'],
      secretSealed: secretBox.seal(`whsec_${randomBytes(24).toString('base64')}`),
    };
    memory.teamWebhooks.push(hook as unknown as WebhookDoc);
    const callId = call._id.toHexString();
    const base0 = () => ({ callId, teamId: template.teamId.toHexString() });
    const resolved = await run(activities.resolveWebhookTargets, [
      { callId, teamId: template.teamId.toHexString(), type: 'phoneCall.completed' as const },
    ]);
    expect(resolved.targets.map((t) => t.endpointKey)).toEqual([`wh-${hook._id.toHexString()}`, 'call-0']);
    expect(resolved.retryDelaysMs).toEqual([5_000, 60_000]);
    expect(resolved.call).toMatchObject({ _id: callId });

    // Told what the call's own webhooks subscribe to, and that the payload is given: an event none of
    // them wants is resolved from the team's webhooks alone, without reading the call.
    let callReads = 0;
    const findById = memory.stores.calls.findById.bind(memory.stores.calls);
    memory.stores.calls.findById = async (id) => {
      callReads += 1;
      return findById(id);
    };
    const ownEvents = ['phoneCall.completed', 'phoneCall.ringing'];
    const inProgress = await run(activities.resolveWebhookTargets, [
      { ...base0(), type: 'phoneCall.inProgress' as const, ownWebhookEvents: ownEvents, wantsCall: false },
    ]);
    expect(inProgress.targets.map((t) => t.endpointKey)).toEqual([`wh-${hook._id.toHexString()}`]);
    expect(inProgress.call).toBeNull();
    expect(callReads).toBe(0);
    // One of them wants it: the call is read for its targets, and its view is still left out.
    const ringing = await run(activities.resolveWebhookTargets, [
      { ...base0(), type: 'phoneCall.ringing' as const, ownWebhookEvents: ownEvents, wantsCall: false },
    ]);
    expect(ringing.targets.map((t) => t.endpointKey)).toEqual([`wh-${hook._id.toHexString()}`, 'call-1']);
    expect(ringing.call).toBeNull();
    expect(callReads).toBe(1);
    // The payload is the call (phoneCall.queued): read for the team's webhook even with no own one.
    const queued = await run(activities.resolveWebhookTargets, [
      { ...base0(), type: 'phoneCall.queued' as const, ownWebhookEvents: ownEvents },
    ]);
    expect(queued.call).toMatchObject({ _id: callId });
    expect(callReads).toBe(2);

    receiver.on('/team', (_req, count) => (count === 1 ? 500 : 200));
    receiver.on('/per-call', () => 410);
    const [team, perCall] = resolved.targets;
    const base = { callId, teamId: template.teamId.toHexString(), event: event(callId) };
    expect(
      await run(activities.attemptWebhookDelivery, [{ ...base, target: team!, attempt: 1, isLastAttempt: false }]),
    ).toEqual({ ok: false, gone: false });
    expect(
      await run(activities.attemptWebhookDelivery, [{ ...base, target: team!, attempt: 2, isLastAttempt: false }]),
    ).toEqual({ ok: true, gone: false });
    expect(
      await run(activities.attemptWebhookDelivery, [{ ...base, target: perCall!, attempt: 1, isLastAttempt: false }]),
    ).toEqual({ ok: false, gone: true });
    expect(memory.attempts.map((a) => [a.endpointKey, a.state, a.attempt.attempt, a.attempt.statusCode])).toEqual([
      [team!.endpointKey, 'pending', 1, 500],
      [team!.endpointKey, 'delivered', 2, 200],
      ['call-0', 'gone', 1, 410],
    ]);
    // Each write is ordered by its attempt and its activity's try (a later one keeps the state).
    expect(memory.attempts.map((a) => a.writeOrder)).toEqual([
      deliveryWriteOrder(0, 1, true, 1),
      deliveryWriteOrder(0, 2, true, 1),
      deliveryWriteOrder(0, 1, true, 1),
    ]);
    // Both endpoints were signed with their own secret, under the event's stable id.
    expect(receiver.at('/team').map((r) => r.headers['webhook-id'])).toEqual([base.event.eventId, base.event.eventId]);

    // Attempts that could not be made are noted; the last of the schedule ends the delivery failed. The
    // reason (it may name our internal hosts) goes to our log, not to the record the team reads.
    const NOT_MADE = 'not attempted: the service could not make the attempt (its database or secrets were unavailable)';
    const notMade = { ...base, target: perCall!, error: 'connect ECONNREFUSED 10.0.3.7:27017' };
    await run(activities.recordAttemptNotMade, [{ ...notMade, attempt: 2, isLastAttempt: false }]);
    await run(activities.recordAttemptNotMade, [{ ...notMade, attempt: 3, isLastAttempt: true }]);
    expect(memory.attempts.slice(3).map((a) => [a.state, a.attempt.attempt, a.attempt.error, a.writeOrder])).toEqual([
      ['pending', 2, NOT_MADE, deliveryWriteOrder(0, 2, false, 1)],
      ['failed', 3, NOT_MADE, deliveryWriteOrder(0, 3, false, 1)],
    ]);

    // A retried activity's write is ordered by its try.
    await run(activities.attemptWebhookDelivery, [{ ...base, target: team!, attempt: 3, isLastAttempt: false }], 4);
    expect(memory.attempts.at(-1)?.writeOrder).toBe(deliveryWriteOrder(0, 3, true, 4));
  });

  it("signs with a call's own secret as resealed under the current key, once the one its stream began with is not", async () => {
    // A stream began with the secret sealed under the old key; `secrets reseal` has sealed the call's
    // record under the new one, and the old key is dropped. Before, every attempt of the stream failed
    // to open its secret until the call ended, days later for a call scheduled next week.
    const oldKey = randomBytes(32).toString('base64');
    const newKey = randomBytes(32).toString('base64');
    const plain = `whsec_${randomBytes(24).toString('base64')}`;
    const { memory, activities } = setUp({ secretBox: createSecretBox(newKey) });
    const template = templateDoc();
    const url = `${receiver.url}/rotated`;
    const call = callDoc(template, {
      phoneCallWebhooks: [
        { url, subscribedEvent: '*', secretSealed: createSecretBox(newKey, [oldKey]).seal(plain) },
      ] as PhoneCallDoc['phoneCallWebhooks'],
    });
    memory.add(template, call);
    const callId = call._id.toHexString();
    const target = {
      endpointKey: 'call-0',
      url,
      method: 'POST' as const,
      secretSealed: createSecretBox(oldKey).seal(plain),
      webhookId: null,
    };
    const sent = event(callId);
    const attempt = {
      callId,
      teamId: template.teamId.toHexString(),
      event: sent,
      target,
      attempt: 1,
      isLastAttempt: false,
    };
    expect(await run(activities.attemptWebhookDelivery, [attempt])).toEqual({ ok: true, gone: false });
    const [request] = receiver.at('/rotated');
    const timestamp = Number(request!.headers['webhook-timestamp']);
    expect(request!.headers['webhook-signature']).toBe(
      signWebhook({ secret: plain, id: sent.eventId, timestamp, content: request!.body }),
    );
    // A call deleted since has no record to read: its stream keeps the secret it began with.
    memory.calls.delete(callId);
    await expect(run(activities.attemptWebhookDelivery, [{ ...attempt, attempt: 2 }])).rejects.toThrow(
      /sealed value failed authentication/,
    );
  });

  it('hands a request it made and could not record to the workflow on its last try, and notes it as made', async () => {
    const { memory, activities } = setUp();
    const callId = new Types.ObjectId().toHexString();
    const target = {
      endpointKey: 'call-0',
      url: `${receiver.url}/unrecorded`,
      method: 'POST' as const,
      secretSealed: secretBox.seal('per-call-secret'),
      webhookId: null,
    };
    const attempt = { callId, teamId: '', target, event: event(callId), attempt: 1, isLastAttempt: false };
    const store = memory.stores.webhooks;
    const record = store.recordAttempt;
    store.recordAttempt = async () => {
      throw new Error('MongoServerSelectionError: the store is down');
    };
    const policy = { retryPolicy: { maximumAttempts: 10 } };
    // A try before the last fails as the store did: its retry records what its heartbeat kept.
    await expect(run(activities.attemptWebhookDelivery, [attempt], 9, policy)).rejects.toThrow(/the store is down/);
    // The last hands the request's outcome over with its failure, which is final.
    const failure = await failureOf(run(activities.attemptWebhookDelivery, [attempt], 10, policy));
    expect(failure).toMatchObject({ type: FAILURES.webhookAttemptUnrecorded, nonRetryable: true });
    const made = failure.details?.[0] as MadeAttempt;
    expect(made).toMatchObject({ target: { url: target.url }, result: { ok: true, statusCode: 200 } });
    // The store is back: the workflow's note records it as made, with its outcome.
    store.recordAttempt = record;
    await run(activities.recordAttemptNotMade, [{ ...attempt, error: failure.message, made }]);
    expect(memory.attempts.at(-1)).toMatchObject({
      state: 'delivered',
      attempt: { attempt: 1, statusCode: 200, error: null },
      writeOrder: deliveryWriteOrder(0, 1, true, 1),
    });
  });
});

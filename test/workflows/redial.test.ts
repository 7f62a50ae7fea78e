// The redial policy on the time-skipping server: hours of spacing, and a redial that falls outside
// the calling hours waiting for them (a redial's, and a dial refused for a rate limit), and a batch's
// pause or cancel reaching a call while it rings, in seconds. The real call workflow; the provider side is stubbed (no provider events: every dial
// rings out as no answer).
import { ApplicationFailure } from '@temporalio/common';
import { expect, it } from 'vitest';
import { parseCallingHoursRule } from '../../src/calling-hours/calling-window';
import type { AttemptRecord } from '../../src/data/call-store';
import type { WorkflowHandle } from '@temporalio/client';
import { FAILURES } from '../../src/contracts/failures';
import { callWorkflowId } from '../../src/contracts/ids';
import { phoneCallWorkflow } from '../../workflows/call';
import { cancelCallUpdate, setPausedUpdate } from '../../workflows/messages';
import type { CallWorkflowInput } from '../../workflows/types';
import {
  callWorkflowInput,
  rateLimited,
  runCallWorkflow,
  statusChanges,
  stubActivities,
  uniqueId,
  useTimeSkippingEnvironment,
  workerFor,
} from './environment';

const env = useTimeSkippingEnvironment('test');

const HOUR = 3_600_000;

async function run(args: CallWorkflowInput) {
  const dials: number[] = [];
  const { activities, calls } = stubActivities({
    dialCall: async ({ callId }) => {
      dials.push(await env.currentTimeMs());
      return { providerCallId: `pc-${callId}-${dials.length}` };
    },
  });
  const state = await runCallWorkflow(env, activities, args);
  return { state, dials, changes: statusChanges(calls) };
}

it('redials an unanswered call as often as the policy says, its spacing apart, and records every attempt', async () => {
  const { state, dials, changes } = await run(
    callWorkflowInput({ redialPolicy: { on: ['noAnswer'], maxRedials: 2, spacingSeconds: 3_600 } }),
  );
  expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'no-answer', attempt: 3 });
  expect(dials).toHaveLength(3);
  // Each dial rings 30 s, then the spacing runs from the end of the attempt.
  for (const i of [1, 2]) {
    expect(dials[i]! - dials[i - 1]!).toBeGreaterThanOrEqual(HOUR + 30_000);
    expect(dials[i]! - dials[i - 1]!).toBeLessThan(HOUR + 90_000);
  }
  expect(changes.map((c) => `${c.status}/${c.statusCode}`)).toEqual([
    'ringing/dialling',
    'queued/waiting-to-redial',
    'ringing/dialling',
    'queued/waiting-to-redial',
    'ringing/dialling',
    'noAnswer/no-answer',
  ]);
  const attempts = changes.flatMap((c) => (c.endedAttempt ? [c.endedAttempt] : [])) as AttemptRecord[];
  expect(attempts.map((a) => [a.attempt, a.status, a.statusCode, a.providerCallId])).toEqual([
    [1, 'noAnswer', 'no-answer', expect.stringMatching(/-1$/)],
    [2, 'noAnswer', 'no-answer', expect.stringMatching(/-2$/)],
    [3, 'noAnswer', 'no-answer', expect.stringMatching(/-3$/)],
  ]);
});

it('a redial due outside the calling hours waits for their next opening', async () => {
  // Friday 19:00 in New York (EST): the first dial is in hours, the redial an hour later is not.
  const { dials } = await run(
    callWorkflowInput({
      scheduledFor: '2027-11-13T00:00:00.000Z',
      callingWindow: { rules: [parseCallingHoursRule('Mon-Fri 09:00-20:00')], skipDates: [] },
      calleeTimeZones: ['America/New_York'],
      redialPolicy: { on: ['noAnswer', 'busy'], maxRedials: 1, spacingSeconds: 3_600 },
    }),
  );
  expect(dials).toHaveLength(2);
  expect(dials[0]).toBeGreaterThanOrEqual(Date.parse('2027-11-13T00:00:00.000Z'));
  // Monday 09:00 EST.
  expect(dials[1]).toBeGreaterThanOrEqual(Date.parse('2027-11-15T14:00:00.000Z'));
  expect(dials[1]).toBeLessThan(Date.parse('2027-11-15T14:01:00.000Z'));
});

it('an outcome the policy does not name, and a call without a policy, get one attempt', async () => {
  const busyOnly = await run(callWorkflowInput({ redialPolicy: { on: ['busy'], maxRedials: 3, spacingSeconds: 60 } }));
  expect(busyOnly.dials).toHaveLength(1);
  expect(busyOnly.state.status).toBe('noAnswer');
  const none = await run(callWorkflowInput());
  expect(none.dials).toHaveLength(1);
  expect(none.changes.at(-1)?.endedAttempt).toMatchObject({ attempt: 1, status: 'noAnswer' });
});

it('a dial whose tries never learnt whether the call was placed is not redialled; one the provider refused is', async () => {
  const args = () => callWorkflowInput({ redialPolicy: { on: ['providerError'], maxRedials: 2, spacingSeconds: 60 } });
  /** A call whose dial fails `fails` times as `failure` says, then places the call. */
  const dialFailing = (fails: number, failure: () => Error) => {
    const dials: number[] = [];
    const { activities, calls } = stubActivities({
      dialCall: async ({ callId }) => {
        dials.push(await env.currentTimeMs());
        if (dials.length <= fails) throw failure();
        return { providerCallId: `pc-${callId}-${dials.length}` };
      },
    });
    return { dials, calls, run: () => runCallWorkflow(env, activities, args()) };
  };
  // Past the placing window with no call found (activities/dial.ts): the person may have been rung.
  const unknown = dialFailing(1, () =>
    ApplicationFailure.create({ type: FAILURES.dialWindowPassed, message: 'not placed', nonRetryable: true }),
  );
  expect(await unknown.run()).toMatchObject({ status: 'failed', statusCode: 'provider-error' });
  expect(unknown.dials).toHaveLength(1);
  // Every try failed through the dial's hour (the provider never answering, retried until then).
  const outOfTime = dialFailing(Infinity, () => new Error('the provider did not answer'));
  expect(await outOfTime.run()).toMatchObject({ status: 'failed', statusCode: 'provider-error' });
  expect(outOfTime.dials.length).toBeGreaterThan(1);
  expect(outOfTime.dials.at(-1)! - outOfTime.dials[0]!).toBeLessThanOrEqual(HOUR);
  expect(statusChanges(outOfTime.calls).map((c) => c.status)).toEqual(['failed']);
  // The provider refused the dial: nothing was placed, and the policy dials again.
  const refused = dialFailing(1, () =>
    ApplicationFailure.create({
      type: FAILURES.providerRejected,
      message: 'refused',
      details: ['provider-error'],
      nonRetryable: true,
    }),
  );
  expect((await refused.run()).status).toBe('noAnswer');
  expect(refused.dials).toHaveLength(2);
});

/**
 * Starts a call that redials no answer once, an hour later, and runs `whileDialled` once its first
 * dial has rung; answers its end state and every dial's time.
 */
async function withFirstDial(
  whileDialled: (handle: WorkflowHandle<typeof phoneCallWorkflow>, dials: readonly number[]) => Promise<void>,
  overrides: Partial<CallWorkflowInput> = {},
) {
  const dials: number[] = [];
  const { activities, calls } = stubActivities({
    dialCall: async ({ callId }) => {
      dials.push(await env.currentTimeMs());
      return { providerCallId: `pc-${callId}-${dials.length}` };
    },
  });
  const args = callWorkflowInput({
    redialPolicy: { on: ['noAnswer'], maxRedials: 1, spacingSeconds: 3_600 },
    ...overrides,
  });
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  const state = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    while (statusChanges(calls).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await whileDialled(handle, dials);
    return handle.result();
  });
  const queuedCodes = calls
    .filter((c) => c.name === 'recordQueuedStatusCode')
    .map((c) => (c.input as { statusCode: string }).statusCode);
  return { state, dials, changes: statusChanges(calls).map((c) => `${c.status}/${c.statusCode}`), queuedCodes };
}

it("a batch's cancel while the call rings lets that attempt end, and no redial follows", async () => {
  const { state, dials, changes } = await withFirstDial(async (handle) => {
    expect(await handle.executeUpdate(cancelCallUpdate)).toEqual({ deleted: false });
  });
  expect(dials).toHaveLength(1);
  expect(state).toMatchObject({ status: 'noAnswer', attempt: 1 });
  expect(changes).toEqual(['ringing/dialling', 'noAnswer/no-answer']);
});

it("a batch's cancel reaching a call waiting to redial is answered once the call is removed", async () => {
  let removed = false;
  const { activities, calls } = stubActivities({
    // A removal that takes its time: an answer given before it ends would find the call still there.
    deleteCallRecord: async ({ callId }) => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      removed = true;
      return { deletedCall: { _id: callId, status: 'queued' }, ownTargets: [] };
    },
  });
  const args = callWorkflowInput({ redialPolicy: { on: ['noAnswer'], maxRedials: 1, spacingSeconds: 3_600 } });
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  const { answer, removedBeforeAnswer, state } = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    // Past the ring timeout: the first attempt ended unanswered, and the redial's spacing has begun.
    while (!statusChanges(calls).some((c) => c.status === 'queued')) await env.sleep(60_000);
    const answer = await handle.executeUpdate(cancelCallUpdate);
    const removedBeforeAnswer = removed;
    return { answer, removedBeforeAnswer, state: await handle.result() };
  });
  // Counted by the batch's cancel as removed: it is, by the time the answer comes.
  expect(answer).toEqual({ deleted: true });
  expect(removedBeforeAnswer).toBe(true);
  expect(state.phase).toBe('deleted');
});

it("a batch's pause while the call rings holds its redial until it is resumed", async () => {
  const { state, dials, changes } = await withFirstDial(async (handle, dialled) => {
    expect(await handle.executeUpdate(setPausedUpdate, { args: [true] })).toEqual({ changed: true, queued: false });
    // The ring timeout, then four hours: the redial was due after one.
    await env.sleep(5 * HOUR);
    expect(dialled).toHaveLength(1);
    expect(await handle.executeUpdate(setPausedUpdate, { args: [false] })).toEqual({ changed: true, queued: true });
  });
  expect(dials).toHaveLength(2);
  expect(dials[1]! - dials[0]!).toBeGreaterThan(5 * HOUR);
  expect(state).toMatchObject({ status: 'noAnswer', attempt: 2 });
  expect(changes).toEqual(['ringing/dialling', 'queued/waiting-to-redial', 'ringing/dialling', 'noAnswer/no-answer']);
});

it('a call paused while it rings shows paused during its redial spacing, and waiting-to-redial once resumed', async () => {
  for (const pauseShownWhileRedialWaits of [true, false]) {
    const { dials, changes, queuedCodes } = await withFirstDial(
      async (handle) => {
        await handle.executeUpdate(setPausedUpdate, { args: [true] });
        // Past the ring timeout: the spacing has begun, paused.
        await env.sleep(10 * 60_000);
        await handle.executeUpdate(setPausedUpdate, { args: [false] });
      },
      pauseShownWhileRedialWaits ? { pauseShownWhileRedialWaits } : {},
    );
    expect(changes).toEqual(['ringing/dialling', 'queued/waiting-to-redial', 'ringing/dialling', 'noAnswer/no-answer']);
    // Before the flag the spacing showed `waiting-to-redial` throughout (histories from then replay so).
    expect(queuedCodes, String(pauseShownWhileRedialWaits)).toEqual(
      pauseShownWhileRedialWaits ? ['paused', 'waiting-to-redial'] : [],
    );
    // Resumed within the spacing: the redial comes when the spacing ends, as without the pause.
    expect(dials[1]! - dials[0]!).toBeGreaterThanOrEqual(HOUR + 30_000);
    expect(dials[1]! - dials[0]!).toBeLessThan(HOUR + 90_000);
  }
});

it('waits out a 429 as a queued call: its hours are checked again before the next dial', async () => {
  // Friday 19:59 in New York: refused for ten minutes, the dial falls past 20:00 and waits for Monday.
  const dialledAt: number[] = [];
  const { activities } = stubActivities({
    dialCall: async ({ callId }) => {
      dialledAt.push(await env.currentTimeMs());
      if (dialledAt.length === 1) throw rateLimited(600_000);
      return { providerCallId: `pc-${callId}` };
    },
  });
  await runCallWorkflow(
    env,
    activities,
    callWorkflowInput({
      scheduledFor: '2027-11-13T00:59:00.000Z',
      callingWindow: { rules: [parseCallingHoursRule('Mon-Fri 09:00-20:00')], skipDates: [] },
      calleeTimeZones: ['America/New_York'],
      rateLimitWaitsAsQueued: true,
    }),
  );
  expect(dialledAt).toHaveLength(2);
  expect(dialledAt[1]).toBeGreaterThanOrEqual(Date.parse('2027-11-15T14:00:00.000Z'));
  expect(dialledAt[1]).toBeLessThan(Date.parse('2027-11-15T14:01:00.000Z'));
});

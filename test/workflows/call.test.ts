// The call workflow's timers and races, with stub activities on the time-skipping server: minutes
// of ringing and days of waiting run in seconds.
import {
  WorkflowFailedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURES } from '../../src/contracts/failures';
import type { ProviderEvent } from '../../src/contracts/providers';
import type { StatusChange } from '../../src/data/call-store';
import type { Activities } from '../../activities';
import { phoneCallWorkflow } from '../../workflows/call';
import {
  callStateQuery,
  cancelCallUpdate,
  deleteQueuedCallUpdate,
  dialSlotGrantedSignal,
  providerEventSignal,
} from '../../workflows/messages';
import type { CallWorkflowInput } from '../../workflows/types';
import {
  rateLimited,
  runCallWorkflow,
  signalProviderEvents,
  stubActivities,
  useTimeSkippingEnvironment,
  uniqueId,
  workerFor,
  type Calls,
} from './environment';

const env = useTimeSkippingEnvironment();

function input(overrides: Partial<CallWorkflowInput> = {}): CallWorkflowInput {
  return {
    callId: uniqueId('call'),
    teamId: 'team',
    toPhoneNumber: '+14155550007',
    provider: 'twilio',
    record: false,
    scheduledFor: null,
    maxDurationSeconds: 900,
    ringTimeoutSeconds: 120,
    ...overrides,
  };
}

const statuses = (calls: Calls) =>
  calls
    .filter((c) => c.name === 'recordStatus')
    .map((c) => {
      const change = c.input as { status: string; statusCode: string };
      return `${change.status}/${change.statusCode}`;
    });
const count = (calls: Calls, name: string) => calls.filter((c) => c.name === name).length;

/**
 * A paced call (its slot granted at once) whose dial the provider refuses (a 5xx it will not take
 * back: provider-error, which the policy redials): `act` runs on its workflow once the slot's release
 * before the redial has begun. The release lasts until `act` ends it (or is done) or 8 s (within the
 * local activity's 10 s), longer than a workflow task's heartbeat (80 % of its 2 s timeout), so that
 * what `act` does comes in between.
 */
async function whileRefusedDialGivesSlotBack<T>(
  act: (handle: WorkflowHandle<typeof phoneCallWorkflow>, endRelease: () => void) => Promise<T>,
) {
  const workflowId = uniqueId('wf');
  let releasing: () => void = () => undefined;
  const releaseStarted = new Promise<void>((resolve) => {
    releasing = resolve;
  });
  let acted: () => void = () => undefined;
  const actDone = new Promise<void>((resolve) => {
    acted = resolve;
  });
  const { activities, calls } = stubActivities({
    requestDialSlot: async ({ request }) => {
      await env.client.workflow.getHandle(workflowId).signal(dialSlotGrantedSignal, { ticket: request.ticket });
    },
    dialCall: async () => {
      throw ApplicationFailure.create({
        type: FAILURES.providerRejected,
        message: 'the provider is down',
        details: ['provider-error'],
        nonRetryable: true,
      });
    },
    releaseDialSlot: async () => {
      releasing();
      await Promise.race([actDone, new Promise((resolve) => setTimeout(resolve, 8_000))]);
    },
  });
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  const outcome = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(phoneCallWorkflow, {
      workflowId,
      taskQueue,
      args: [input({ paced: true, redialPolicy: { on: ['providerError'], maxRedials: 2, spacingSeconds: 60 } })],
      workflowTaskTimeout: '2 seconds',
    });
    await releaseStarted;
    try {
      return await act(handle, acted);
    } finally {
      acted();
    }
  });
  return { outcome, calls };
}

/** Runs a call workflow to its end on its own task queue, with `activities`. */
async function runCall(activities: Activities, args: CallWorkflowInput) {
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  return worker.runUntil(
    env.client.workflow.execute(phoneCallWorkflow, { workflowId: uniqueId('wf'), taskQueue, args: [args] }),
  );
}

/** What the provider's callback brings the call workflow. */
function providerEvent(args: CallWorkflowInput, kind: ProviderEvent['kind'], providerStatus: string): ProviderEvent {
  return {
    callId: args.callId,
    provider: 'twilio',
    providerCallId: `pc-${args.callId}`,
    kind,
    occurredAt: new Date().toISOString(),
    providerStatus,
  };
}

/** Starts the call on `taskQueue` and waits until it has dialled and recorded ringing. */
async function startAndDial(taskQueue: string, args: CallWorkflowInput, calls: Calls) {
  const handle = await env.client.workflow.start(phoneCallWorkflow, {
    workflowId: uniqueId('wf'),
    taskQueue,
    args: [args],
  });
  await until(() => count(calls, 'dialCall') === 1 && statuses(calls).length === 1, 'the dial');
  return handle;
}

/**
 * Starts a call due in an hour (`deleteOutlivesCancel`), asks for its delete, runs `meanwhile`; answers
 * the update's answer and the workflow's end, each an error where it failed.
 */
async function deleteScheduledCall(
  activities: Activities,
  meanwhile: (handle: WorkflowHandle<typeof phoneCallWorkflow>) => Promise<void> = async () => undefined,
) {
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  const args = input({
    scheduledFor: new Date((await env.currentTimeMs()) + 3_600_000).toISOString(),
    deleteOutlivesCancel: true,
  });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start(phoneCallWorkflow, {
      workflowId: uniqueId('wf'),
      taskQueue,
      args: [args],
    });
    const update = await handle.startUpdate(deleteQueuedCallUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED });
    await meanwhile(handle);
    // The workflow's end first: the time-skipping server's wait for an update's outcome alone can miss it.
    const outcome = await handle.result().catch((err: unknown) => err);
    return { answer: await update.result().catch((err: unknown) => err), outcome };
  });
}

/** Starts the call, cancels it once `dialling` settles, runs `afterCancel`; answers how the workflow ended. */
async function cancelOnceDialling(
  activities: Activities,
  args: CallWorkflowInput,
  dialling: Promise<void>,
  afterCancel: () => void = () => undefined,
): Promise<unknown> {
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start(phoneCallWorkflow, {
      workflowId: uniqueId('wf'),
      taskQueue,
      args: [args],
    });
    await dialling;
    await handle.cancel();
    afterCancel();
    return handle.result().then(
      () => 'completed',
      (err: unknown) => err,
    );
  });
}

async function untilAsync(probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('phoneCallWorkflow', () => {
  it('hangs up a call nobody answers after the ring timeout and ends it noAnswer', async () => {
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input({ ringTimeoutSeconds: 120, ownWebhookEvents: ['phoneCall.completed'] });
    const startedAt = await env.currentTimeMs();
    const state = await worker.runUntil(
      env.client.workflow.execute(phoneCallWorkflow, { workflowId: uniqueId('wf'), taskQueue, args: [args] }),
    );
    expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'no-answer', phase: 'ended' });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'noAnswer/no-answer']);
    expect(calls.find((c) => c.name === 'hangUpCall')?.input).toEqual({
      callId: args.callId,
      providerCallId: `pc-${args.callId}`,
    });
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(120_000);
    // Each endpoint lookup knows the call's own webhooks' events; only queued's payload is the call read.
    expect(calls.filter((c) => c.name === 'resolveWebhookTargets').map((c) => c.input)).toEqual(
      ['phoneCall.queued', 'phoneCall.ringing', 'phoneCall.noAnswer'].map((type) => ({
        callId: args.callId,
        teamId: args.teamId,
        type,
        ownWebhookEvents: ['phoneCall.completed'],
        wantsCall: type === 'phoneCall.queued',
      })),
    );
  });

  it('looks up no endpoints for the queued event when none was subscribed to it at create', async () => {
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input({ ringTimeoutSeconds: 120, ownWebhookEvents: [], queuedEventUnsubscribed: true });
    const state = await worker.runUntil(
      env.client.workflow.execute(phoneCallWorkflow, { workflowId: uniqueId('wf'), taskQueue, args: [args] }),
    );
    expect(state).toMatchObject({ status: 'noAnswer', phase: 'ended' });
    // Later events are looked up as ever: a team webhook made after the create gets them.
    expect(
      calls.filter((c) => c.name === 'resolveWebhookTargets').map((c) => (c.input as { type: string }).type),
    ).toEqual(['phoneCall.ringing', 'phoneCall.noAnswer']);
  });

  it("takes a completed call's answer time from its ending when the answer's callback was lost", async () => {
    // Before, the call was answered at its end: no length, and transcript times shifted by the talk.
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input();
    const { answeredAt, endedAt } = await worker.runUntil(async () => {
      const handle = await startAndDial(taskQueue, args, calls);
      await env.sleep(90_000);
      const now = await env.currentTimeMs();
      const ending = { answeredAt: new Date(now - 60_000).toISOString(), endedAt: new Date(now).toISOString() };
      await handle.signal(providerEventSignal, {
        ...providerEvent(args, 'completed', 'completed'),
        occurredAt: ending.endedAt,
        answeredAt: ending.answeredAt,
      });
      await handle.result();
      return ending;
    });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'inProgress/answered', 'completed/completed']);
    const written = calls.filter((c) => c.name === 'recordStatus').map((c) => c.input as StatusChange);
    expect(written[1]).toMatchObject({ fields: { callStartedAt: answeredAt } });
    expect(calls.find((c) => c.name === 'captureCallOutputs')?.input).toMatchObject({ answeredAt, endedAt });
  });

  it('hangs up an answered call that outlives the maximum duration and ends it failed (max-duration)', async () => {
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input({ maxDurationSeconds: 15 * 60 });
    const state = await worker.runUntil(async () => {
      const handle = await startAndDial(taskQueue, args, calls);
      await handle.signal(providerEventSignal, providerEvent(args, 'answered', 'in-progress'));
      return handle.result();
    });
    expect(state).toMatchObject({ status: 'failed', statusCode: 'max-duration' });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'inProgress/answered', 'failed/max-duration']);
    expect(count(calls, 'hangUpCall')).toBe(1);
    // What an answered call left behind is still captured.
    expect(count(calls, 'captureCallOutputs')).toBe(1);
  });

  it("cancelled while answered, hangs up and records the call's length from its answer to the hang-up", async () => {
    // Before, an answered call cancelled live ended with its start and end times but no `callDuration`.
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input();
    const outcome = await worker.runUntil(async () => {
      const handle = await startAndDial(taskQueue, args, calls);
      await handle.signal(providerEventSignal, providerEvent(args, 'answered', 'in-progress'));
      await until(() => statuses(calls).length === 2, 'the answer');
      await env.sleep(60_000);
      await handle.cancel();
      return handle.result().catch((err: unknown) => err);
    });
    expect(outcome).toBeInstanceOf(WorkflowFailedError);
    expect(statuses(calls)).toEqual(['ringing/dialling', 'inProgress/answered', 'cancelled/cancelled-by-operator']);
    expect(count(calls, 'hangUpCall')).toBe(1);
    const [, answered, cancelled] = calls.filter((c) => c.name === 'recordStatus').map((c) => c.input as StatusChange);
    const startedAt = answered!.fields!.callStartedAt as string;
    const endedAt = cancelled!.fields!.callEndedAt as string;
    const duration = cancelled!.fields!.callDuration as number;
    expect(duration).toBe((Date.parse(endedAt) - Date.parse(startedAt)) / 1000);
    expect(duration).toBeGreaterThanOrEqual(60);
    expect(cancelled!.endedAttempt).toMatchObject({
      status: 'cancelled',
      callStartedAt: startedAt,
      callEndedAt: endedAt,
    });
  });

  it('cancelled while the dial is in flight, waits for the dial, hangs up what it placed and ends cancelled', async () => {
    let releaseDial: () => void = () => undefined;
    const dialStarted = new Promise<void>((started) => {
      releaseDial = started;
    });
    let finishDial: (value: { providerCallId: string }) => void = () => undefined;
    const { activities, calls } = stubActivities({
      dialCall: async () => {
        releaseDial();
        return new Promise((resolve) => {
          finishDial = resolve;
        });
      },
    });
    const args = input();
    // The provider accepts the call just after the cancel arrived.
    const outcome = await cancelOnceDialling(activities, args, dialStarted, () =>
      setTimeout(() => finishDial({ providerCallId: 'placed-anyway' }), 300),
    );
    expect(outcome).toBeInstanceOf(WorkflowFailedError);
    expect(calls.find((c) => c.name === 'hangUpCall')?.input).toMatchObject({ callId: args.callId });
    expect(statuses(calls)).toEqual(['cancelled/cancelled-by-operator']);
  });

  it('cancelled while a failed dial try waits to be retried, hangs up the call that try may have placed', async () => {
    // The try placed the call and then lost its answer (our store down); the retry that would have
    // found the call never comes, so the hang-up has to look for it, from when dialling began.
    let tryFailed: () => void = () => undefined;
    const failed = new Promise<void>((resolve) => {
      tryFailed = resolve;
    });
    const { activities, calls } = stubActivities({
      // The cancel goes 200 ms after the try failed, while its retry waits (2 s). Sent as the try began,
      // it raced the failure: reaching the server first, it left the time-skipping test server holding
      // the try unresolved until the workflow timed out (the real server's rule for a cancel that
      // reaches a try still running is tested in cancel-during-dial.test.ts).
      dialCall: async () => {
        setTimeout(tryFailed, 200);
        throw new Error('the store is down');
      },
      hangUpCall: async ({ providerCallId, dialledSince }) =>
        providerCallId ?? (dialledSince ? 'placed-and-lost' : null),
    });
    const args = input();
    const outcome = await cancelOnceDialling(activities, args, failed);
    expect(outcome).toBeInstanceOf(WorkflowFailedError);
    const hangUp = calls.find((c) => c.name === 'hangUpCall')?.input as { dialledSince?: string };
    expect(hangUp).toMatchObject({ callId: args.callId });
    expect(Date.parse(hangUp.dialledSince ?? '')).not.toBeNaN();
    expect(statuses(calls)).toEqual(['cancelled/cancelled-by-operator']);
    expect(calls.find((c) => c.name === 'recordStatus')?.input).toMatchObject({
      fields: { providerCallId: 'placed-and-lost' },
      // The dialled attempt is recorded, as every other ending's is.
      endedAttempt: {
        attempt: 1,
        status: 'cancelled',
        statusCode: 'cancelled-by-operator',
        providerCallId: 'placed-and-lost',
      },
    });
  });

  it('cancelled once the call has ended, still captures it and records how it really ended', async () => {
    let captureStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      captureStarted = resolve;
    });
    let finishCapture: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      finishCapture = resolve;
    });
    const { activities, calls } = stubActivities();
    const capture = activities.captureCallOutputs;
    activities.captureCallOutputs = async (captureInput) => {
      captureStarted();
      await finished;
      return capture(captureInput);
    };
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input({ finalWithCapture: true, captureOutlivesCancel: true });
    const state = await worker.runUntil(async () => {
      const handle = await startAndDial(taskQueue, args, calls);
      await handle.signal(providerEventSignal, providerEvent(args, 'answered', 'in-progress'));
      await handle.signal(providerEventSignal, providerEvent(args, 'completed', 'completed'));
      await started;
      await handle.cancel();
      setTimeout(finishCapture, 300);
      return handle.result();
    });
    expect(state).toMatchObject({ status: 'completed', statusCode: 'completed' });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'inProgress/answered']);
    expect(calls.find((c) => c.name === 'captureCallOutputs')?.input).toMatchObject({ final: { status: 'completed' } });
    expect(count(calls, 'hangUpCall')).toBe(0);
  });

  it('cancelled while the ended call gives its dial slot back, still captures it and records how it ended', async () => {
    // Before `endOutlivesCancel`, a cancel taken during the release (a local activity) ended the call
    // `cancelled`, its recording, transcript and results never captured (the old order checked too).
    for (const endOutlivesCancel of [true, false]) {
      let releasing: () => void = () => undefined;
      const releaseStarted = new Promise<void>((resolve) => {
        releasing = resolve;
      });
      let cancelSent: () => void = () => undefined;
      const cancelled = new Promise<void>((resolve) => {
        cancelSent = resolve;
      });
      const workflowId = uniqueId('wf');
      const { activities, calls } = stubActivities({
        requestDialSlot: async ({ request }) => {
          await env.client.workflow.getHandle(workflowId).signal(dialSlotGrantedSignal, { ticket: request.ticket });
        },
        releaseDialSlot: async () => {
          releasing();
          await cancelled;
          // Past the workflow task's heartbeat (80 % of its 2 s timeout), which brings the workflow the
          // cancel while the release still runs: a slow pacer's release can take that long.
          await new Promise((resolve) => setTimeout(resolve, 5_000));
        },
      });
      const taskQueue = uniqueId('q');
      const worker = await workerFor(env, activities, taskQueue);
      const args = input({
        paced: true,
        finalWithCapture: true,
        captureOutlivesCancel: true,
        ...(endOutlivesCancel ? { endOutlivesCancel } : {}),
      });
      const outcome = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(phoneCallWorkflow, {
          workflowId,
          taskQueue,
          args: [args],
          workflowTaskTimeout: '2 seconds',
        });
        await until(() => count(calls, 'dialCall') === 1 && statuses(calls).length === 1, 'the dial');
        await handle.signal(providerEventSignal, providerEvent(args, 'answered', 'in-progress'));
        await handle.signal(providerEventSignal, providerEvent(args, 'completed', 'completed'));
        await releaseStarted;
        await handle.cancel();
        cancelSent();
        return handle.result().catch((err: unknown) => err);
      });
      if (endOutlivesCancel) {
        expect(outcome).toMatchObject({ status: 'completed', statusCode: 'completed' });
        expect(count(calls, 'captureCallOutputs')).toBe(1);
        expect(statuses(calls)).not.toContain('cancelled/cancelled-by-operator');
      } else {
        // What calls created before the flag still do (their histories replay so).
        expect(outcome).toBeInstanceOf(WorkflowFailedError);
        expect(count(calls, 'captureCallOutputs')).toBe(0);
        expect(statuses(calls)).toContain('cancelled/cancelled-by-operator');
      }
    }
  });

  it("an operator's cancel during a delete's removal: the delete completes and tells it, the workflow too", async () => {
    // Before `deleteOutlivesCancel` (seen with the flag off): the update failed with the cancel,
    // `cancelled` was written over the record being removed, and no `phoneCall.deleted` was sent. Only
    // the new way runs here: a workflow cancelled mid-removal left the time-skipping server's clock
    // stuck for the tests after it.
    let removing: () => void = () => undefined;
    const removalStarted = new Promise<void>((resolve) => {
      removing = resolve;
    });
    let cancelSent: () => void = () => undefined;
    const cancelled = new Promise<void>((resolve) => {
      cancelSent = resolve;
    });
    const { activities, calls } = stubActivities();
    const remove = activities.deleteCallRecord;
    activities.deleteCallRecord = async (removal) => {
      removing();
      await cancelled;
      // Time for the cancel to reach the workflow while the removal runs.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return remove(removal);
    };
    const { answer, outcome } = await deleteScheduledCall(activities, async (handle) => {
      await removalStarted;
      await handle.cancel();
      cancelSent();
    });
    expect(answer).toMatchObject({ deleted: true });
    expect(outcome).toMatchObject({ phase: 'deleted' });
    expect(statuses(calls)).toEqual([]);
    const deletedEvent = calls.filter(
      (c) => c.name === 'resolveWebhookTargets' && (c.input as { type: string }).type === 'phoneCall.deleted',
    );
    expect(deletedEvent).toHaveLength(1);
  });

  it('never both deletes and dials a call when the delete races the dial', async () => {
    for (let round = 0; round < 4; round++) {
      const { activities, calls } = stubActivities();
      const taskQueue = uniqueId('q');
      const worker = await workerFor(env, activities, taskQueue);
      const outcome = await worker.runUntil(async () => {
        // Due now: the workflow goes for the dial at once while the delete is on its way.
        const handle = await env.client.workflow.start(phoneCallWorkflow, {
          workflowId: uniqueId('wf'),
          taskQueue,
          args: [input()],
        });
        if (round % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 5 * round));
        const deleted = await handle.executeUpdate(deleteQueuedCallUpdate).then(
          () => true,
          (err: unknown) => {
            if (err instanceof WorkflowUpdateFailedError) return false;
            throw err;
          },
        );
        await handle.result();
        return deleted;
      });
      const dialled = count(calls, 'dialCall') > 0;
      const removed = count(calls, 'deleteCallRecord') > 0;
      expect(dialled !== removed, `round ${round}: dialled ${dialled}, removed ${removed}`).toBe(true);
      expect(outcome).toBe(removed);
    }
  });

  it('sleeps durably until a call scheduled days ahead is due, then dials once', async () => {
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const now = await env.currentTimeMs();
    const due = now + 3 * 86_400_000;
    const wallStart = Date.now();
    const state = await worker.runUntil(
      env.client.workflow.execute(phoneCallWorkflow, {
        workflowId: uniqueId('wf'),
        taskQueue,
        args: [input({ scheduledFor: new Date(due).toISOString(), ringTimeoutSeconds: 60 })],
      }),
    );
    expect(state.status).toBe('noAnswer');
    expect(count(calls, 'dialCall')).toBe(1);
    expect(Date.parse(state.triggeredAt!)).toBeGreaterThanOrEqual(due);
    expect(Date.now() - wallStart).toBeLessThan(30_000);
  });

  it("tells a paced call's dial to wait for its turn on the account; an unpaced call's dial is not told", async () => {
    const dials: unknown[] = [];
    for (const paced of [true, false]) {
      const workflowId = uniqueId('wf');
      const { activities, calls } = stubActivities({
        // The team pacer's answer, as its grant reaches the call.
        requestDialSlot: async ({ request }) => {
          await env.client.workflow.getHandle(workflowId).signal(dialSlotGrantedSignal, { ticket: request.ticket });
        },
      });
      const taskQueue = uniqueId('q');
      const worker = await workerFor(env, activities, taskQueue);
      const args = input({ ringTimeoutSeconds: 30, ...(paced ? { paced } : {}) });
      await worker.runUntil(env.client.workflow.execute(phoneCallWorkflow, { workflowId, taskQueue, args: [args] }));
      expect(calls.filter((c) => c.name === 'requestDialSlot')).toHaveLength(paced ? 1 : 0);
      dials.push(...calls.filter((c) => c.name === 'dialCall').map((c) => c.input));
    }
    expect(dials).toHaveLength(2);
    expect(dials[0]).toMatchObject({ paced: true });
    expect(dials[1]).not.toHaveProperty('paced');
  });

  it('has the dial write the move to ringing, fixed before each dial, and tells it as before', async () => {
    const dialledAt: number[] = [];
    const { activities, calls } = stubActivities({
      dialCall: async ({ callId, ringing }) => {
        dialledAt.push(await env.currentTimeMs());
        if (dialledAt.length === 1) throw rateLimited(60_000);
        return { providerCallId: `pc-${callId}`, ringing: { applied: true, call: { _id: callId, ringing } } };
      },
    });
    const args = input({ ringTimeoutSeconds: 30, ringingWithDial: true, ownWebhookEvents: [] });
    const state = await runCall(activities, args);
    expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'no-answer' });
    // No recordStatus of its own for ringing: an activity task and a workflow task fewer.
    expect(statuses(calls)).toEqual(['noAnswer/no-answer']);
    const dials = calls
      .filter((c) => c.name === 'dialCall')
      .map((c) => c.input as { ringing: { at: string; callTriggeredAt: string } });
    const [refused, placed] = dials.map((d) => d.ringing);
    // The call was triggered once; the move to ringing is the time of the dial that placed it.
    expect(refused!.callTriggeredAt).toBe(placed!.callTriggeredAt);
    expect(Date.parse(placed!.at)).toBeGreaterThanOrEqual(Date.parse(refused!.at) + 60_000);
    expect(
      calls.filter((c) => c.name === 'resolveWebhookTargets').map((c) => (c.input as { type: string }).type),
    ).toEqual(['phoneCall.queued', 'phoneCall.ringing', 'phoneCall.noAnswer']);
  });

  it("waits out a provider's 429 for as long as it asks, dials again and does not fail the call", async () => {
    const dialledAt: number[] = [];
    const { activities, calls } = stubActivities({
      dialCall: async ({ callId }) => {
        dialledAt.push(await env.currentTimeMs());
        if (dialledAt.length <= 2) throw rateLimited(90_000);
        return { providerCallId: `pc-${callId}` };
      },
    });
    const state = await runCall(activities, input({ ringTimeoutSeconds: 30 }));
    expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'no-answer' });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'noAnswer/no-answer']);
    expect(count(calls, 'dialCall')).toBe(3);
    // Each dial again came after the 90 s the provider asked for (plus jitter under a second).
    for (const gap of [dialledAt[1]! - dialledAt[0]!, dialledAt[2]! - dialledAt[1]!]) {
      expect(gap).toBeGreaterThanOrEqual(90_000);
      expect(gap).toBeLessThan(92_000);
    }
  });

  it('asks a provider that keeps refusing less and less often, its own dial rate aside', async () => {
    // Each refusal costs the history a dozen events: hours of them at a second apart would reach
    // Temporal's limit, which ends the workflow with nothing recorded.
    const dialledAt: number[] = [];
    const { activities } = stubActivities({
      dialCall: async ({ callId }) => {
        dialledAt.push(await env.currentTimeMs());
        // Three refusals by the team's own dial rate between the provider's: they never slow it.
        if (dialledAt.length > 17) return { providerCallId: `pc-${callId}` };
        if (dialledAt.length % 5 !== 0) throw rateLimited(1_000);
        throw ApplicationFailure.create({
          type: FAILURES.accountDialRateReached,
          message: 'no turn yet',
          details: [1_000],
          nonRetryable: true,
        });
      },
    });
    const state = await runCall(activities, input({ ringTimeoutSeconds: 30 }));
    expect(state).toMatchObject({ status: 'noAnswer' });
    const gaps = dialledAt.slice(1).map((at, i) => at - dialledAt[i]!);
    // The provider's first ten refusals (and the team's two among them) a second or so apart; then the
    // provider's 2, 4, 8 and 16 s, the team's third still a second.
    // Each wait is what was asked, plus under a second of jitter and the dial's own moment.
    expect(gaps).toHaveLength(17);
    expect(gaps.slice(0, 12).every((gap) => gap >= 1_000 && gap < 3_000)).toBe(true);
    const [two, four, team, eight, sixteen] = gaps.slice(12) as [number, number, number, number, number];
    expect([two >= 2_000 && two < 4_000, four >= 4_000 && four < 6_000, team < 3_000]).toEqual([true, true, true]);
    expect([eight >= 8_000 && eight < 10_000, sixteen >= 16_000 && sixteen < 18_000]).toEqual([true, true]);
  });

  it('a call waiting out a 429 can be deleted meanwhile, and is never dialled again', async () => {
    const { activities, calls } = stubActivities({
      dialCall: async () => {
        throw rateLimited(600_000);
      },
    });
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input({ rateLimitWaitsAsQueued: true });
    const state = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(phoneCallWorkflow, {
        workflowId: uniqueId('wf'),
        taskQueue,
        args: [args],
      });
      await until(() => count(calls, 'dialCall') === 1, 'the refused dial');
      // The refusal reaches the workflow a moment after the stub saw the dial.
      await untilAsync(async () => (await handle.query(callStateQuery)).phase === 'waiting', 'the wait');
      const deleted = await handle.executeUpdate(deleteQueuedCallUpdate);
      expect(deleted).toMatchObject({ deleted: true });
      return handle.result();
    });
    expect(state.phase).toBe('deleted');
    expect(count(calls, 'dialCall')).toBe(1);
  });

  it("a batch's cancel while the dial is under way deletes the call when the dial is refused for a rate limit", async () => {
    let dialStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      dialStarted = resolve;
    });
    let refuse: () => void = () => undefined;
    const { activities, calls } = stubActivities({
      dialCall: async () => {
        dialStarted();
        await new Promise<void>((resolve) => {
          refuse = resolve;
        });
        throw rateLimited(600_000);
      },
    });
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const state = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(phoneCallWorkflow, {
        workflowId: uniqueId('wf'),
        taskQueue,
        args: [input({ rateLimitWaitsAsQueued: true })],
      });
      await started;
      expect(await handle.executeUpdate(cancelCallUpdate)).toEqual({ deleted: false });
      refuse();
      return handle.result();
    });
    expect(state.phase).toBe('deleted');
    expect(count(calls, 'dialCall')).toBe(1);
  });

  it("a batch's cancel taken while a failed dial gives its slot back deletes the call: no redial follows", async () => {
    // Before, the call still counted as dialling while the slot went back (a local activity): the cancel
    // answered "no redial", and the redial came all the same.
    const {
      outcome: { answer, state },
      calls,
    } = await whileRefusedDialGivesSlotBack(async (handle, endRelease) => {
      const update = await handle.startUpdate(cancelCallUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED });
      endRelease();
      return { answer: await update.result(), state: await handle.result() };
    });
    expect(answer).toEqual({ deleted: true });
    expect(state.phase).toBe('deleted');
    expect(count(calls, 'dialCall')).toBe(1);
  });

  it("an operator's cancel while a failed dial gives its slot back records that attempt as it ended", async () => {
    // The cancel comes before the call is queued again for the redial. Before, the attempt went into
    // `attempts` as `cancelled`, as if it had been cut short while dialling.
    const { outcome, calls } = await whileRefusedDialGivesSlotBack(async (handle) => {
      await handle.cancel();
      return handle.result().catch((err: unknown) => err);
    });
    expect(outcome).toBeInstanceOf(WorkflowFailedError);
    expect(statuses(calls)).toEqual(['cancelled/cancelled-by-operator']);
    const cancel = calls.find((c) => c.name === 'recordStatus')!.input as StatusChange;
    expect(cancel.endedAttempt).toMatchObject({ attempt: 1, status: 'failed', statusCode: 'provider-error' });
    expect(cancel.fields).toMatchObject({ callEndedAt: cancel.endedAttempt!.callEndedAt });
    expect(count(calls, 'dialCall')).toBe(1);
    expect(count(calls, 'hangUpCall')).toBe(0);
  });

  it('after a 429 on a later try of the dial, looks for a call an earlier try placed before dialling again', async () => {
    const { activities, calls } = stubActivities({
      dialCall: async ({ callId }) => {
        if (count(calls, 'dialCall') === 1) throw rateLimited(60_000, 2);
        return { providerCallId: `pc-${callId}` };
      },
    });
    const state = await runCall(activities, input({ rateLimitWaitsAsQueued: true, ringTimeoutSeconds: 30 }));
    expect(state).toMatchObject({ status: 'noAnswer' });
    const dials = calls.filter((c) => c.name === 'dialCall').map((c) => c.input as { placedSince?: string });
    expect(dials).toHaveLength(2);
    expect(dials[0]!.placedSince).toBeUndefined();
    expect(Date.parse(dials[1]!.placedSince ?? '')).not.toBeNaN();
  });

  it("waits out the team's own dial rate as a 429, naming whose rate the wait is on the timeline", async () => {
    const dialledAt: number[] = [];
    const refusal = (type: string) =>
      ApplicationFailure.create({ type, message: 'no turn yet', details: [8_000], nonRetryable: true });
    const { activities, calls } = stubActivities({
      dialCall: async ({ callId }) => {
        dialledAt.push(await env.currentTimeMs());
        if (dialledAt.length === 1) throw refusal(FAILURES.accountDialRateReached);
        if (dialledAt.length === 2) throw refusal(FAILURES.providerRateLimited);
        return { providerCallId: `pc-${callId}` };
      },
    });
    const taskQueue = uniqueId('q');
    const workflowId = uniqueId('wf');
    const worker = await workerFor(env, activities, taskQueue);
    const state = await worker.runUntil(
      env.client.workflow.execute(phoneCallWorkflow, {
        workflowId,
        taskQueue,
        args: [input({ ringTimeoutSeconds: 30, provider: 'vonage' })],
      }),
    );
    expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'no-answer' });
    expect(count(calls, 'dialCall')).toBe(3);
    for (const gap of [dialledAt[1]! - dialledAt[0]!, dialledAt[2]! - dialledAt[1]!]) {
      expect(gap).toBeGreaterThanOrEqual(8_000);
      expect(gap).toBeLessThan(10_000);
    }
    const { events } = await env.client.workflow.getHandle(workflowId).fetchHistory();
    const timers = events!
      .filter((e) => e.timerStartedEventAttributes)
      .map((e) => Buffer.from(e.userMetadata?.summary?.data ?? []).toString('utf8'))
      .filter((summary) => summary.includes('dial again'));
    expect(timers).toHaveLength(2);
    expect(timers[0]).toMatch(/^"team's vonage dial rate: dial again in [89] s"$/);
    expect(timers[1]).toMatch(/^"provider rate limit: dial again in [89] s"$/);
  });
});

describe("phoneCallWorkflow when the provider's callbacks are lost", () => {
  const polled = (args: CallWorkflowInput, kind: ProviderEvent['kind'], at: string): ProviderEvent => ({
    callId: args.callId,
    provider: 'twilio',
    providerCallId: `pc-${args.callId}`,
    kind,
    occurredAt: at,
    providerStatus: kind,
  });

  it('asks the provider after a silence and ends the call as the provider saw it end', async () => {
    let polls = 0;
    const askedAt: number[] = [];
    const { activities, calls } = stubActivities({
      // Ringing on the first ask; answered and completed (its callbacks lost) on the second.
      pollCallEvents: async ({ callId }) => {
        polls += 1;
        askedAt.push(await env.currentTimeMs());
        if (polls < 2) return [];
        const args = { callId } as CallWorkflowInput;
        return [polled(args, 'answered', '2026-01-01T00:00:10Z'), polled(args, 'completed', '2026-01-01T00:01:00Z')];
      },
    });
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input({ ringTimeoutSeconds: 120, statusPollSeconds: 30 });
    const startedAt = await env.currentTimeMs();
    const state = await worker.runUntil(
      env.client.workflow.execute(phoneCallWorkflow, { workflowId: uniqueId('wf'), taskQueue, args: [args] }),
    );
    expect(state).toMatchObject({ status: 'completed', phase: 'ended' });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'inProgress/answered', 'completed/completed']);
    expect(count(calls, 'pollCallEvents')).toBe(2);
    expect(count(calls, 'hangUpCall')).toBe(0);
    // After 30 s of silence each time, long before the 120 s ring timeout.
    expect(askedAt[0]! - startedAt).toBeGreaterThanOrEqual(30_000);
    expect(askedAt[1]! - startedAt).toBeGreaterThanOrEqual(60_000);
    expect(askedAt[1]! - startedAt).toBeLessThan(120_000);
  });

  it('asks once more at the ring timeout, and hangs up when the provider says it still rings', async () => {
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = input({ ringTimeoutSeconds: 100, statusPollSeconds: 30 });
    const state = await worker.runUntil(
      env.client.workflow.execute(phoneCallWorkflow, { workflowId: uniqueId('wf'), taskQueue, args: [args] }),
    );
    expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'no-answer' });
    // At 30, 60 and 90 s of silence, and at the timeout itself.
    expect(count(calls, 'pollCallEvents')).toBe(4);
    expect(count(calls, 'hangUpCall')).toBe(1);
  });

  it('takes the callbacks that came while its poll at the ring timeout ran, rather than hanging up', async () => {
    let polls = 0;
    const { activities, calls } = stubActivities({
      // The provider has nothing new when asked at the timeout, but the answer's and the end's
      // callbacks arrive while the poll runs.
      pollCallEvents: async ({ callId, providerCallId }) => {
        polls += 1;
        if (polls === 4)
          await signalProviderEvents(env, callId, providerCallId, [{ kind: 'answered' }, { kind: 'completed' }]);
        return [];
      },
    });
    const state = await runCallWorkflow(env, activities, input({ ringTimeoutSeconds: 100, statusPollSeconds: 30 }));
    expect(count(calls, 'pollCallEvents')).toBe(4);
    expect(state).toMatchObject({ status: 'completed', statusCode: 'completed' });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'inProgress/answered', 'completed/completed']);
    expect(count(calls, 'hangUpCall')).toBe(0);
  });

  it('polls a busy call that the provider reports ended busy, without answering it', async () => {
    const { activities, calls } = stubActivities({
      pollCallEvents: async ({ callId }) => [polled({ callId } as CallWorkflowInput, 'busy', '2026-01-01T00:00:05Z')],
    });
    const state = await runCall(activities, input({ statusPollSeconds: 20 }));
    expect(state).toMatchObject({ status: 'busy', statusCode: 'busy' });
    expect(statuses(calls)).toEqual(['ringing/dialling', 'busy/busy']);
  });

  it('never asks when the input has no poll interval (histories from before polling)', async () => {
    const { activities, calls } = stubActivities();
    await runCall(activities, input({ ringTimeoutSeconds: 60 }));
    expect(count(calls, 'pollCallEvents')).toBe(0);
  });
});

describe('phoneCallWorkflow when a delete cannot remove the record', () => {
  // Before, the update failed with the workflow, as an internal error, not as a refusal.
  it('answers the delete with a refusal and closes, failed', async () => {
    const { activities } = stubActivities({
      deleteCallRecord: async () => {
        throw ApplicationFailure.create({
          type: FAILURES.callNotQueued,
          message: 'the record is no longer queued',
          nonRetryable: true,
        });
      },
    });
    const { answer, outcome } = await deleteScheduledCall(activities);
    expect(outcome).toBeInstanceOf(WorkflowFailedError);
    expect(answer).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((answer as WorkflowUpdateFailedError).cause).toMatchObject({ type: FAILURES.callNotQueued });
  });
});

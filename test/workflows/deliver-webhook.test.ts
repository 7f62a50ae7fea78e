// A delivery stream's whole retry schedule (decisions.md: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h,
// about 28 hours) on the time-skipping server, in seconds.
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURES } from '../../src/contracts/failures';
import { DEFAULT_RETRY_DELAYS } from '../../src/webhooks/retry-schedule';
import { deliverWebhookEventsWorkflow } from '../../workflows/deliver-webhook';
import { enqueueEventSignal, noMoreEventsSignal } from '../../workflows/messages';
import type { DeliveryWorkflowInput } from '../../workflows/types';
import { stubActivities, useTimeSkippingEnvironment, uniqueId, workerFor } from './environment';

const env = useTimeSkippingEnvironment();

function input(): DeliveryWorkflowInput {
  const callId = uniqueId('call');
  return {
    callId,
    teamId: 'team',
    target: {
      endpointKey: 'wh-1',
      url: 'https://receiver.example/hook',
      method: 'POST',
      secretSealed: 'sealed',
      webhookId: 'wh-1',
    },
    firstEvent: {
      eventId: `evt_${callId}_phoneCall.completed`,
      type: 'phoneCall.completed',
      timestamp: new Date().toISOString(),
      callId,
      teamId: 'team',
      data: {},
    },
    retryDelaysMs: [...DEFAULT_RETRY_DELAYS],
  };
}

/** A stream whose first event is `phoneCall.ringing`; runStream hands it `phoneCall.completed` next. */
function ringingThenCompleted(): DeliveryWorkflowInput {
  const first = input();
  first.firstEvent = { ...first.firstEvent, eventId: 'evt_ringing', type: 'phoneCall.ringing' };
  return first;
}

/** Runs the stream with `activities`, hands it `evt_completed` (then, if asked, no more events). */
async function runStream(
  activities: ReturnType<typeof stubActivities>['activities'],
  first: DeliveryWorkflowInput,
  options: { thenNoMore?: boolean } = {},
) {
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start(deliverWebhookEventsWorkflow, {
      workflowId: uniqueId('wf'),
      taskQueue,
      args: [first],
    });
    await handle.signal(enqueueEventSignal, {
      ...first.firstEvent,
      eventId: 'evt_completed',
      type: 'phoneCall.completed',
    });
    if (options.thenNoMore) await handle.signal(noMoreEventsSignal);
    return handle.result();
  });
}

describe('deliverWebhookEventsWorkflow', () => {
  it('retries a failing receiver on the whole schedule, on durable timers, then gives up', async () => {
    const { activities, calls } = stubActivities({ attemptWebhookDelivery: async () => ({ ok: false, gone: false }) });
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const workflowId = uniqueId('wf');
    const wallStart = Date.now();
    const result = await worker.runUntil(
      env.client.workflow.execute(deliverWebhookEventsWorkflow, { workflowId, taskQueue, args: [input()] }),
    );
    expect(result).toEqual({ delivered: 0, failed: 1 });
    const attempts = calls
      .filter((c) => c.name === 'attemptWebhookDelivery')
      .map((c) => c.input as { attempt: number; isLastAttempt: boolean });
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(attempts.map((a) => a.isLastAttempt)).toEqual([false, false, false, false, false, false, false, true]);
    // The waits between attempts are the schedule, as timers in the history.
    const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
    const timers = (history.events ?? [])
      .map((e) => e.timerStartedEventAttributes?.startToFireTimeout)
      .filter((t): t is NonNullable<typeof t> => t != null)
      .map((t) => Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6));
    expect(timers.slice(0, DEFAULT_RETRY_DELAYS.length)).toEqual([...DEFAULT_RETRY_DELAYS]);
    expect(DEFAULT_RETRY_DELAYS.reduce((a, b) => a + b, 0)).toBeGreaterThan(27 * 3_600_000);
    expect(Date.now() - wallStart).toBeLessThan(30_000);
  });

  it('counts an attempt that could not be made (the store down for minutes) as failed, and goes on to the next event', async () => {
    // Each attempt's activity fails all its tries for the first event; the second event is delivered.
    const { activities, calls } = stubActivities({
      attemptWebhookDelivery: async ({ event }) => {
        if (event.eventId === 'evt_ringing') throw new Error('MongoServerSelectionError: the store is down');
        return { ok: true, gone: false };
      },
    });
    const first = ringingThenCompleted();
    first.retryDelaysMs = [5_000, 300_000];
    first.endsWithFinalEvent = true;
    const result = await runStream(activities, first);
    expect(result).toEqual({ delivered: 1, failed: 1 });
    // The three attempts of the schedule, each noted as not made, the last one giving up.
    const notes = calls
      .filter((c) => c.name === 'recordAttemptNotMade')
      .map((c) => c.input as { attempt: number; isLastAttempt: boolean; error: string });
    expect(notes.map((n) => [n.attempt, n.isLastAttempt])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(notes[0]!.error).toMatch(/the store is down/);
    const tried = calls
      .filter((c) => c.name === 'attemptWebhookDelivery')
      .map((c) => (c.input as { event: { eventId: string } }).event.eventId);
    expect(tried.at(-1)).toBe('evt_completed');
  }, 120_000);

  it('counts an attempt made whose every try failed to record it as what came of it, not sending it again', async () => {
    const first = ringingThenCompleted();
    const { activities, calls } = stubActivities({
      attemptWebhookDelivery: async ({ event }) => {
        if (event.eventId !== 'evt_ringing') return { ok: true, gone: false };
        throw ApplicationFailure.create({
          type: FAILURES.webhookAttemptUnrecorded,
          message: 'the attempt was made; recording it failed',
          nonRetryable: true,
          details: [{ target: first.target, result: { ok: true, gone: false, statusCode: 204 } }],
        });
      },
    });
    first.endsWithFinalEvent = true;
    expect(await runStream(activities, first)).toEqual({ delivered: 2, failed: 0 });
    const tried = calls
      .filter((c) => c.name === 'attemptWebhookDelivery')
      .map((c) => (c.input as { event: { eventId: string } }).event.eventId);
    expect(tried).toEqual(['evt_ringing', 'evt_completed']);
    const notes = calls.filter((c) => c.name === 'recordAttemptNotMade').map((c) => c.input);
    expect(notes).toEqual([
      expect.objectContaining({
        attempt: 1,
        made: expect.objectContaining({ result: expect.objectContaining({ ok: true }) }),
      }),
    ]);
  });

  it('stops at once on 410 Gone, and delivers later events of the stream in order', async () => {
    const { activities, calls } = stubActivities({
      attemptWebhookDelivery: async ({ event }) =>
        event.type === 'phoneCall.ringing' ? { ok: false, gone: true } : { ok: true, gone: false },
    });
    const result = await runStream(activities, ringingThenCompleted(), { thenNoMore: true });
    expect(result).toEqual({ delivered: 1, failed: 1 });
    const delivered = calls
      .filter((c) => c.name === 'attemptWebhookDelivery')
      .map((c) => (c.input as { event: { eventId: string } }).event.eventId);
    expect(delivered).toEqual(['evt_ringing', 'evt_completed']);
  });

  it("ends by itself after the call's final event when started so, every event before it delivered", async () => {
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const first: DeliveryWorkflowInput = { ...input(), endsWithFinalEvent: true };
    first.firstEvent = { ...first.firstEvent, eventId: 'evt_ringing', type: 'phoneCall.ringing' };
    const workflowId = uniqueId('wf');
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(deliverWebhookEventsWorkflow, {
        workflowId,
        taskQueue,
        args: [first],
      });
      for (const type of ['transcript.created', 'phoneCall.completed'] as const)
        await handle.signal(enqueueEventSignal, { ...first.firstEvent, eventId: `evt_${type}`, type });
      return handle.result();
    });
    expect(result).toEqual({ delivered: 3, failed: 0 });
    const delivered = calls
      .filter((c) => c.name === 'attemptWebhookDelivery')
      .map((c) => (c.input as { event: { eventId: string } }).event.eventId);
    expect(delivered).toEqual(['evt_ringing', 'evt_transcript.created', 'evt_phoneCall.completed']);
    // It did not wait out its idle limit for a signal that no longer comes: its last timer was cancelled.
    const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    expect(events.filter((e) => e.timerFiredEventAttributes)).toEqual([]);
  });

  it('waits while its team has its cap of attempts under way, and then makes the same attempt, counting none', async () => {
    let refusals = 0;
    const { activities, calls } = stubActivities({
      attemptWebhookDelivery: async () => {
        if (refusals < 3) {
          refusals += 1;
          throw ApplicationFailure.create({
            type: FAILURES.webhookTeamBusy,
            message: 'at its cap',
            nonRetryable: true,
          });
        }
        return { ok: true, gone: false };
      },
    });
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const workflowId = uniqueId('wf');
    const result = await worker.runUntil(
      env.client.workflow.execute(deliverWebhookEventsWorkflow, { workflowId, taskQueue, args: [input()] }),
    );
    expect(result).toEqual({ delivered: 1, failed: 0 });
    // Four tries of one attempt, each told it may wait; nothing noted as not made.
    const tries = calls.filter((c) => c.name === 'attemptWebhookDelivery').map((c) => c.input as { attempt: number });
    expect(tries).toEqual(Array(4).fill(expect.objectContaining({ attempt: 1, waitsWhileTeamBusy: true })));
    expect(calls.some((c) => c.name === 'recordAttemptNotMade')).toBe(false);
    // Its waits, 1 s doubling with up to a quarter more, on timers of their own.
    const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const waits = events
      .map((e) => e.timerStartedEventAttributes?.startToFireTimeout?.seconds)
      .filter((seconds) => seconds !== undefined && seconds !== null)
      .map(Number)
      .filter((seconds) => seconds < 60); // not the stream's idle limit after its event
    expect(waits).toHaveLength(3);
    waits.forEach((seconds, i) => expect(seconds).toBeGreaterThanOrEqual(2 ** i));
  });

  it('notes an attempt its team kept waiting for 10 minutes as not made, and goes on with its schedule', async () => {
    let noted = 0;
    const { activities, calls } = stubActivities({
      attemptWebhookDelivery: async () => {
        if (noted === 0) {
          throw ApplicationFailure.create({
            type: FAILURES.webhookTeamBusy,
            message: 'at its cap',
            nonRetryable: true,
          });
        }
        return { ok: true, gone: false };
      },
      recordAttemptNotMade: async () => {
        noted += 1;
      },
    });
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const result = await worker.runUntil(
      env.client.workflow.execute(deliverWebhookEventsWorkflow, {
        workflowId: uniqueId('wf'),
        taskQueue,
        args: [input()],
      }),
    );
    expect(result).toEqual({ delivered: 1, failed: 0 });
    const notMade = calls.filter((c) => c.name === 'recordAttemptNotMade').map((c) => c.input);
    expect(notMade).toEqual([expect.objectContaining({ attempt: 1, teamBusy: true })]);
    const attempts = calls
      .filter((c) => c.name === 'attemptWebhookDelivery')
      .map((c) => (c.input as { attempt: number }).attempt);
    // Attempt 1 asked again and again for about 10 minutes (at most a minute apart), then attempt 2.
    expect(attempts.filter((a) => a === 1).length).toBeGreaterThan(8);
    expect(attempts.at(-1)).toBe(2);
  });
});

// Calling hours on the time-skipping server: days of waiting, across both daylight-saving changes, in
// seconds. The real call workflow and the real hours check; the provider side is stubbed.
import { WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { parseCallingHoursRule, type CallingWindow } from '../../src/calling-hours/calling-window';
import { DIAL_PLACING_WINDOW_MS } from '../../activities/dial';
import { FAILURES } from '../../src/contracts/failures';
import { callWorkflowId } from '../../src/contracts/ids';
import type { Activities } from '../../activities';
import { phoneCallWorkflow } from '../../workflows/call';
import { deleteQueuedCallUpdate, dialSlotGrantedSignal } from '../../workflows/messages';
import {
  callWorkflowInput,
  rateLimited,
  runCallWorkflow,
  stubActivities,
  useTimeSkippingEnvironment,
  uniqueId,
  workerFor,
} from './environment';

// A fresh test server per test: the Java test server's clock has been seen to run years ahead when a
// second workflow of one file skipped to far-off dates.
const env = useTimeSkippingEnvironment('test');

const weekdays9to20: CallingWindow = { rules: [parseCallingHoursRule('Mon-Fri 09:00-20:00')], skipDates: [] };

/** A worker for `activities`, and a call with weekday hours in New York to start on its queue. */
async function callWithHours(activities: Activities, overrides: Parameters<typeof callWorkflowInput>[0] = {}) {
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  const args = callWorkflowInput({ callingWindow: weekdays9to20, calleeTimeZones: ['America/New_York'], ...overrides });
  const start = (options: { workflowTaskTimeout?: string } = {}) =>
    env.client.workflow.start(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
      ...options,
    });
  return { worker, args, start };
}

/**
 * Starts the call, asks for its delete a second after `refused` (a dial refused at the close), and
 * answers how the delete went and the call's final state.
 */
async function deleteOnceRefused(
  call: Omit<Awaited<ReturnType<typeof callWithHours>>, 'args'>,
  refused: Promise<void>,
) {
  return call.worker.runUntil(async () => {
    const handle = await call.start();
    await refused;
    // The test server's clock stands still while nothing waits on the workflow's result: the refusal
    // is taken within this second, and the 30 s before the next look have not passed.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const deletion = await handle.executeUpdate(deleteQueuedCallUpdate).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    return { deletion, state: await handle.result() };
  });
}

/** Stub activities that note the (skipped) workflow clock of every dial. */
function clockedStubs(overrides: Parameters<typeof stubActivities>[0] = {}) {
  const dials: Array<{ callId: string; at: number }> = [];
  const stubs = stubActivities({
    dialCall: async ({ callId }) => {
      dials.push({ callId, at: await env.currentTimeMs() });
      return { providerCallId: `pc-${callId}` };
    },
    ...overrides,
  });
  return { ...stubs, dials };
}

describe('calling hours', () => {
  for (const [name, scheduledFor, opensAt] of [
    // Saturdays before the two daylight-saving changes of 2027 in New York: the Monday 09:00 opening
    // is 13:00 UTC after spring-forward (EDT) and 14:00 UTC after fall-back (EST).
    ['spring-forward', '2027-03-13T17:00:00.000Z', '2027-03-15T13:00:00.000Z'],
    ['fall-back', '2027-11-06T17:00:00.000Z', '2027-11-08T14:00:00.000Z'],
  ] as const) {
    it(`a call due on a Saturday waits for Monday 09:00 in the callee's zone across ${name}`, async () => {
      const { activities, calls, dials } = clockedStubs();
      const taskQueue = uniqueId('q');
      const worker = await workerFor(env, activities, taskQueue);
      const args = callWorkflowInput({
        scheduledFor,
        callingWindow: weekdays9to20,
        calleeTimeZones: ['America/New_York'],
      });
      const state = await worker.runUntil(
        env.client.workflow.execute(phoneCallWorkflow, {
          workflowId: callWorkflowId(args.callId),
          taskQueue,
          args: [args],
        }),
      );
      expect(state.status).toBe('noAnswer');
      expect(dials).toHaveLength(1);
      expect(dials[0]!.at).toBeGreaterThanOrEqual(Date.parse(opensAt));
      expect(dials[0]!.at).toBeLessThan(Date.parse(opensAt) + 60_000);
      const waits = calls
        .filter((c) => c.name === 'recordQueuedStatusCode')
        .map((c) => (c.input as { statusCode: string }).statusCode);
      expect(waits).toEqual(['waiting-for-calling-window']);
    });
  }

  it('a call whose hours never open in all its zones at once fails outside-calling-hours, never dialled', async () => {
    const { activities, calls } = stubActivities();
    const taskQueue = uniqueId('q');
    const worker = await workerFor(env, activities, taskQueue);
    const args = callWorkflowInput({
      callingWindow: { rules: [parseCallingHoursRule('Mon-Fri 09:00-12:00')], skipDates: [] },
      calleeTimeZones: ['Australia/Sydney', 'Europe/London'],
    });
    const state = await worker.runUntil(
      env.client.workflow.execute(phoneCallWorkflow, {
        workflowId: callWorkflowId(args.callId),
        taskQueue,
        args: [args],
      }),
    );
    expect(state).toMatchObject({ status: 'failed', statusCode: 'outside-calling-hours' });
    expect(calls.some((c) => c.name === 'dialCall')).toBe(false);
  });
});

describe('a call waiting for a dial slot as its calling hours close', () => {
  for (const slotWaitEndsAtClose of [true, false]) {
    it(
      slotWaitEndsAtClose
        ? 'gives its place back at the close, taking no dial turn after it, and asks again when they open'
        : 'kept waiting for its grant an hour past the close (calls from before the flag)',
      async () => {
        // Due Wednesday 19:40 in New York (00:40 UTC Thursday), hours close at 20:00; the pacer grants
        // nothing that evening and grants the call's next request at once.
        const workflowId = uniqueId('wf');
        const asked: number[] = [];
        const released: number[] = [];
        const { activities, dials } = clockedStubs({
          requestDialSlot: async ({ request }) => {
            asked.push(await env.currentTimeMs());
            if (asked.length > 1)
              await env.client.workflow.getHandle(workflowId).signal(dialSlotGrantedSignal, { ticket: request.ticket });
          },
          releaseDialSlot: async () => {
            released.push(await env.currentTimeMs());
          },
        });
        const taskQueue = uniqueId('q');
        const worker = await workerFor(env, activities, taskQueue);
        const args = callWorkflowInput({
          scheduledFor: '2027-03-11T00:40:00.000Z',
          callingWindow: weekdays9to20,
          calleeTimeZones: ['America/New_York'],
          paced: true,
          slotsByLocalActivity: true,
          ...(slotWaitEndsAtClose ? { slotWaitEndsAtClose } : {}),
        });
        const state = await worker.runUntil(
          env.client.workflow.execute(phoneCallWorkflow, { workflowId, taskQueue, args: [args] }),
        );
        expect(state.status).toBe('noAnswer');
        // Asked at 19:40, and again when the hours opened on Thursday, 09:00 (14:00 UTC).
        expect(asked).toHaveLength(2);
        expect(asked[1]).toBeGreaterThanOrEqual(Date.parse('2027-03-11T14:00:00.000Z'));
        expect(dials[0]!.at).toBeGreaterThanOrEqual(Date.parse('2027-03-11T14:00:00.000Z'));
        // Its place given back at the close (20:00, 01:00 UTC), or only when its hourly wait ended (20:40).
        const closed = Date.parse('2027-03-11T01:00:00.000Z');
        const givenBack = slotWaitEndsAtClose ? closed : closed + 40 * 60_000;
        expect(released[0]).toBeGreaterThanOrEqual(givenBack);
        expect(released[0]).toBeLessThan(givenBack + 60_000);
      },
    );
  }
});

describe('a dial that starts after the calling hours closed', () => {
  for (const tryNumber of [1, 2]) {
    it(`places nothing, waits for the hours to open again and dials then (refused on try ${tryNumber})`, async () => {
      // Due Wednesday 19:59:40 in New York (00:59:40 UTC Thursday), hours close at 20:00. The dial's
      // first try gets to placing the call 30 s late (its workers busy), past the close it was told of.
      const dialled: Array<{ at: number; placeBefore?: string; placedSince?: string }> = [];
      const { activities, calls } = stubActivities({
        dialCall: async ({ callId, placeBefore, placedSince, placingWindowFrom }) => {
          if (dialled.length === 0) await env.sleep(30_000);
          const at = await env.currentTimeMs();
          dialled.push({ at, placeBefore, placedSince });
          // As the real dial: a try told to look back places nothing past its placing window.
          const windowFrom = placingWindowFrom ?? placedSince;
          if (windowFrom && at - Date.parse(windowFrom) > DIAL_PLACING_WINDOW_MS) {
            throw ApplicationFailure.create({ type: FAILURES.dialWindowPassed, message: 'late', nonRetryable: true });
          }
          if (placeBefore && at >= Date.parse(placeBefore)) {
            throw ApplicationFailure.create({
              type: FAILURES.callingHoursClosed,
              message: 'closed',
              // The try's number: each later dial's refusal comes on its first try.
              details: [dialled.length === 1 ? tryNumber : 1],
              nonRetryable: true,
            });
          }
          return { providerCallId: `pc-${callId}` };
        },
      });
      const state = await runCallWorkflow(
        env,
        activities,
        callWorkflowInput({
          scheduledFor: '2027-03-11T00:59:40.000Z',
          callingWindow: weekdays9to20,
          calleeTimeZones: ['America/New_York'],
        }),
      );
      expect(state.status).toBe('noAnswer');
      // Refused on a later try, the call stays dialling 30 s and the next dial looks for a call an
      // earlier try may have placed unseen; refused on its own first try, nothing was placed.
      if (tryNumber === 2) {
        const lookedAgain = dialled.splice(1, 1)[0]!;
        expect(lookedAgain.at - dialled[0]!.at).toBeGreaterThanOrEqual(30_000);
        expect(lookedAgain.at - dialled[0]!.at).toBeLessThan(40_000);
        expect(Date.parse(lookedAgain.placedSince ?? '')).toBeLessThan(Date.parse('2027-03-11T01:00:00.000Z'));
      }
      expect(dialled).toHaveLength(2);
      expect(dialled[0]!.placeBefore).toBe('2027-03-11T01:00:00.000Z');
      // Dialled again when the hours opened on Thursday, 09:00 (14:00 UTC), told of that day's close.
      const opened = Date.parse('2027-03-11T14:00:00.000Z');
      expect(dialled[1]!.at).toBeGreaterThanOrEqual(opened);
      expect(dialled[1]!.at).toBeLessThan(opened + 60_000);
      expect(dialled[1]!.placeBefore).toBe('2027-03-12T01:00:00.000Z');
      // It waited as a queued call does (its slot given back, a delete or pause taken meanwhile).
      const waits = calls
        .filter((c) => c.name === 'recordQueuedStatusCode')
        .map((c) => (c.input as { statusCode: string }).statusCode);
      expect(waits).toEqual(['waiting-for-calling-window']);
      if (tryNumber === 1) expect(dialled[1]!.placedSince).toBeUndefined();
      // Refused on a later try, an earlier one may have placed the call unseen: the next dial looks
      // back to the first, and may still place the call (its placing window starts with it).
      else expect(Date.parse(dialled[1]!.placedSince ?? '')).toBeLessThan(Date.parse('2027-03-11T01:00:00.000Z'));
    });
  }
});

describe('a dial refused at the close on a later try', () => {
  it('stays dialling, refusing a delete, and follows the call an earlier try placed unseen', async () => {
    // The first try placed the call but lost its answer; the second found no call yet and was refused
    // for the close. Before, the call then waited queued for the hours to open again: a delete was
    // taken while the call an earlier try placed could be ringing.
    let refusedOnce: () => void = () => undefined;
    const refused = new Promise<void>((resolve) => {
      refusedOnce = resolve;
    });
    const dialled: Array<{ placedSince?: string }> = [];
    let checks = 0;
    const { activities, calls } = stubActivities({
      // Open for the first dial; closed until tomorrow once it was refused.
      checkCallingHours: async () => {
        const now = await env.currentTimeMs();
        checks += 1;
        return checks === 1 ? { open: true, closesAt: now + 60_000 } : { open: false, opensAt: now + 86_400_000 };
      },
      dialCall: async ({ callId, placedSince }) => {
        dialled.push({ placedSince });
        if (dialled.length === 1) {
          refusedOnce();
          throw ApplicationFailure.create({
            type: FAILURES.callingHoursClosed,
            message: 'closed',
            details: [2],
            nonRetryable: true,
          });
        }
        // Looking back, the dial finds the call the earlier try placed.
        return { providerCallId: `pc-${callId}` };
      },
    });
    const { args, ...call } = await callWithHours(activities);
    const { deletion, state } = await deleteOnceRefused(call, refused);
    expect(deletion).toMatchObject({ error: { cause: { type: 'CALL_NOT_QUEUED' } } });
    expect(calls.some((c) => c.name === 'deleteCallRecord')).toBe(false);
    expect(dialled).toHaveLength(2);
    expect(dialled[1]!.placedSince).toBeDefined();
    expect(state).toMatchObject({ phase: 'ended', providerCallId: `pc-${args.callId}` });
  });
});

describe('a dial looking back after a 429 on a later try, refused at the close on its first try', () => {
  for (const foundOnLookAgain of [true, false]) {
    it(
      foundOnLookAgain
        ? 'stays dialling 30 s, refusing a delete, and follows the call its next look finds'
        : 'looks once more 30 s later, then waits for its hours as a queued call (one look, not one every 30 s)',
      async () => {
        // The first dial placed the call but lost its answer, and its second try met the provider's 429.
        // The next dial looked for that call a second later (the provider did not list it yet) and was
        // refused for the close on its first try. Before, the call then waited queued at once: a delete
        // was taken while the call the first dial placed could be ringing.
        let refusedOnce: () => void = () => undefined;
        const refused = new Promise<void>((resolve) => {
          refusedOnce = resolve;
        });
        const dialled: Array<{ at: number; placedSince?: string }> = [];
        let opensAt = 0;
        const closedFor = 86_400_000;
        const { activities, calls } = stubActivities({
          // Open for the first dial; closed once a dial was refused, until a day later.
          checkCallingHours: async () => {
            const now = await env.currentTimeMs();
            if (opensAt === 0 || now >= opensAt) return { open: true, closesAt: now + 60_000 };
            return { open: false, opensAt };
          },
          dialCall: async ({ callId, placedSince }) => {
            const at = await env.currentTimeMs();
            dialled.push({ at, placedSince });
            if (dialled.length === 1) throw rateLimited(1_000, 2);
            const closedNow = dialled.length === 2 || (dialled.length === 3 && !foundOnLookAgain);
            if (closedNow) {
              if (dialled.length === 2) {
                opensAt = at + closedFor;
                refusedOnce();
              }
              throw ApplicationFailure.create({
                type: FAILURES.callingHoursClosed,
                message: 'closed',
                details: [1],
                nonRetryable: true,
              });
            }
            // Looking back, the dial finds the call the first placed (or, a day later, places one).
            return { providerCallId: `pc-${callId}` };
          },
        });
        const { args, ...call } = await callWithHours(activities, { rateLimitWaitsAsQueued: true });
        const { deletion, state } = await deleteOnceRefused(call, refused);
        expect(deletion).toMatchObject({ error: { cause: { type: 'CALL_NOT_QUEUED' } } });
        expect(calls.some((c) => c.name === 'deleteCallRecord')).toBe(false);
        expect(dialled[1]!.placedSince).toBeDefined();
        // The look again, 30 s after the refusal, still looking back.
        expect(dialled[2]!.at - dialled[1]!.at).toBeGreaterThanOrEqual(30_000);
        expect(dialled[2]!.at - dialled[1]!.at).toBeLessThan(40_000);
        expect(dialled[2]!.placedSince).toBe(dialled[1]!.placedSince);
        expect(state).toMatchObject({ phase: 'ended', providerCallId: `pc-${args.callId}` });
        const waits = calls
          .filter((c) => c.name === 'recordQueuedStatusCode')
          .map((c) => (c.input as { statusCode: string }).statusCode);
        if (foundOnLookAgain) {
          expect(dialled).toHaveLength(3);
          expect(waits).toEqual([]);
        } else {
          // Refused again: it waited for its hours as a queued call does, and dialled once they opened.
          expect(dialled).toHaveLength(4);
          expect(dialled[3]!.at).toBeGreaterThanOrEqual(opensAt);
          expect(waits).toEqual(['waiting-for-calling-window']);
        }
      },
    );
  }
});

describe('a dial refused at the close, then for a rate limit once the hours open', () => {
  it('dials anew after its wait as a queued call: its placing window no longer starts at the morning dial', async () => {
    const dialled: Array<{ at: number; placingWindowFrom?: string }> = [];
    const { activities } = stubActivities({
      dialCall: async ({ callId, placeBefore, placingWindowFrom }) => {
        if (dialled.length === 0) await env.sleep(30_000);
        dialled.push({ at: await env.currentTimeMs(), placingWindowFrom });
        if (dialled.length === 1 && placeBefore) {
          throw ApplicationFailure.create({
            type: FAILURES.callingHoursClosed,
            message: 'closed',
            details: [1],
            nonRetryable: true,
          });
        }
        // The morning's first dial meets the provider's rate limit: 20 minutes, waited as a queued call.
        if (dialled.length === 2) throw rateLimited(20 * 60_000, 1);
        return { providerCallId: `pc-${callId}` };
      },
    });
    const state = await runCallWorkflow(
      env,
      activities,
      callWorkflowInput({
        scheduledFor: '2027-03-11T00:59:40.000Z',
        callingWindow: weekdays9to20,
        calleeTimeZones: ['America/New_York'],
        rateLimitWaitsAsQueued: true,
      }),
    );
    expect(state.status).toBe('noAnswer');
    expect(dialled).toHaveLength(3);
    // The morning's dial has a window of its own; the one after the 429, waited as a queued call, is a
    // dial anew whose window starts with its own schedule, not at the morning's dial 20 minutes before.
    expect(Date.parse(dialled[1]!.placingWindowFrom ?? '')).toBeGreaterThanOrEqual(
      Date.parse('2027-03-11T14:00:00.000Z'),
    );
    expect(dialled[2]!.placingWindowFrom).toBeUndefined();
  });
});

describe('a delete as the calling hours are checked', () => {
  it('is refused, and the workflow ends, when the check finds hours that never open again', async () => {
    // The check is held until the delete has been taken, then finds no opening: before, the call ended
    // `failed` while the delete waited for ever, and the workflow with it.
    let checking: () => void = () => undefined;
    const checkStarted = new Promise<void>((resolve) => {
      checking = resolve;
    });
    let answer: () => void = () => undefined;
    const { activities, calls } = stubActivities({
      checkCallingHours: async () => {
        checking();
        await new Promise<void>((resolve) => {
          answer = resolve;
        });
        return { open: false, opensAt: null };
      },
    });
    const { worker, start } = await callWithHours(activities);
    const { deletion, state } = await worker.runUntil(async () => {
      const handle = await start({ workflowTaskTimeout: '2 seconds' });
      await checkStarted;
      // Taken (accepted) while the check is still out: a check longer than a workflow task's heartbeat
      // (80 % of its 2 s timeout here) lets the update in between.
      const update = await handle.startUpdate(deleteQueuedCallUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED });
      answer();
      const deleting = update.result().then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      return { deletion: await deleting, state: await handle.result() };
    });
    expect(state).toMatchObject({ phase: 'ended', status: 'failed', statusCode: 'outside-calling-hours' });
    expect(deletion).toMatchObject({
      error: { cause: { type: 'CALL_NOT_QUEUED', message: 'only queued calls can be deleted; status is failed' } },
    });
    expect(calls.some((c) => c.name === 'deleteCallRecord')).toBe(false);
  });
});

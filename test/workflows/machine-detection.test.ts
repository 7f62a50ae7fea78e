// Answering-machine detection's waits on the time-skipping server: a greeting whose end is never
// reported, one that outlasts the maximum duration, a message the provider says it left while our
// request for it failed, and a machine-answered attempt redialled an hour later. The real call
// workflow; the provider's events are signalled the way the callback routes signal them.
import { ApplicationFailure } from '@temporalio/common';
import { expect, it } from 'vitest';
import type { CallWorkflowInput } from '../../workflows/types';
import {
  callWorkflowInput,
  runCallWorkflow,
  signalProviderEvents,
  statusChanges,
  stubActivities,
  useTimeSkippingEnvironment,
  type Calls,
  type ProviderScript,
} from './environment';

const env = useTimeSkippingEnvironment();

const HOUR = 3_600_000;

/** Sends the provider's events for one provider call, as its callbacks would arrive. */
const send = (callId: string, providerCallId: string, script: ProviderScript) =>
  signalProviderEvents(env, callId, providerCallId, script);

/**
 * Runs one call: each dial attempt gets the next script (none left: it rings out), and
 * `afterMessage` is what the provider does once a voicemail message is asked for.
 */
async function run(args: CallWorkflowInput, attempts: ProviderScript[], afterMessage: ProviderScript = []) {
  const times: Record<string, number[]> = { dial: [], voicemail: [], detected: [], hangUp: [] };
  // Events are signalled before the stub returns: while an activity runs the server skips no time,
  // so they are in before the workflow's next timer could fire.
  const { activities, calls } = stubActivities({
    dialCall: async ({ callId }) => {
      const attempt = times.dial!.push(await env.currentTimeMs());
      const providerCallId = `pc-${callId}-${attempt}`;
      const script = attempts[attempt - 1];
      if (script) {
        times.detected!.push(await env.currentTimeMs());
        await send(callId, providerCallId, script);
      }
      return { providerCallId };
    },
    leaveVoicemail: async ({ callId, providerCallId }) => {
      times.voicemail!.push(await env.currentTimeMs());
      await send(callId, providerCallId, afterMessage);
    },
    hangUpCall: async ({ providerCallId }) => {
      times.hangUp!.push(await env.currentTimeMs());
      return providerCallId ?? null;
    },
  });
  const state = await runCallWorkflow(env, activities, args);
  const changes = statusChanges(calls);
  return { state, calls, changes, times };
}

const count = (calls: Calls, name: string) => calls.filter((c) => c.name === name).length;

it('leaves the message a minute after the machine was detected when its greeting end is never reported', async () => {
  const { state, calls, changes, times } = await run(
    callWorkflowInput({ machineDetection: 'leaveMessage' }),
    [[{ kind: 'answered' }, { kind: 'machine-detected', answeredBy: 'machine' }]],
    [{ kind: 'completed' }],
  );
  expect(state).toMatchObject({ status: 'completed', statusCode: 'voicemail-left', answeredBy: 'machine' });
  expect(times.voicemail).toHaveLength(1);
  expect(times.voicemail![0]! - times.detected![0]!).toBeGreaterThanOrEqual(60_000);
  expect(times.voicemail![0]! - times.detected![0]!).toBeLessThan(90_000);
  expect(count(calls, 'hangUpCall')).toBe(0);
  expect(changes.at(-1)).toMatchObject({
    status: 'completed',
    statusCode: 'voicemail-left',
    fields: { answeredBy: 'machine' },
    endedAttempt: { answeredBy: 'machine' },
  });
  // The capture is told a machine answered, so that its greeting is not stored as a person's words.
  expect(calls.find((c) => c.name === 'captureCallOutputs')?.input).toMatchObject({ answeredBy: 'machine' });
});

it("in hangUp mode hangs up on a machine whose greeting's end comes without its verdict (Vonage's asynchronous mode)", async () => {
  const script: ProviderScript = [{ kind: 'answered' }, { kind: 'greeting-ended' }];
  const { state, calls } = await run(callWorkflowInput({ machineDetection: 'hangUp', hangsUpOnGreetingEnd: true }), [
    script,
  ]);
  expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'answering-machine', answeredBy: 'machine' });
  expect(count(calls, 'hangUpCall')).toBe(1);
  // Histories from before the flag: only the verdict hangs up (the call runs to its maximum duration).
  const before = await run(callWorkflowInput({ machineDetection: 'hangUp' }), [script]);
  expect(count(before.calls, 'hangUpCall')).toBe(1);
  expect(before.state).toMatchObject({ status: 'failed', statusCode: 'max-duration' });
});

it('hangs up on a machine and redials it after the spacing; the next attempt starts with no verdict', async () => {
  const { state, calls, changes, times } = await run(
    callWorkflowInput({
      machineDetection: 'hangUp',
      redialPolicy: { on: ['noAnswer'], maxRedials: 1, spacingSeconds: 3_600 },
    }),
    [[{ kind: 'answered' }, { kind: 'machine-detected', answeredBy: 'machine' }]],
  );
  expect(times.dial).toHaveLength(2);
  expect(times.dial![1]! - times.dial![0]!).toBeGreaterThanOrEqual(HOUR);
  expect(count(calls, 'leaveVoicemail')).toBe(0);
  expect(changes.map((c) => `${c.status}/${c.statusCode}`)).toEqual([
    'ringing/dialling',
    'inProgress/answered',
    'queued/waiting-to-redial',
    'ringing/dialling',
    'noAnswer/no-answer',
  ]);
  const attempts = changes.flatMap((c) => (c.endedAttempt ? [c.endedAttempt] : []));
  expect(attempts.map((a) => [a.status, a.statusCode, a.answeredBy])).toEqual([
    ['noAnswer', 'answering-machine', 'machine'],
    ['noAnswer', 'no-answer', null],
  ]);
  expect(state).toMatchObject({ status: 'noAnswer', statusCode: 'no-answer', answeredBy: null, attempt: 2 });
});

it('never hangs up on a callee the detector is unsure of', async () => {
  const { state, calls } = await run(callWorkflowInput({ machineDetection: 'hangUp' }), [
    [{ kind: 'answered' }, { kind: 'machine-detected', answeredBy: 'unknown' }, { kind: 'completed' }],
  ]);
  expect(state).toMatchObject({ status: 'completed', statusCode: 'completed', answeredBy: 'unknown' });
  expect(count(calls, 'hangUpCall')).toBe(0);
});

it("counts the message left when the provider says so, though every answer to the workflow's request was lost", async () => {
  // Telnyx spoke the message (its `message-left` callback) while each try of the request timed out.
  const { activities, calls } = stubActivities({
    dialCall: async ({ callId }) => {
      await send(callId, `pc-${callId}`, [{ kind: 'answered' }, { kind: 'greeting-ended' }]);
      return { providerCallId: `pc-${callId}` };
    },
    leaveVoicemail: async ({ callId, providerCallId }) => {
      await send(callId, providerCallId, [{ kind: 'message-left' }]);
      throw ApplicationFailure.nonRetryable('the provider did not answer in time');
    },
  });
  const state = await runCallWorkflow(env, activities, callWorkflowInput({ machineDetection: 'leaveMessage' }));
  expect(state).toMatchObject({ status: 'completed', statusCode: 'voicemail-left', answeredBy: 'machine' });
  expect(count(calls, 'hangUpCall')).toBe(1);
});

it('keeps a maximum duration shorter than the greeting wait: hung up then, no message, failed (max-duration)', async () => {
  const { state, calls, times } = await run(
    callWorkflowInput({ machineDetection: 'leaveMessage', maxDurationSeconds: 20 }),
    [[{ kind: 'answered' }, { kind: 'machine-detected', answeredBy: 'machine' }]],
  );
  expect(times.voicemail).toHaveLength(0);
  expect(count(calls, 'hangUpCall')).toBe(1);
  expect(state).toMatchObject({ status: 'failed', statusCode: 'max-duration', answeredBy: 'machine' });
  // At the maximum duration (from the answer), not a minute after the machine was detected.
  expect(times.hangUp![0]! - times.detected![0]!).toBeGreaterThanOrEqual(20_000);
  expect(times.hangUp![0]! - times.detected![0]!).toBeLessThan(30_000);
});

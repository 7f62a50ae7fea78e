// An answered call's final status written by its capture, with the results (`finalWithCapture`): one
// activity fewer per answered call, the same change should the capture fail, and none when the call
// is redialled. The real call workflow on the time-skipping server; the provider's events are
// signalled the way the callback routes signal them.
import { ApplicationFailure } from '@temporalio/common';
import { expect, it } from 'vitest';
import type { Activities } from '../../activities';
import type { CaptureInput } from '../../activities/capture';
import type { CallWorkflowInput } from '../../workflows/types';
import {
  callWorkflowInput,
  runCallWorkflow,
  signalProviderEvents,
  statusChanges,
  stubActivities,
  useTimeSkippingEnvironment,
  type ProviderScript,
} from './environment';

const env = useTimeSkippingEnvironment();

/** Runs one call whose first dial hears `script` (later dials ring out), with `overrides`. */
async function run(args: CallWorkflowInput, script: ProviderScript, overrides: Partial<Activities> = {}) {
  let dials = 0;
  const { activities, calls } = stubActivities({
    dialCall: async ({ callId }) => {
      dials += 1;
      const providerCallId = `pc-${callId}-${dials}`;
      // Signalled before the dial answers: the server skips no time while an activity runs.
      if (dials === 1) await signalProviderEvents(env, callId, providerCallId, script);
      return { providerCallId };
    },
    ...overrides,
  });
  const state = await runCallWorkflow(env, activities, args);
  const captures = calls.filter((c) => c.name === 'captureCallOutputs').map((c) => c.input as CaptureInput);
  const lookups = calls
    .filter((c) => c.name === 'resolveWebhookTargets')
    .map((c) => (c.input as { type: string }).type);
  return { state, changes: statusChanges(calls), captures, lookups };
}

const answeredAndCompleted: ProviderScript = [{ kind: 'answered' }, { kind: 'completed' }];

it('has the capture write an answered call’s final status, and tells it as before', async () => {
  const args = callWorkflowInput({ finalWithCapture: true, ownWebhookEvents: [] });
  const { state, changes, captures, lookups } = await run(args, answeredAndCompleted);
  expect(state).toMatchObject({ status: 'completed', statusCode: 'completed', phase: 'ended' });
  // No recordStatus of its own for the end: an activity and a workflow task fewer.
  expect(changes.map((c) => `${c.status}/${c.statusCode}`)).toEqual(['ringing/dialling', 'inProgress/answered']);
  expect(captures).toHaveLength(1);
  expect(captures[0]!.final).toMatchObject({
    callId: args.callId,
    status: 'completed',
    statusCode: 'completed',
    fields: { callEndedAt: expect.any(String), callDuration: expect.any(Number) },
    endedAttempt: { attempt: 1, status: 'completed', providerCallId: `pc-${args.callId}-1` },
  });
  expect(lookups).toEqual(['phoneCall.queued', 'phoneCall.ringing', 'phoneCall.inProgress', 'phoneCall.completed']);
});

it('records the same final change itself when the capture fails, so that one that landed is known', async () => {
  const args = callWorkflowInput({ finalWithCapture: true, ownWebhookEvents: [] });
  const { state, changes, captures, lookups } = await run(args, answeredAndCompleted, {
    captureCallOutputs: async () => {
      throw ApplicationFailure.create({ message: 'transcript store down', nonRetryable: true });
    },
  });
  expect(state).toMatchObject({ status: 'completed', statusCode: 'completed' });
  const final = changes.at(-1)!;
  expect(`${final.status}/${final.statusCode}`).toBe('completed/completed');
  // Its time is the capture's: a write the capture made before it failed answers `applied` again.
  expect(final.at).toBe(captures[0]!.final!.at);
  expect(final.endedAttempt).toEqual(captures[0]!.final!.endedAttempt);
  // With an empty value for each result column: the conversation's could not be had.
  expect(final.emptyResults).toBe(true);
  expect(lookups.at(-1)).toBe('phoneCall.completed');
  // The capture's own final write asks nothing of the kind.
  expect(captures[0]!.final!).not.toHaveProperty('emptyResults');
});

it('leaves a redialled attempt’s queueing to the workflow: the capture writes no final status then', async () => {
  const args = callWorkflowInput({
    finalWithCapture: true,
    machineDetection: 'hangUp',
    redialPolicy: { on: ['noAnswer'], maxRedials: 1, spacingSeconds: 60 },
  });
  const { state, changes, captures } = await run(args, [
    { kind: 'answered' },
    { kind: 'machine-detected', answeredBy: 'machine' },
  ]);
  expect(captures).toHaveLength(1);
  expect(captures[0]!.final).toBeUndefined();
  expect(changes.map((c) => `${c.status}/${c.statusCode}`)).toEqual([
    'ringing/dialling',
    'inProgress/answered',
    'queued/waiting-to-redial',
    'ringing/dialling',
    'noAnswer/no-answer',
  ]);
  expect(state).toMatchObject({ status: 'noAnswer', attempt: 2 });
});

it('records the end with recordStatus for calls from before the field, as they ran', async () => {
  const args = callWorkflowInput({ ownWebhookEvents: [] });
  const { changes, captures } = await run(args, answeredAndCompleted);
  expect(captures[0]!.final).toBeUndefined();
  expect(changes.map((c) => `${c.status}/${c.statusCode}`)).toEqual([
    'ringing/dialling',
    'inProgress/answered',
    'completed/completed',
  ]);
});

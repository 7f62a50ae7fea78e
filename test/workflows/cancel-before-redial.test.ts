// An operator's cancel arriving after an attempt ended and before its redial queues the call, on the
// time-skipping server. In a file of its own: its stub cancels from outside the worker, which leaves
// the server's clock lock unusable for tests after it (as in cancel-during-write.test.ts).
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { expect, it } from 'vitest';
import { callWorkflowId } from '../../src/contracts/ids';
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

/**
 * An answering machine hung up on, an attempt the policy would dial again, cancelled while its
 * outputs are captured (as the operator may, any time).
 */
async function cancelledDuringCapture(overrides: Partial<CallWorkflowInput>) {
  const { activities, calls } = stubActivities({
    dialCall: async ({ callId }) => {
      const script: ProviderScript = [{ kind: 'answered' }, { kind: 'machine-detected', answeredBy: 'machine' }];
      await signalProviderEvents(env, callId, `pc-${callId}`, script);
      return { providerCallId: `pc-${callId}` };
    },
    captureCallOutputs: async ({ callId }) => {
      await env.client.workflow.getHandle(callWorkflowId(callId)).cancel();
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // the capture takes a moment
      return { transcriptEvent: null };
    },
  });
  const args = callWorkflowInput({
    machineDetection: 'hangUp',
    redialPolicy: { on: ['noAnswer'], maxRedials: 2, spacingSeconds: 3_600 },
    captureOutlivesCancel: true,
    endOutlivesCancel: true,
    statusWritesOutliveCancel: true,
    ...overrides,
  });
  const failure = await runCallWorkflow(env, activities, args).catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  return { calls, changes: statusChanges(calls) };
}

it('ends a call cancelled before its redial queues it as cancelled, its attempt recorded as it ended', async () => {
  const { calls, changes } = await cancelledDuringCapture({ cancelBeforeRedialQueues: true, writesNameAttempt: true });
  // No `queued` (nor its phoneCall.queued) between the attempt and the cancel.
  expect(changes.map((c) => `${c.status}/${c.statusCode}`)).toEqual([
    'ringing/dialling',
    'inProgress/answered',
    'cancelled/cancelled-by-operator',
  ]);
  const cancel = changes[2]!;
  expect(cancel.endedAttempt).toMatchObject({
    attempt: 1,
    status: 'noAnswer',
    statusCode: 'answering-machine',
    answeredBy: 'machine',
  });
  expect(cancel.fields).toMatchObject({ callEndedAt: cancel.endedAttempt!.callEndedAt, answeredBy: 'machine' });
  expect(cancel.fields!.callDuration).toBeGreaterThanOrEqual(0);
  // The write names the attempt it ends (`writesNameAttempt`): the record holds none before it.
  expect(cancel.attempt).toBe(1);
  expect(calls.filter((c) => c.name === 'dialCall')).toHaveLength(1);
  // Hung up once, on the machine: the call had ended before the cancel.
  expect(calls.filter((c) => c.name === 'hangUpCall')).toHaveLength(1);

  // Histories from before the flag: queued for the redial, then cancelled, as they ran.
  const before = await cancelledDuringCapture({});
  expect(before.changes.map((c) => `${c.status}/${c.statusCode}`)).toEqual([
    'ringing/dialling',
    'inProgress/answered',
    'queued/waiting-to-redial',
    'cancelled/cancelled-by-operator',
  ]);
});

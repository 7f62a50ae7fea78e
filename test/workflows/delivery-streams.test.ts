// A call's webhook delivery streams end by themselves once they have delivered the call's final event
// (`streamsEndWithFinalEvent`): the call sends them no `noMoreEvents` signal at its end, a signal and a
// workflow task on each side fewer per endpoint. Calls from before the field tell every stream, as they
// did. The real call and delivery workflows on the time-skipping server.
import { expect, it } from 'vitest';
import { callWorkflowId, deliveryWorkflowId } from '../../src/contracts/ids';
import { phoneCallWorkflow } from '../../workflows/call';
import { deliverWebhookEventsWorkflow } from '../../workflows/deliver-webhook';
import type { CallWorkflowInput, WebhookEvent, WebhookTarget } from '../../workflows/types';
import {
  callWorkflowInput,
  signalProviderEvents,
  stubActivities,
  useTimeSkippingEnvironment,
  uniqueId,
  workerFor,
} from './environment';

const env = useTimeSkippingEnvironment();

const target: WebhookTarget = {
  endpointKey: 'wh-1',
  url: 'https://receiver.example/hook',
  method: 'POST',
  secretSealed: 'sealed',
  webhookId: 'wh-1',
};

/**
 * Runs an answered and completed call whose one endpoint subscribes to every event, until both the call
 * and its delivery stream have ended; answers the signals the call sent and what the stream delivered.
 */
async function runWithOneEndpoint(args: CallWorkflowInput) {
  const { activities, calls } = stubActivities({
    resolveWebhookTargets: async ({ callId }) => ({ targets: [target], retryDelaysMs: [5_000], call: { _id: callId } }),
    dialCall: async ({ callId }) => {
      const providerCallId = `pc-${callId}`;
      // Signalled before the dial answers: the server skips no time while an activity runs.
      await signalProviderEvents(env, callId, providerCallId, [{ kind: 'answered' }, { kind: 'completed' }]);
      return { providerCallId };
    },
  });
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  const { state, stream } = await worker.runUntil(async () => {
    const state = await env.client.workflow.execute(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    const stream = await env.client.workflow
      .getHandle<typeof deliverWebhookEventsWorkflow>(deliveryWorkflowId(args.callId, target.endpointKey))
      .result();
    return { state, stream };
  });
  const history = await env.client.workflow.getHandle(callWorkflowId(args.callId)).fetchHistory();
  const signals = (history.events ?? []).flatMap((e) => {
    const name = e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName;
    return name ? [name] : [];
  });
  const delivered = calls
    .filter((c) => c.name === 'attemptWebhookDelivery')
    .map((c) => (c.input as { event: WebhookEvent }).event.type);
  return { state, stream, signals, delivered };
}

const EVENTS = ['phoneCall.queued', 'phoneCall.ringing', 'phoneCall.inProgress', 'phoneCall.completed'];

it("ends the stream with the call's final event: no noMoreEvents signal from the call", async () => {
  const args = callWorkflowInput({ finalWithCapture: true, streamsEndWithFinalEvent: true });
  const { state, stream, signals, delivered } = await runWithOneEndpoint(args);
  expect(state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(stream).toEqual({ delivered: 4, failed: 0 });
  expect(delivered).toEqual(EVENTS);
  // The first event started the stream; each later one is a signal, and nothing follows the last.
  expect(signals).toEqual(['enqueueEvent', 'enqueueEvent', 'enqueueEvent']);
});

it('tells the stream at the end for calls from before the field, as they ran', async () => {
  const args = callWorkflowInput({ finalWithCapture: true });
  const { stream, signals, delivered } = await runWithOneEndpoint(args);
  expect(stream).toEqual({ delivered: 4, failed: 0 });
  expect(delivered).toEqual(EVENTS);
  expect(signals).toEqual(['enqueueEvent', 'enqueueEvent', 'enqueueEvent', 'noMoreEvents']);
});

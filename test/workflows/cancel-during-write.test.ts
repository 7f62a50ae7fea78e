// An operator's cancel arriving while a status change is written, on the time-skipping server. In a
// file of its own: its stubs cancel and signal from outside the worker (as the real write signals the
// delivery streams), which leaves the server's clock lock unusable for tests after it.
import { WorkflowFailedError } from '@temporalio/client';
import { expect, it } from 'vitest';
import { callWorkflowId, deliveryWorkflowId } from '../../src/contracts/ids';
import { phoneCallWorkflow } from '../../workflows/call';
import { enqueueEventSignal } from '../../workflows/messages';
import type { WebhookEvent, WebhookTarget } from '../../workflows/types';
import {
  callWorkflowInput,
  signalProviderEvents,
  statusChanges,
  stubActivities,
  useTimeSkippingEnvironment,
  uniqueId,
  workerFor,
} from './environment';

const env = useTimeSkippingEnvironment();

it('cancelled while a status change is written, tells that change to its webhooks before cancelled', async () => {
  // The write hands its event to running streams itself; the endpoints without a stream yet are
  // started by the workflow once the write answers. Before, the cancel stopped waiting for the
  // answer, and those endpoints never heard of the change.
  const target: WebhookTarget = {
    endpointKey: 'wh-1',
    url: 'https://receiver.example/hook',
    method: 'POST',
    secretSealed: 'sealed',
    webhookId: 'wh-1',
  };
  const { activities, calls } = stubActivities({
    dialCall: async ({ callId, ringing }) => {
      await signalProviderEvents(env, callId, `pc-${callId}`, [{ kind: 'answered' }]);
      return {
        providerCallId: `pc-${callId}`,
        ...(ringing ? { ringing: { applied: true, call: { _id: callId } } } : {}),
      };
    },
    recordStatus: async (change, route) => {
      if (change.status === 'inProgress') {
        await env.client.workflow.getHandle(callWorkflowId(change.callId)).cancel();
        await new Promise((resolve) => setTimeout(resolve, 1_000)); // the write takes a moment
      }
      // As the real write hands its event on: to the endpoint's stream if it runs, else for a new one.
      const call = { _id: change.callId, status: change.status };
      const event = { ...route!.event, data: call } as WebhookEvent;
      const running = route!.streams[target.endpointKey];
      if (!running)
        return { applied: true, call, routed: { handedTo: [], newStreams: [target], event, retryDelaysMs: [] } };
      await env.client.workflow.getHandle(running).signal(enqueueEventSignal, event);
      const routed = { handedTo: [target.endpointKey], newStreams: [], event: null, retryDelaysMs: [] };
      return { applied: true, call, routed };
    },
  });
  const args = callWorkflowInput({
    routeWithWrites: true,
    streamEventsByActivity: true,
    streamsEndWithFinalEvent: true,
    ringingWithDial: true,
    queuedEventUnsubscribed: true,
    ownWebhookEvents: [],
    statusWritesOutliveCancel: true,
  });
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  await worker.runUntil(async () => {
    const call = await env.client.workflow.start(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    expect(await call.result().catch((err: unknown) => err)).toBeInstanceOf(WorkflowFailedError);
    await env.client.workflow.getHandle(deliveryWorkflowId(args.callId, target.endpointKey)).result();
  });
  expect(statusChanges(calls).map((c) => `${c.status}/${c.statusCode}`)).toEqual([
    'inProgress/answered',
    'cancelled/cancelled-by-operator',
  ]);
  const delivered = calls
    .filter((c) => c.name === 'attemptWebhookDelivery')
    .map((c) => (c.input as { event: WebhookEvent }).event.type);
  expect(delivered).toEqual(['phoneCall.inProgress', 'phoneCall.cancelled']);
});

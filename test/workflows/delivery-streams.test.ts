// A call's webhook delivery streams end by themselves once they have delivered the call's final event
// (`streamsEndWithFinalEvent`): the call sends them no `noMoreEvents` signal at its end, a signal and a
// workflow task on each side fewer per endpoint. Calls from before the field tell every stream, as they
// did. Since `streamEventsByActivity` a running stream gets each later event from the endpoint lookup's
// local activity, not from a signal command. The real call and delivery workflows on the time-skipping
// server.
import { Types } from 'mongoose';
import { expect, it } from 'vitest';
import { createWebhookActivities } from '../../activities/webhooks';
import type { Activities } from '../../activities';
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
async function runWithOneEndpoint(
  args: CallWorkflowInput,
  overrides: Partial<Activities> = {},
  endpointKey = target.endpointKey,
) {
  const { activities, calls } = stubActivities({
    resolveWebhookTargets: async ({ callId }) => ({ targets: [target], retryDelaysMs: [5_000], call: { _id: callId } }),
    ...overrides,
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
      .getHandle<typeof deliverWebhookEventsWorkflow>(deliveryWorkflowId(args.callId, endpointKey))
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
  const workflowTasks = (history.events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes).length;
  return { state, stream, signals, delivered, workflowTasks };
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

it('hands each later event to the running stream from the lookup: no signal command, each event once', async () => {
  const { hook, lookup, endpointKey } = realLookup();
  const handed: string[][] = [];
  const routeWebhookEvent: Activities['routeWebhookEvent'] = async (input) => {
    const answer = await lookup.routeWebhookEvent(input);
    handed.push(answer.handedTo);
    // As a retried activity would: the stream already has this event, and takes it once.
    if (input.event.type === 'phoneCall.inProgress') await lookup.routeWebhookEvent(input);
    return answer;
  };
  const base = {
    finalWithCapture: true,
    streamsEndWithFinalEvent: true,
    queuedEventUnsubscribed: true,
    ownWebhookEvents: [],
  };
  const args = callWorkflowInput({ ...base, streamEventsByActivity: true });
  const { state, stream, signals, delivered, workflowTasks } = await runWithOneEndpoint(
    args,
    { routeWebhookEvent },
    endpointKey,
  );
  expect(state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(delivered).toEqual(EVENTS.slice(1));
  expect(stream).toEqual({ delivered: 3, failed: 0 });
  // The first event started the stream (it was not running); the lookup handed it the two after.
  expect(handed).toEqual([[], [endpointKey], [endpointKey]]);
  expect(signals).toEqual([]);

  // The same call signalling its stream itself: two signal commands, and more workflow tasks (how many
  // more depends on how the server groups the events of each task).
  const before = await runWithOneEndpoint(
    callWorkflowInput(base),
    { resolveWebhookTargets: async () => ({ targets: [teamTarget(hook)], retryDelaysMs: [5_000], call: null }) },
    endpointKey,
  );
  expect(before.signals).toEqual(['enqueueEvent', 'enqueueEvent']);
  expect(before.delivered).toEqual(EVENTS.slice(1));
  expect(workflowTasks).toBeLessThan(before.workflowTasks);
});

it('keeps the stream of a call cancelled as it starts: it delivers the queued event and phoneCall.cancelled', async () => {
  const { lookup, endpointKey } = realLookup();
  const { activities, calls } = stubActivities({
    routeWebhookEvent: async (input) => {
      // The operator cancels the call as its first event starts the stream: before the stream has started.
      if (input.event.type === 'phoneCall.queued')
        await env.client.workflow.getHandle(callWorkflowId(input.event.callId)).cancel();
      // The call as the lookup would read it, for the queued event (the only one without a payload).
      const data = input.event.data ?? { _id: input.event.callId };
      return lookup.routeWebhookEvent({ ...input, event: { ...input.event, data } });
    },
  });
  const args = callWorkflowInput({
    finalWithCapture: true,
    streamsEndWithFinalEvent: true,
    ownWebhookEvents: [],
    streamEventsByActivity: true,
    scheduledFor: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const taskQueue = uniqueId('q');
  const worker = await workerFor(env, activities, taskQueue);
  const streamId = deliveryWorkflowId(args.callId, endpointKey);
  await worker.runUntil(async () => {
    const call = await env.client.workflow.start(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    await expect(call.result()).rejects.toThrow();
    await env.client.workflow.getHandle(streamId).result();
  });
  const delivered = calls
    .filter((c) => c.name === 'attemptWebhookDelivery')
    .map((c) => (c.input as { event: WebhookEvent }).event.type);
  expect(delivered).toEqual(['phoneCall.queued', 'phoneCall.cancelled']);
  // One stream, never asked to cancel.
  const { events } = await env.client.workflow.getHandle(streamId).fetchHistory();
  expect(events!.filter((e) => e.workflowExecutionCancelRequestedEventAttributes)).toEqual([]);
  expect(events!.at(-1)!.workflowExecutionCompletedEventAttributes).toBeTruthy();
});

/** The real routeWebhookEvent over a team with one webhook subscribed to every event (no MongoDB read). */
function realLookup() {
  // The call itself is never read: its own webhooks want nothing, and the events carry their payload.
  const hook = {
    _id: new Types.ObjectId(),
    url: target.url,
    method: 'POST',
    secretSealed: 'sealed',
    subscribedEvents: ['*'],
  };
  const lookup = createWebhookActivities({
    config: { WEBHOOK_RETRY_DELAYS: [5_000] },
    webhooks: { forTeam: async () => [hook] },
    calls: { findById: async () => null },
    temporal: { client: env.client },
  } as unknown as Parameters<typeof createWebhookActivities>[0]);
  return { hook, lookup, endpointKey: teamTarget(hook).endpointKey };
}

function teamTarget(hook: { _id: Types.ObjectId; url: string; secretSealed: string }): WebhookTarget {
  return { ...target, endpointKey: `wh-${hook._id.toHexString()}`, url: hook.url, webhookId: hook._id.toHexString() };
}

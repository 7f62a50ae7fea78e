// A call's webhook delivery streams end by themselves once they have delivered the call's final event
// (`streamsEndWithFinalEvent`): the call sends them no `noMoreEvents` signal at its end, a signal and a
// workflow task on each side fewer per endpoint. Calls from before the field tell every stream, as they
// did. Since `streamEventsByActivity` a running stream gets each later event from the endpoint lookup's
// local activity, not from a signal command; since `routeWithWrites` from the activity that wrote the
// change (no lookup after it). The real call and delivery workflows on the time-skipping server.
import { Worker } from '@temporalio/worker';
import { Types } from 'mongoose';
import { expect, it } from 'vitest';
import type { StatusWritten } from '../../activities/call-record';
import {
  createEventRouter,
  createWebhookActivities,
  type EventRouteAfterWrite,
  type EventRouter as Router,
  type EventRouterDeps,
} from '../../activities/webhooks';
import type { Activities } from '../../activities';
import { callWorkflowId, deliveryWorkflowId, webhookAttemptTaskQueue } from '../../src/contracts/ids';
import { createLogger } from '../../src/logger';
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

/** The calls' task queue realLookup's router names: its streams make their attempts on that queue's. */
const LOOKUP_TASK_QUEUE = uniqueId('q');

/** A worker for `taskQueue`, and one for the attempts of streams realLookup started, run together. */
async function workersFor(activities: Activities, taskQueue: string) {
  const calls = await workerFor(env, activities, taskQueue);
  const attempts = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: webhookAttemptTaskQueue(LOOKUP_TASK_QUEUE),
    activities,
  });
  return { runUntil: <R>(work: () => Promise<R>) => attempts.runUntil(calls.runUntil(work)) };
}

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
  writeRinging?: (callId: string, route: EventRouteAfterWrite | undefined) => Promise<StatusWritten>,
  /** Runs on the workers' task queue before the call starts. */
  beforeCall?: (taskQueue: string) => Promise<void>,
) {
  const { activities, calls } = stubActivities({
    resolveWebhookTargets: async ({ callId }) => ({ targets: [target], retryDelaysMs: [5_000], call: { _id: callId } }),
    ...overrides,
    dialCall: async ({ callId, ringing }) => {
      const providerCallId = `pc-${callId}`;
      // Signalled before the dial answers: the server skips no time while an activity runs.
      await signalProviderEvents(env, callId, providerCallId, [{ kind: 'answered' }, { kind: 'completed' }]);
      return {
        providerCallId,
        ...(ringing && writeRinging ? { ringing: await writeRinging(callId, ringing.route) } : {}),
      };
    },
  });
  const taskQueue = uniqueId('q');
  const worker = await workersFor(activities, taskQueue);
  const { state, stream } = await worker.runUntil(async () => {
    await beforeCall?.(taskQueue);
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
  const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes).length;
  return { state, stream, signals, delivered, workflowTasks, markers };
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

it("hands its events to a stream still running from the run an operator's reset replaced", async () => {
  // A reset's new run starts no stream of its own for the endpoint (the id is taken), and before
  // dropped every event of it; the old run's stream, abandoned, would have idled out a day later.
  const args = callWorkflowInput({ finalWithCapture: true, streamsEndWithFinalEvent: true });
  const beforeReset: WebhookEvent = {
    eventId: `before-reset-${args.callId}`,
    type: 'phoneCall.queued',
    timestamp: new Date().toISOString(),
    callId: args.callId,
    teamId: args.teamId,
    data: { _id: args.callId },
  };
  const { state, stream, signals, delivered } = await runWithOneEndpoint(
    args,
    {},
    target.endpointKey,
    undefined,
    async (taskQueue) => {
      await env.client.workflow.start(deliverWebhookEventsWorkflow, {
        workflowId: deliveryWorkflowId(args.callId, target.endpointKey),
        taskQueue,
        // As the replaced run started it, from the same input.
        args: [
          {
            callId: args.callId,
            teamId: args.teamId,
            target,
            firstEvent: beforeReset,
            retryDelaysMs: [5_000],
            endsWithFinalEvent: true,
          },
        ],
      });
    },
  );
  expect(state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(delivered).toEqual(['phoneCall.queued', ...EVENTS]);
  // Every event of the call went to the running stream, and it ended with the final one.
  expect(signals).toEqual(['enqueueEvent', 'enqueueEvent', 'enqueueEvent', 'enqueueEvent']);
  expect(stream).toEqual({ delivered: 5, failed: 0 });
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

it('hands each event on from the activity that wrote its change (routeWithWrites): no endpoint lookup after a write', async () => {
  const { endpointKey, lookup, router } = realLookup();
  const withWrites = await runWithWritesThatRoute(router, lookup, endpointKey);
  expect(withWrites.state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(withWrites.delivered).toEqual(EVENTS_AFTER_QUEUED);
  expect(withWrites.stream).toEqual({ delivered: 4, failed: 0 });
  // The dial's write found no stream, so the workflow started it with `ringing`; each later write
  // handed its event to it. No lookup ran (no local activity's marker), and no signal command.
  expect(withWrites.markers).toBe(0);
  expect(withWrites.signals).toEqual([]);

  // The same call from before the field: a lookup after each write, each a local activity's marker.
  const before = await runWithWritesThatRoute(router, lookup, endpointKey, {});
  expect(before.delivered).toEqual(EVENTS_AFTER_QUEUED);
  expect(before.markers).toBe(4);
  // Not compared: the workflow tasks. A lookup runs inside the task that scheduled it, so both ways take
  // about as many, and how many depends on how the server groups the signalled provider events (a fresh
  // clone's CI once had 7 with writes against 6 before).
});

it('leaves an event the write could not hand on to the endpoint lookup: delivered once, in order', async () => {
  const { hook, endpointKey, lookup } = realLookup();
  // A router whose every signal to a running stream fails (the Temporal server unreachable from the
  // activity for a moment): the dial's `ringing` starts the stream, each later write gives up its event.
  const failing = createEventRouter({
    config: { WEBHOOK_RETRY_DELAYS: [5_000] },
    webhooks: { forTeam: async () => [hook] },
    calls: { findById: async () => null },
    temporal: {
      taskQueue: LOOKUP_TASK_QUEUE,
      client: {
        workflow: {
          getHandle: () => ({
            signal: async () => {
              throw new Error('14 UNAVAILABLE: connection refused');
            },
          }),
        },
      },
    },
    logger: createLogger('silent', 'test'),
  } as unknown as EventRouterDeps);
  const run = await runWithWritesThatRoute(failing, lookup, endpointKey);
  expect(run.state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(run.delivered).toEqual(EVENTS_AFTER_QUEUED);
  expect(run.stream).toEqual({ delivered: 4, failed: 0 });
  // inProgress, transcript.created and completed each took the lookup's local activity instead.
  expect(run.markers).toBe(3);
});

it("starts a stream with the transcript's event and hands it the final one when the capture routed both", async () => {
  // The endpoint wants only what the capture sends: no stream runs when the capture routes either event.
  const { endpointKey, lookup, router } = realLookup(['transcript.created', 'phoneCall.completed']);
  const run = await runWithWritesThatRoute(router, lookup, endpointKey);
  expect(run.state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(run.delivered).toEqual(['transcript.created', 'phoneCall.completed']);
  expect(run.stream).toEqual({ delivered: 2, failed: 0 });
  // The stream the transcript's event started took the final event by a signal, in order.
  expect(run.signals).toEqual(['enqueueEvent']);
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
  const worker = await workersFor(activities, taskQueue);
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

const EVENTS_AFTER_QUEUED = ['phoneCall.ringing', 'phoneCall.inProgress', 'transcript.created', 'phoneCall.completed'];

/**
 * The real routeWebhookEvent and event router over a team with one webhook subscribed to
 * `subscribedEvents` (no MongoDB read).
 */
function realLookup(subscribedEvents = ['*']) {
  // The call itself is never read: its own webhooks want nothing, and the events carry their payload.
  const hook = {
    _id: new Types.ObjectId(),
    url: target.url,
    method: 'POST',
    secretSealed: 'sealed',
    subscribedEvents,
  };
  const deps = {
    config: { WEBHOOK_RETRY_DELAYS: [5_000] },
    webhooks: { forTeam: async () => [hook] },
    calls: { findById: async () => null },
    temporal: { client: env.client, taskQueue: LOOKUP_TASK_QUEUE },
    logger: createLogger('silent', 'test'),
  } as unknown as EventRouterDeps & Parameters<typeof createWebhookActivities>[0];
  return {
    hook,
    lookup: createWebhookActivities(deps),
    router: createEventRouter(deps),
    endpointKey: teamTarget(hook).endpointKey,
  };
}

/**
 * runWithOneEndpoint for a call of today, its queued event unsubscribed, with `input` (by default
 * `routeWithWrites`; {}: the call from before the field), the dial, recordStatus and the capture
 * answering as the real ones through `router`, and the lookup's local activity the real one.
 */
function runWithWritesThatRoute(
  router: Router,
  lookup: ReturnType<typeof realLookup>['lookup'],
  endpointKey: string,
  input: Partial<CallWorkflowInput> = { routeWithWrites: true },
) {
  const args = callWorkflowInput({
    finalWithCapture: true,
    streamsEndWithFinalEvent: true,
    queuedEventUnsubscribed: true,
    ownWebhookEvents: [],
    ringingWithDial: true,
    streamEventsByActivity: true,
    ...input,
  });
  const overrides = { routeWebhookEvent: lookup.routeWebhookEvent, ...writesThatRoute(router) };
  return runWithOneEndpoint(args, overrides, endpointKey, ringingWrite(router));
}

/** recordStatus and the capture as the real ones answer, each handing its event on when asked. */
function writesThatRoute(router: Router): Partial<Activities> {
  const written = async (call: Record<string, unknown>, route?: EventRouteAfterWrite) => ({
    applied: true,
    call,
    ...(route ? { routed: await router.routeAfterWrite(route, call) } : {}),
  });
  return {
    recordStatus: (change, route) => written({ _id: change.callId, status: change.status }, route),
    captureCallOutputs: async ({ callId, final, route }) => {
      const transcriptEvent = { phoneCallId: callId, transcripts: [{ speaker: 'agent', text: 'Hello' }] };
      const transcriptRouted = route ? await router.routeAfterWrite(route.transcript, transcriptEvent) : undefined;
      return {
        transcriptEvent,
        ...(transcriptRouted ? { transcriptRouted } : {}),
        ...(final ? { final: await written({ _id: callId, status: final.status }, route?.final) } : {}),
      };
    },
  };
}

/** The dial's `ringing` write, handing its event on when asked. */
function ringingWrite(router: Router) {
  return async (callId: string, route?: EventRouteAfterWrite): Promise<StatusWritten> => {
    const call = { _id: callId, status: 'ringing' };
    return { applied: true, call, ...(route ? { routed: await router.routeAfterWrite(route, call) } : {}) };
  };
}

function teamTarget(hook: { _id: Types.ObjectId; url: string; secretSealed: string }): WebhookTarget {
  return { ...target, endpointKey: `wh-${hook._id.toHexString()}`, url: hook.url, webhookId: hook._id.toHexString() };
}

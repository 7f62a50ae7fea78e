// A call's webhook events on their way out: one delivery workflow (a child) per subscribed endpoint
// carries the call's events to it in order, with retries (workflows/deliver-webhook.ts). The call
// workflow hands each event here; this starts the streams an event needs and signals the running ones.
// Deterministic code only: it runs inside the call's workflow.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  CancellationScope,
  ParentClosePolicy,
  getExternalWorkflowHandle,
  log,
  patched,
  startChild,
  type ChildWorkflowHandle,
  type ExternalWorkflowHandle,
} from '@temporalio/workflow';
import type { EventRouteAfterWrite, Routed } from '../activities/webhooks';
import { isFinalCallEvent, type CallEventName } from '../src/contracts/events';
import { deliveryWorkflowId } from '../src/contracts/ids';
import { localStep } from './call-steps';
import { deliverWebhookEventsWorkflow } from './deliver-webhook';
import { enqueueEventSignal, noMoreEventsSignal } from './messages';
import type { CallWorkflowInput, CallWorkflowState, WebhookEvent, WebhookTarget } from './types';

/** A stream this run started, or one it found running (started by the run an operator's reset replaced). */
type Stream = ChildWorkflowHandle<typeof deliverWebhookEventsWorkflow> | ExternalWorkflowHandle;

/** The streams as they stood before an activity that routes an event: see `handOn`. */
export type StreamsBefore = ReadonlyMap<string, unknown>;

export class CallWebhookStreams {
  private readonly deliveries = new Map<string, Stream>();
  /** Endpoints whose stream was handed the call's final event: it ends by itself (streamsEndWithFinalEvent). */
  private readonly endedStreams = new Set<string>();

  constructor(
    private readonly input: CallWorkflowInput,
    private readonly state: Pick<CallWorkflowState, 'attempt'>,
  ) {}

  /** The streams running now, to tell apart one started while an activity routed an event. */
  snapshot(): StreamsBefore {
    return new Map(this.deliveries);
  }

  /** An event of this call, its payload aside. */
  draft(type: CallEventName, at: string): Omit<WebhookEvent, 'data'> {
    const { input, state } = this;
    return {
      // Attempts after the first send the same event types again: each gets an id of its own.
      eventId: state.attempt > 1 ? `evt_${input.callId}_${type}_${state.attempt}` : `evt_${input.callId}_${type}`,
      type,
      timestamp: at,
      callId: input.callId,
      teamId: input.teamId,
    };
  }

  /**
   * For a write activity, the event its change makes, to hand on once the write lands (calls since
   * `routeWithWrites`; otherwise undefined, and the workflow looks the endpoints up after the write).
   */
  writeRoute(type: CallEventName, at: string): EventRouteAfterWrite | undefined {
    const { input } = this;
    if (!input.routeWithWrites) return undefined;
    return {
      event: this.draft(type, at),
      streams: this.running(),
      ...(input.ownWebhookEvents ? { ownWebhookEvents: input.ownWebhookEvents } : {}),
    };
  }

  /**
   * An event routed by an activity: the streams that took it are known, and this starts the others.
   * `before` is the streams as the activity was given them: a stream started since (the capture routes
   * two events before the workflow starts either's new streams) is handed the event.
   */
  async handOn(type: CallEventName, routed: Routed, before: StreamsBefore): Promise<void> {
    const endsStream = this.input.streamsEndWithFinalEvent === true && isFinalCallEvent(type);
    if (endsStream) for (const key of routed.handedTo) this.endedStreams.add(key);
    for (const target of routed.newStreams) {
      const started = this.deliveries.get(target.endpointKey);
      const startedSince = this.input.routeWithWrites && started && started !== before.get(target.endpointKey);
      if (startedSince && (await this.signal(started, target.endpointKey, routed.event!, endsStream))) continue;
      await this.start(target, routed.event!, routed, endsStream);
    }
  }

  /** Hands an event to a delivery workflow per subscribed endpoint; `data` defaults to the call now. */
  async emit(
    type: CallEventName,
    data: Record<string, unknown> | null,
    at: string,
    ownTargets?: WebhookTarget[],
  ): Promise<void> {
    const { input } = this;
    const draft = this.draft(type, at);
    const endsStream = input.streamsEndWithFinalEvent === true && isFinalCallEvent(type);
    if (input.streamEventsByActivity) {
      // The lookup hands the event to the streams already running; this starts the others.
      const before = this.snapshot();
      const routed = await localStep(`hand ${type} to its webhook endpoints`).routeWebhookEvent({
        event: { ...draft, data },
        streams: this.running(),
        ...(input.ownWebhookEvents ? { ownWebhookEvents: input.ownWebhookEvents } : {}),
        ...(ownTargets ? { ownTargets } : {}),
      });
      await this.handOn(type, routed, before);
      return;
    }
    const resolved = await localStep(`webhook endpoints for ${type}`).resolveWebhookTargets({
      callId: input.callId,
      teamId: input.teamId,
      type,
      // What lets the activity skip reading the call: its own webhooks' events, and whether the
      // event's payload is the call as it stands (only when `data` is not given).
      ...(input.ownWebhookEvents ? { ownWebhookEvents: input.ownWebhookEvents } : {}),
      ...(ownTargets ? { ownTargets } : {}),
      wantsCall: data === null,
    });
    const { targets } = resolved;
    if (targets.length === 0) return;
    const payload = data ?? resolved.call;
    if (!payload) return; // the record is gone (deleted before this workflow ran): nothing to tell
    const event = { ...draft, data: payload };
    for (const target of targets) {
      const running = this.deliveries.get(target.endpointKey);
      if (running && (await this.signal(running, target.endpointKey, event, endsStream))) continue;
      await this.start(target, event, resolved, endsStream);
    }
  }

  /**
   * Tells every stream not handed the final event that no more events will come, so each can finish
   * (one handed the final event knows). Run as the call's workflow closes.
   */
  async endAll(): Promise<void> {
    for (const [endpointKey, child] of this.deliveries) {
      if (this.endedStreams.has(endpointKey)) continue;
      try {
        await child.signal(noMoreEventsSignal);
      } catch (err) {
        log.warn('delivery workflow no longer running', { workflowId: child.workflowId, error: String(err) });
      }
    }
  }

  /** The streams running now, by endpoint: for an activity that hands an event to them. */
  private running(): Record<string, string> {
    return Object.fromEntries([...this.deliveries].map(([key, child]) => [key, child.workflowId]));
  }

  /** Hands an event to a stream this workflow started; false when the stream has ended. */
  private async signal(
    running: Stream,
    endpointKey: string,
    event: WebhookEvent,
    endsStream: boolean,
  ): Promise<boolean> {
    try {
      await running.signal(enqueueEventSignal, event);
      if (endsStream) this.endedStreams.add(endpointKey);
      return true;
    } catch (err) {
      // The stream ended (idle for a day, or terminated): a new one carries on, in order.
      log.warn('delivery workflow gone; starting a new one', { endpointKey, error: String(err) });
      return false;
    }
  }

  /**
   * Starts the delivery workflow of one endpoint with its first event, its retry schedule and where it
   * makes its attempts as the lookup gave them (a lookup from before the attempts' queue gives none).
   */
  private async start(
    target: WebhookTarget,
    event: WebhookEvent,
    { retryDelaysMs, attemptTaskQueue }: { retryDelaysMs: number[]; attemptTaskQueue?: string },
    endsStream: boolean,
  ) {
    const { input } = this;
    try {
      const start = () =>
        startChild(deliverWebhookEventsWorkflow, {
          workflowId: deliveryWorkflowId(input.callId, target.endpointKey),
          args: [
            {
              callId: input.callId,
              teamId: input.teamId,
              target,
              firstEvent: event,
              retryDelaysMs,
              ...(input.streamsEndWithFinalEvent ? { endsWithFinalEvent: true } : {}),
              ...(attemptTaskQueue ? { attemptTaskQueue } : {}),
            },
          ],
          staticSummary: `Webhooks of the call to ${input.toPhoneNumber} for ${hostOf(target.url)}`,
          // Deliveries retry for hours; they must outlive the call's workflow.
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
      // Started outside the call's cancellation: an operator's cancel arriving while a stream starts
      // would cancel the stream too, and the stream owes its endpoint what it was started with and the
      // call's `phoneCall.cancelled` (which the lookup may hand it just before its cancel ends it). Calls
      // from before `streamEventsByActivity` replay with their streams in the workflow's scope, as they ran.
      const child = await (input.streamEventsByActivity ? CancellationScope.nonCancellable(start) : start());
      this.deliveries.set(target.endpointKey, child);
      if (endsStream) this.endedStreams.add(target.endpointKey);
    } catch (err) {
      // Already running: started by the run an operator's reset replaced (the reset run's streams are
      // abandoned, not ended, and run on for their day). It takes this run's events from here: a
      // retried event it has is taken once. Before, every later event of the endpoint was dropped.
      if (err instanceof WorkflowExecutionAlreadyStartedError && patched('stream-running-since-reset')) {
        const running = getExternalWorkflowHandle(deliveryWorkflowId(input.callId, target.endpointKey));
        if (await this.signal(running, target.endpointKey, event, endsStream)) {
          this.deliveries.set(target.endpointKey, running);
          return;
        }
      }
      // A notification problem must never stop the call itself.
      log.error('could not start a webhook delivery', {
        endpointKey: target.endpointKey,
        type: event.type,
        error: String(err),
      });
    }
  }
}

/** A URL's host, for a summary (the workflow sandbox need not have URL). */
function hostOf(url: string): string {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#]/)[0] ?? url;
}

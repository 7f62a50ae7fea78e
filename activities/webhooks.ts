// Which endpoints an event goes to, handing it to their delivery streams, and one delivery attempt to
// one endpoint (recorded in MongoDB).
import { activityInfo, heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES } from '../src/contracts/failures';
import { WorkflowNotFoundError } from '@temporalio/client';
import { subscribesTo, type CallEventName } from '../src/contracts/events';
import { redeliveryNumberOf, webhookAttemptTaskQueue } from '../src/contracts/ids';
import { toReadView } from '../src/data/phone-call-view';
import { deliveryWriteOrder, type DeliveryAttemptRecord } from '../src/data/webhook-store';
import { attemptDelivery, type AttemptResult } from '../src/webhooks/attempt';
import type { WebhookEvent, WebhookTarget } from '../workflows/types';
import { callWebhookTarget, endpointOfKey, teamWebhookTarget } from '../src/webhooks/targets';
import { createTeamAttempts } from '../src/webhooks/team-attempts';
import { enqueueEventSignal } from '../workflows/messages';
import type { ActivityDeps } from './deps';

interface TargetsQuery {
  callId: string;
  teamId: string;
  type: CallEventName;
  ownWebhookEvents?: string[];
  /** The call's own endpoints of the event, given when its record is gone (`phoneCall.deleted`). */
  ownTargets?: WebhookTarget[];
  wantsCall?: boolean;
}

/** An event as the call's workflow makes it: `data` null stands for the call as it is now. */
export type WebhookEventDraft = Omit<WebhookEvent, 'data'> & { data: Record<string, unknown> | null };

/** An event to route: its endpoints are resolved, and each stream that runs (`streams`: key -> id) takes it. */
export interface RouteRequest {
  event: WebhookEventDraft;
  streams: Record<string, string>;
  ownWebhookEvents?: string[];
  /** As in the lookup: the call's own endpoints, when its record is gone. */
  ownTargets?: WebhookTarget[];
}

/** Where an event went: the streams that took it, and the endpoints whose stream the workflow starts. */
export interface Routed {
  handedTo: string[];
  newStreams: WebhookTarget[];
  /** The event whole, for the first event of each new stream (null when there is none). */
  event: WebhookEvent | null;
  retryDelaysMs: number[];
  /** Where the new streams make their attempts (set when there are new streams). */
  attemptTaskQueue?: string;
}

/**
 * The event of a status change, handed on by the activity that writes the change once it lands (calls
 * since `routeWithWrites`). Its payload is what the write returns, so the workflow sends none.
 */
export type EventRouteAfterWrite = Omit<RouteRequest, 'event'> & { event: Omit<WebhookEvent, 'data'> };

export interface WebhookAttemptActivityInput {
  callId: string;
  teamId: string;
  target: WebhookTarget;
  event: WebhookEvent;
  attempt: number;
  isLastAttempt: boolean;
  /**
   * The stream waits and tries again when the team has its cap of attempts under way (streams since
   * the cap): refused then, with nothing sent. Without it the attempt is made whatever the cap.
   */
  waitsWhileTeamBusy?: boolean;
}

/**
 * An attempt's request made, kept as its try's heartbeat until it is recorded (for the try's retry), and
 * handed to the workflow should no try record it (webhookAttemptUnrecorded).
 */
export interface MadeAttempt {
  target: WebhookTarget;
  result: AttemptResult;
}

export type EventRouterDeps = Pick<ActivityDeps, 'config' | 'calls' | 'webhooks' | 'temporal' | 'logger'>;

/** Resolving an event's endpoints, and routing it to their streams: for the lookup's activities and the writes'. */
export function createEventRouter({ config, calls, webhooks, temporal, logger }: EventRouterDeps) {
  /**
   * The endpoints subscribed to `type` for this call, and (when there are any and `wantsCall` is not
   * false) the call as it is now, for events whose payload is the call itself. The call is read only
   * when its own webhooks may want the event (`ownWebhookEvents`, absent: they may) or its view is
   * wanted: most events of most calls need one read, of the team's webhooks.
   */
  async function resolveTargets(
    input: TargetsQuery,
  ): Promise<{ targets: WebhookTarget[]; call: Record<string, unknown> | null }> {
    const wantsCall = input.wantsCall ?? true;
    const teamHooks = await webhooks.forTeam(input.teamId);
    const targets: WebhookTarget[] = [];
    for (const hook of teamHooks)
      if (subscribesTo(hook.subscribedEvents, input.type)) targets.push(teamWebhookTarget(hook));
    const ownMayWant =
      !input.ownTargets && (!input.ownWebhookEvents || subscribesTo(input.ownWebhookEvents, input.type));
    const call = ownMayWant || (wantsCall && targets.length) ? await calls.findById(input.callId) : null;
    if (input.ownTargets) targets.push(...input.ownTargets);
    else
      (call?.phoneCallWebhooks ?? []).forEach((hook, index) => {
        if (subscribesTo([hook.subscribedEvent], input.type)) targets.push(callWebhookTarget(hook, index));
      });
    return { targets, call: wantsCall && targets.length && call ? toReadView(call) : null };
  }

  /**
   * Resolves the endpoints of `event` and hands it, with a signal from the client, to each one whose
   * delivery stream runs (`streams`: endpoint key -> workflow id). A signal command from the call's
   * workflow would cost it two history events and a workflow task more per event and endpoint. Answers
   * which streams took it, and the endpoints that need a stream started (none yet, or it has ended),
   * with the event whole for their first. A retry may hand an event to a stream again: a stream takes
   * each event id once (workflows/deliver-webhook.ts).
   */
  async function routeEvent(input: RouteRequest): Promise<Routed> {
    const { event: draft } = input;
    const { targets, call } = await resolveTargets({
      callId: draft.callId,
      teamId: draft.teamId,
      type: draft.type,
      ...(input.ownWebhookEvents ? { ownWebhookEvents: input.ownWebhookEvents } : {}),
      ...(input.ownTargets ? { ownTargets: input.ownTargets } : {}),
      wantsCall: draft.data === null,
    });
    const data = draft.data ?? call;
    // The record is gone (deleted before the workflow ran): nothing to tell.
    if (targets.length === 0 || !data) return { handedTo: [], newStreams: [], event: null, retryDelaysMs: [] };
    const event: WebhookEvent = { ...draft, data };
    const handed = await Promise.all(
      targets.map(async (target) => {
        const workflowId = input.streams[target.endpointKey];
        if (!workflowId) return false;
        try {
          await temporal.client.workflow.getHandle(workflowId).signal(enqueueEventSignal, event);
          return true;
        } catch (err) {
          // The stream ended (idle for a day, handed the final event, or terminated): a new one carries on.
          if (err instanceof WorkflowNotFoundError) return false;
          throw err;
        }
      }),
    );
    const newStreams = targets.filter((_, i) => !handed[i]);
    return {
      handedTo: targets.filter((_, i) => handed[i]).map((t) => t.endpointKey),
      newStreams,
      event: newStreams.length > 0 ? event : null,
      retryDelaysMs: newStreams.length > 0 ? [...config.WEBHOOK_RETRY_DELAYS] : [],
      ...(newStreams.length > 0 ? { attemptTaskQueue: webhookAttemptTaskQueue(temporal.taskQueue) } : {}),
    };
  }

  /**
   * Routes the event of a change a write activity has just made, with `data` as its payload. A failure
   * answers undefined rather than failing the write's activity (a dial's retries are few, a capture's
   * costly): the workflow then looks the endpoints up itself, as before `routeWithWrites`, and a stream
   * that took the event already takes it once.
   */
  async function routeAfterWrite(
    route: EventRouteAfterWrite,
    data: Record<string, unknown>,
  ): Promise<Routed | undefined> {
    try {
      return await routeEvent({ ...route, event: { ...route.event, data } });
    } catch (err) {
      logger.warn(
        { callId: route.event.callId, type: route.event.type, err },
        'could not hand the event on with its write; the workflow looks its endpoints up',
      );
      return undefined;
    }
  }

  return { resolveTargets, routeEvent, routeAfterWrite };
}

export type EventRouter = ReturnType<typeof createEventRouter>;

export function createWebhookActivities(deps: EventRouterDeps & Pick<ActivityDeps, 'secretBox' | 'metrics'>) {
  const { config, secretBox, webhooks, metrics, temporal, calls } = deps;
  const { resolveTargets, routeEvent } = createEventRouter(deps);
  const teamAttempts = createTeamAttempts(config.WEBHOOK_MAX_ATTEMPTS_PER_TEAM ?? 0);

  /**
   * Adds the attempt to the delivery record of its event and endpoint, in `state` from now on unless a
   * later write is there already. `made`: by the activity that made the attempt (not the one noting
   * it could not be).
   */
  function record(
    input: WebhookAttemptActivityInput,
    state: DeliveryAttemptRecord['state'],
    attempt: Omit<DeliveryAttemptRecord['attempt'], 'attempt'>,
    made: boolean,
  ): Promise<void> {
    const { target, event } = input;
    const activity = activityInfo();
    return webhooks.recordAttempt({
      eventId: event.eventId,
      endpointKey: target.endpointKey,
      teamId: input.teamId,
      callId: input.callId,
      webhookId: target.webhookId,
      eventType: event.type,
      url: target.url,
      method: target.method,
      state,
      event: { type: event.type, timestamp: event.timestamp, data: event.data },
      attempt: { attempt: input.attempt, ...attempt },
      writeOrder: deliveryWriteOrder(
        redeliveryNumberOf(activity.workflowExecution?.workflowId ?? ''),
        input.attempt,
        made,
        activity.attempt,
      ),
    });
  }

  /** Records an attempt that was made, with what came of it. */
  function recordMade(input: WebhookAttemptActivityInput, result: AttemptResult): Promise<void> {
    const state = result.ok ? 'delivered' : result.gone ? 'gone' : input.isLastAttempt ? 'failed' : 'pending';
    return record(
      input,
      state,
      {
        attemptedAt: new Date(result.attemptedAt),
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
      },
      true,
    );
  }

  /**
   * recordMade; should the activity's last try fail to, the request's outcome goes to the workflow
   * with the failure, which notes the attempt as made (not as not made) and does not send it again.
   */
  async function recordMadeOrHandOver(input: WebhookAttemptActivityInput, result: AttemptResult): Promise<void> {
    try {
      await recordMade(input, result);
    } catch (err) {
      const { attempt, retryPolicy } = activityInfo();
      // No maximum reads as 0.
      if (attempt < (retryPolicy?.maximumAttempts || Infinity)) throw err;
      throw ApplicationFailure.create({
        type: FAILURES.webhookAttemptUnrecorded,
        message: `the attempt was made; recording it failed: ${String(err)}`,
        nonRetryable: true,
        details: [{ target: input.target, result } satisfies MadeAttempt],
      });
    }
  }

  /** The team webhook a target names, as it is now (null once deleted). */
  async function currentTarget(input: WebhookAttemptActivityInput): Promise<WebhookTarget | null> {
    const hook = (await webhooks.forTeam(input.teamId)).find((h) => h._id.toHexString() === input.target.webhookId);
    return hook ? teamWebhookTarget(hook) : null;
  }

  /**
   * A call's own webhook as its stream started with it (the secret sealed then), unless that secret is
   * under a key no longer current and the call's record has it sealed under the current one (`secrets
   * reseal` ran since): a stream lives as long as its call, and would otherwise need the old key until
   * its end, days after the reseal for a call scheduled next week. A call deleted since keeps its own.
   */
  async function ownTarget(target: WebhookTarget, callId: string): Promise<WebhookTarget> {
    if (secretBox.sealedWithCurrentKey(target.secretSealed)) return target;
    const endpoint = endpointOfKey(target.endpointKey);
    if (!endpoint || !('callWebhookIndex' in endpoint)) return target;
    const hook = (await calls.findById(callId))?.phoneCallWebhooks[endpoint.callWebhookIndex];
    return hook?.url === target.url && secretBox.sealedWithCurrentKey(hook.secretSealed)
      ? { ...target, secretSealed: hook.secretSealed }
      : target;
  }

  return {
    /** The endpoints of an event and the call (resolveTargets), for calls that signal their streams themselves. */
    async resolveWebhookTargets(input: TargetsQuery): Promise<{
      targets: WebhookTarget[];
      retryDelaysMs: number[];
      attemptTaskQueue?: string;
      call: Record<string, unknown> | null;
    }> {
      return {
        ...(await resolveTargets(input)),
        retryDelaysMs: [...config.WEBHOOK_RETRY_DELAYS],
        attemptTaskQueue: webhookAttemptTaskQueue(temporal.taskQueue),
      };
    },

    /** Routes an event to its endpoints' streams (createEventRouter's routeEvent), as a local activity. */
    routeWebhookEvent: (input: RouteRequest): Promise<Routed> => routeEvent(input),

    /**
     * Records an attempt that could not be made (its every try failed: the store or the secret box
     * down), so the delivery shows it and, once given up, ends `failed` and can be redelivered.
     */
    async recordAttemptNotMade(
      input: WebhookAttemptActivityInput & {
        error: string;
        made?: MadeAttempt;
        /** Not made because its team had its cap of attempts under way for as long as one waits. */
        teamBusy?: boolean;
      },
    ): Promise<void> {
      // Made after all, its record lost (webhookAttemptUnrecorded): noted as made, where it was sent.
      if (input.made) return recordMade({ ...input, target: input.made.target }, input.made.result);
      // The team reads the delivery: the reason stays in our logs (a store's or a key's error can name
      // internal hosts), the record says what happened.
      deps.logger.warn({ eventId: input.event.eventId, error: input.error }, 'webhook attempt could not be made');
      // Noted against the webhook as it is now, as an attempt would have gone (the record shows where).
      const target = input.target.webhookId ? ((await currentTarget(input)) ?? input.target) : input.target;
      await record(
        { ...input, target },
        input.isLastAttempt ? 'failed' : 'pending',
        {
          attemptedAt: new Date(),
          statusCode: null,
          durationMs: 0,
          error: input.teamBusy
            ? "not attempted: the team's other webhook attempts kept every place it may have for 10 minutes"
            : 'not attempted: the service could not make the attempt (its database or secrets were unavailable)',
        },
        false,
      );
    },

    async attemptWebhookDelivery(input: WebhookAttemptActivityInput): Promise<{ ok: boolean; gone: boolean }> {
      const { event } = input;
      // A try that made the request and could not record it (the store down) left what happened as its
      // heartbeat: this try records that, and the receiver does not get the request once per try.
      const made = activityInfo().heartbeatDetails as MadeAttempt | undefined;
      if (made?.result) {
        await recordMadeOrHandOver({ ...input, target: made.target }, made.result);
        return { ok: made.result.ok, gone: made.result.gone };
      }
      // The team's cap first: a stream that waits for it asks again and again, and reads nothing meanwhile.
      const ended = input.waitsWhileTeamBusy ? teamAttempts.tryStart(input.teamId) : teamAttempts.start(input.teamId);
      if (!ended) {
        throw ApplicationFailure.create({
          type: FAILURES.webhookTeamBusy,
          message: `the team has ${config.WEBHOOK_MAX_ATTEMPTS_PER_TEAM} webhook attempts under way: not sent`,
          nonRetryable: true,
        });
      }
      let target: WebhookTarget | null;
      let result: AttemptResult;
      try {
        // A team webhook is sent as it is now: a PATCH of its url or method (or a new secret) applies
        // to the next attempt of every stream, and a deleted webhook gets nothing more.
        target = input.target.webhookId ? await currentTarget(input) : await ownTarget(input.target, input.callId);
        if (!target) {
          await record(
            input,
            'failed',
            { attemptedAt: new Date(), statusCode: null, durationMs: 0, error: 'not sent: the webhook was deleted' },
            true,
          );
          return { ok: false, gone: true };
        }
        input = { ...input, target };
        result = await attemptDelivery({
          url: target.url,
          method: target.method,
          secret: secretBox.open(target.secretSealed),
          webhookId: event.eventId,
          event: { type: event.type, timestamp: event.timestamp, data: event.data },
          allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_URLS,
        });
      } finally {
        ended();
      }
      metrics.webhookAttempt(result.ok ? 'delivered' : result.gone ? 'gone' : 'failed', result.durationMs / 1000);
      heartbeat({ target, result } satisfies MadeAttempt);
      await recordMadeOrHandOver(input, result);
      return { ok: result.ok, gone: result.gone };
    },
  };
}

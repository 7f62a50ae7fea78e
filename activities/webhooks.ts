// Which endpoints an event goes to, and one delivery attempt to one of them (recorded in MongoDB).
import { subscribesTo, type CallEventName } from '../src/contracts/events';
import { toReadView } from '../src/data/phone-call-view';
import { attemptDelivery } from '../src/webhooks/attempt';
import type { WebhookEvent, WebhookTarget } from '../workflows/types';
import { callWebhookTarget, teamWebhookTarget } from '../src/webhooks/targets';
import type { ActivityDeps } from './deps';

export interface WebhookAttemptActivityInput {
  callId: string;
  teamId: string;
  target: WebhookTarget;
  event: WebhookEvent;
  attempt: number;
  isLastAttempt: boolean;
}

export function createWebhookActivities({
  config,
  secretBox,
  calls,
  webhooks,
  metrics,
}: Pick<ActivityDeps, 'config' | 'secretBox' | 'calls' | 'webhooks' | 'metrics'>) {
  return {
    /**
     * The endpoints subscribed to `type` for this call, and (when there are any and `wantsCall` is not
     * false) the call as it is now, for events whose payload is the call itself. The call is read
     * only when its own webhooks may want the event (`ownWebhookEvents`, absent: they may) or its view
     * is wanted: most events of most calls need one read, of the team's webhooks.
     */
    async resolveWebhookTargets(input: {
      callId: string;
      teamId: string;
      type: CallEventName;
      ownWebhookEvents?: string[];
      wantsCall?: boolean;
    }): Promise<{ targets: WebhookTarget[]; retryDelaysMs: number[]; call: Record<string, unknown> | null }> {
      const wantsCall = input.wantsCall ?? true;
      const teamHooks = await webhooks.forTeam(input.teamId);
      const targets: WebhookTarget[] = [];
      for (const hook of teamHooks)
        if (subscribesTo(hook.subscribedEvents, input.type)) targets.push(teamWebhookTarget(hook));
      const ownMayWant = !input.ownWebhookEvents || subscribesTo(input.ownWebhookEvents, input.type);
      const call = ownMayWant || (wantsCall && targets.length) ? await calls.findById(input.callId) : null;
      (call?.phoneCallWebhooks ?? []).forEach((hook, index) => {
        if (subscribesTo([hook.subscribedEvent], input.type)) targets.push(callWebhookTarget(hook, index));
      });
      return {
        targets,
        retryDelaysMs: [...config.WEBHOOK_RETRY_DELAYS],
        call: wantsCall && targets.length && call ? toReadView(call) : null,
      };
    },

    async attemptWebhookDelivery(input: WebhookAttemptActivityInput): Promise<{ ok: boolean; gone: boolean }> {
      const { target, event } = input;
      const result = await attemptDelivery({
        url: target.url,
        method: target.method,
        secret: secretBox.open(target.secretSealed),
        webhookId: event.eventId,
        event: { type: event.type, timestamp: event.timestamp, data: event.data },
        allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_URLS,
      });
      const state = result.ok ? 'delivered' : result.gone ? 'gone' : input.isLastAttempt ? 'failed' : 'pending';
      metrics.webhookAttempt(result.ok ? 'delivered' : result.gone ? 'gone' : 'failed', result.durationMs / 1000);
      await webhooks.recordAttempt({
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
        attempt: {
          attempt: input.attempt,
          attemptedAt: new Date(result.attemptedAt),
          statusCode: result.statusCode,
          durationMs: result.durationMs,
          error: result.error,
        },
      });
      return { ok: result.ok, gone: result.gone };
    },
  };
}

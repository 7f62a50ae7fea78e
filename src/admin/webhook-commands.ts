// `webhooks deliveries CALL` and `webhooks redeliver DELIVERY`: every event sent (or being sent) to a
// call's webhook endpoints with each attempt's answer, and sending one of them again, through the API.
import type { ApiSchemas } from '../client/api-client';
import { answerOf, apiFor, type ApiTarget } from './api-target';
import { CommandError } from './command-error';

/** A delivery as an operator reads it. */
const describe = (d: ApiSchemas['WebhookDelivery']) => ({
  deliveryId: d._id,
  eventType: d.eventType,
  webhookId: d.eventId,
  endpoint: `${d.method} ${d.url}`,
  state: d.state,
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    at: a.attemptedAt,
    status: a.statusCode,
    durationMs: a.durationMs,
    ...(a.error ? { error: a.error } : {}),
  })),
});

export async function listWebhookDeliveries(target: ApiTarget, phoneCallId: string | undefined) {
  if (!phoneCallId) throw new CommandError('the call id is required (webhooks deliveries CALL_ID)');
  const api = apiFor(target);
  const answer = await answerOf(
    api,
    api.client.GET('/v1/phoneCalls/{id}/webhookDeliveries', { params: { path: { id: phoneCallId } } }),
  );
  return { phoneCallId, deliveries: answer.data.map(describe) };
}

export async function redeliverWebhook(target: ApiTarget, deliveryId: string | undefined) {
  if (!deliveryId) throw new CommandError('the delivery id is required (webhooks redeliver DELIVERY_ID)');
  const api = apiFor(target);
  const answer = await answerOf(
    api,
    api.client.POST('/v1/webhookDeliveries/{id}/redeliver', { params: { path: { id: deliveryId } } }),
  );
  return { redelivering: true, delivery: describe(answer.data) };
}

// A webhook delivery record as the API shows it (GET /v1/phoneCalls/{id}/webhookDeliveries).
import type { z } from 'zod';
import type { CallEventName } from '../contracts/events';
import type { webhookDeliveryViewSchema } from '../schemas/responses';
import type { WebhookDeliveryDoc } from './models/webhook-delivery';

export type WebhookDeliveryView = z.output<typeof webhookDeliveryViewSchema>;

type Attempt = WebhookDeliveryDoc['attempts'][number];
/** Oldest first, by when each was sent (a redelivery's numbers may run below its stream's last). */
const oldestFirst = (a: Attempt, b: Attempt) =>
  a.attemptedAt.getTime() - b.attemptedAt.getTime() || a.attempt - b.attempt;

export function toWebhookDeliveryView(doc: WebhookDeliveryDoc): WebhookDeliveryView {
  return {
    _id: doc._id.toHexString(),
    teamId: doc.teamId.toHexString(),
    phoneCallId: doc.phoneCallId.toHexString(),
    webhookId: doc.webhookId ? doc.webhookId.toHexString() : null,
    eventId: doc.eventId,
    // Written from the event's own type by the delivery activity.
    eventType: doc.eventType as CallEventName,
    method: doc.method,
    url: doc.url,
    state: doc.state,
    // In the order they were made: a write that landed late was added after later attempts.
    attempts: [...doc.attempts].sort(oldestFirst).map((a) => ({
      attempt: a.attempt,
      attemptedAt: a.attemptedAt.toISOString(),
      statusCode: a.statusCode ?? null,
      durationMs: a.durationMs,
      error: a.error ?? null,
    })),
    redeliveries: doc.redeliveries ?? 0,
    createdAt: (doc.createdAt as Date).toISOString(),
    updatedAt: (doc.updatedAt as Date).toISOString(),
  };
}

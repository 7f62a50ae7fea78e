// The webhook reads and delivery records the delivery activities need.
import { Types } from 'mongoose';
import type { CallEventName } from '../contracts/events';
import { Webhook, type WebhookDoc } from './models/webhook';
import { WebhookDelivery } from './models/webhook-delivery';

export type DeliveryState = 'delivered' | 'gone' | 'failed' | 'pending';

export interface DeliveryAttemptRecord {
  eventId: string;
  endpointKey: string;
  teamId: string;
  callId: string;
  webhookId: string | null;
  eventType: CallEventName;
  url: string;
  method: 'GET' | 'POST';
  state: DeliveryState;
  /** The event as sent, kept with the first attempt for redelivery. */
  event: { type: CallEventName; timestamp: string; data: Record<string, unknown> };
  attempt: { attempt: number; attemptedAt: Date; statusCode: number | null; durationMs: number; error: string | null };
}

export interface WebhookStore {
  forTeam(teamId: string): Promise<WebhookDoc[]>;
  /** Adds one attempt to the (event, endpoint) delivery record, creating it on the first. */
  recordAttempt(record: DeliveryAttemptRecord): Promise<void>;
}

/** Every event some webhook of the team subscribes to (`*` included as given). */
export async function teamWebhookEvents(teamId: string): Promise<string[]> {
  const hooks = await Webhook.find({ teamId }, { subscribedEvents: 1 }).lean();
  return [...new Set(hooks.flatMap((hook) => hook.subscribedEvents))];
}

export function createWebhookStore(): WebhookStore {
  return {
    forTeam: (teamId) => Webhook.find({ teamId }).lean<WebhookDoc[]>().exec(),
    async recordAttempt(record) {
      await WebhookDelivery.updateOne(
        { eventId: record.eventId, endpointKey: record.endpointKey },
        {
          $setOnInsert: {
            teamId: new Types.ObjectId(record.teamId),
            phoneCallId: new Types.ObjectId(record.callId),
            webhookId: record.webhookId ? new Types.ObjectId(record.webhookId) : null,
            eventType: record.eventType,
            url: record.url,
            method: record.method,
            event: record.event,
          },
          $set: { state: record.state },
          $push: { attempts: record.attempt },
        },
        { upsert: true },
      );
    },
  };
}

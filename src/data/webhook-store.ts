// The webhook reads and delivery records the delivery activities need.
import { Types } from 'mongoose';
import { readTogether } from '../concurrency/send-together';
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
  /** Shared with concurrent readers of the same team: not to be changed. */
  forTeam(teamId: string): Promise<readonly WebhookDoc[]>;
  /** Adds one attempt to the (event, endpoint) delivery record, creating it on the first. */
  recordAttempt(record: DeliveryAttemptRecord): Promise<void>;
}

/**
 * Every event some webhook of the team subscribes to (`*` included as given). Concurrent creates of a
 * team share the read (readTogether), and the answer: not to be changed.
 */
export const teamWebhookEvents: (teamId: string) => Promise<readonly string[]> = readTogether(async (teamId) => {
  const hooks = await Webhook.find({ teamId }, { subscribedEvents: 1 }).lean();
  return [...new Set(hooks.flatMap((hook) => hook.subscribedEvents))];
});

/**
 * A team's webhooks, the read shared by the deliveries that ask for the same team's while one is under
 * way (a campaign's calls change status together): they only read the answer.
 */
const teamWebhooks = readTogether((teamId) => Webhook.find({ teamId }).lean<WebhookDoc[]>().exec());

export function createWebhookStore(): WebhookStore {
  return {
    forTeam: teamWebhooks,
    async recordAttempt(record) {
      await WebhookDelivery.updateOne(
        { eventId: record.eventId, endpointKey: record.endpointKey },
        {
          $setOnInsert: {
            teamId: new Types.ObjectId(record.teamId),
            phoneCallId: new Types.ObjectId(record.callId),
            webhookId: record.webhookId ? new Types.ObjectId(record.webhookId) : null,
            eventType: record.eventType,
            event: record.event,
            // When the first attempt began, not when it ended (a receiver may hang for 15 s): the
            // deliveries list oldest first.
            createdAt: record.attempt.attemptedAt,
          },
          // Where the latest attempt went: a team webhook's PATCH applies from the next attempt.
          $set: { state: record.state, url: record.url, method: record.method },
          $push: { attempts: record.attempt },
        },
        // The first attempt's time kept as createdAt (Mongoose would set the write's own).
        { upsert: true, overwriteImmutable: true },
      );
    },
  };
}

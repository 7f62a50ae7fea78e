// The webhook reads and delivery records the delivery activities need.
import { Types } from 'mongoose';
import { readTogether } from '../concurrency/send-together';
import type { CallEventName } from '../contracts/events';
import { isDuplicateKeyOnly } from './duplicate-key';
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
  /** Where this write stands among the record's writes (deliveryWriteOrder): a later one wins the state. */
  writeOrder: number;
}

/** An activity's tries per attempt are far fewer (the delivery workflow allows ten). */
const TRIES_PER_PHASE = 1_000;
const PHASES_PER_ATTEMPT = 2;
/** Attempts of one stream or redelivery are far fewer (its retry schedule has about a dozen). */
const ATTEMPTS_PER_RUN = 100_000;

/**
 * Orders the writes to one delivery record as they are made: by the run that made them (the call's
 * stream, 0, then each redelivery by its number, which an operator starts only once the record is no
 * longer pending); within one, by attempt; within one attempt, the activity that made it (`made`)
 * before the one noting it could not be (it runs only after the former gave up); within one
 * activity, by its try. A write of a try the server gave up on (its activity timed out, its store
 * slow) can land after a later one, and must not take the record back to what the earlier one saw.
 * By run first, because a redelivery numbers its attempts from the record's count of them, which a
 * stream whose every write of some attempt failed leaves below that stream's last number.
 */
export function deliveryWriteOrder(run: number, attempt: number, made: boolean, activityTry: number): number {
  const attemptOfRun = run * ATTEMPTS_PER_RUN + Math.min(attempt, ATTEMPTS_PER_RUN - 1);
  return (
    (attemptOfRun * PHASES_PER_ATTEMPT + (made ? 0 : 1)) * TRIES_PER_PHASE + Math.min(activityTry, TRIES_PER_PHASE - 1)
  );
}

/** Tries of a write that racing first inserts of the record refuse (FerretDB refuses the losing one). */
const RECORD_TRIES = 5;

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
      const key = { eventId: record.eventId, endpointKey: record.endpointKey };
      for (let tries = 1; ; tries++) {
        try {
          // Applied unless a later write is on the record already (which a write of the same try
          // would be too: no try writes twice).
          await WebhookDelivery.updateOne(
            { ...key, $or: [{ writeOrder: { $lt: record.writeOrder } }, { writeOrder: { $exists: false } }] },
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
              $set: { state: record.state, url: record.url, method: record.method, writeOrder: record.writeOrder },
              $push: { attempts: record.attempt },
            },
            // The first attempt's time kept as createdAt (Mongoose would set the write's own).
            { upsert: true, overwriteImmutable: true },
          );
          return;
        } catch (err) {
          // The record exists and the filter did not match it: a later write is on it, or a racing
          // first insert won just now (then the next pass applies).
          if (!isDuplicateKeyOnly(err) || tries >= RECORD_TRIES) throw err;
        }
        // A later write holds the state: this attempt is only added to the record, which lists it
        // where its time puts it (webhook-delivery-view.ts).
        const added = await WebhookDelivery.updateOne(
          { ...key, writeOrder: { $gt: record.writeOrder } },
          { $push: { attempts: record.attempt }, $min: { createdAt: record.attempt.attemptedAt } },
          { overwriteImmutable: true },
        );
        if (added.matchedCount > 0) return;
        if (await WebhookDelivery.exists({ ...key, writeOrder: record.writeOrder })) return;
      }
    },
  };
}

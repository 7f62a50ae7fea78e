// `webhooks deliveries`: every event sent (or being sent) to a call's webhook endpoints, with each
// attempt's answer, as the delivery workflows recorded them.
import { Types } from 'mongoose';
import { WebhookDelivery } from '../data/models/webhook-delivery';
import { CommandError, requireTeam } from './commands';

export async function listWebhookDeliveries(input: { team: string; call: string | undefined }) {
  const team = await requireTeam(input.team);
  if (!input.call || !Types.ObjectId.isValid(input.call)) throw new CommandError('--call must be a phone call id');
  const deliveries = await WebhookDelivery.find({
    teamId: team._id,
    phoneCallId: new Types.ObjectId(input.call),
  }).lean();
  // A call has a handful of events per endpoint: sorted here rather than by the store (FerretDB sorts in memory anyway).
  deliveries.sort((a, b) => (a.createdAt as Date).getTime() - (b.createdAt as Date).getTime());
  return {
    phoneCallId: input.call,
    deliveries: deliveries.map((d) => ({
      eventType: d.eventType,
      webhookId: d.eventId,
      endpoint: `${d.method} ${d.url}`,
      state: d.state,
      attempts: d.attempts.map((a) => ({
        attempt: a.attempt,
        at: a.attemptedAt.toISOString(),
        status: a.statusCode ?? null,
        durationMs: a.durationMs,
        ...(a.error ? { error: a.error } : {}),
      })),
    })),
  };
}

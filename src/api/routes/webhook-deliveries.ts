// What happened to a call's webhook events, and an operator's redelivery of one of them.
import Router from '@koa/router';
import { isObjectIdHex } from '../../contracts/ids';
import { PhoneCall } from '../../data/models/phone-call';
import { MAX_DELIVERIES_PER_CALL, WebhookDelivery, type WebhookDeliveryDoc } from '../../data/models/webhook-delivery';
import { toWebhookDeliveryView } from '../../data/webhook-delivery-view';
import { RedeliveryRefused, type Redelivery } from '../../webhooks/redelivery';
import { authOf, requireScope } from '../auth';
import { badRequest, notFound } from '../errors';
import type { RequestState } from '../state';
import { assertNoBodyFields } from '../validation';

export function createWebhookDeliveriesRouter(deps: { redelivery: Redelivery }): Router {
  const router = new Router<RequestState>({ prefix: '/v1' });

  router.get('/phoneCalls/:id/webhookDeliveries', requireScope('webhooks:read'), async (ctx) => {
    const auth = authOf(ctx);
    const id = ctx.params.id.toLowerCase();
    if (!isObjectIdHex(id)) throw notFound(`phone call ${ctx.params.id} not found`);
    const [call, deliveries] = await Promise.all([
      PhoneCall.exists({ _id: id, teamId: auth.teamId }),
      // Sorted before the limit, oldest first, ties by id: past the limit the oldest are listed, not
      // whichever the store met first (a call has few; FerretDB sorts them in memory).
      WebhookDelivery.find({ teamId: auth.teamId, phoneCallId: id })
        .sort({ createdAt: 1, _id: 1 })
        .limit(MAX_DELIVERIES_PER_CALL)
        .lean<WebhookDeliveryDoc[]>(),
    ]);
    // A deleted call's deliveries (its phoneCall.deleted among them) stay readable, to be redelivered.
    // Both reads are the key's team's alone: another team's call is as unknown as one that never was.
    if (!call && !deliveries.length) throw notFound(`phone call ${ctx.params.id} not found`);
    ctx.body = { data: deliveries.map(toWebhookDeliveryView) };
  });

  router.post('/webhookDeliveries/:id/redeliver', requireScope('webhooks:write'), async (ctx) => {
    const auth = authOf(ctx);
    assertNoBodyFields(ctx.request.body);
    try {
      const claimed = await deps.redelivery.redeliver(auth.teamId, ctx.params.id);
      ctx.status = 202;
      ctx.body = { data: toWebhookDeliveryView(claimed) };
    } catch (err) {
      if (!(err instanceof RedeliveryRefused)) throw err;
      throw err.reason === 'not-found' ? notFound(err.message) : badRequest(err.message);
    }
  });

  return router;
}

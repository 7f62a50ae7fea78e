// Endpoints 1-3: create, read and update a team's webhooks. The secret is generated here, stored
// sealed, and shown only in the create answer.
import Router from '@koa/router';
import type { z } from 'zod';
import type { SubscribedEvent } from '../../contracts/events';
import { isObjectIdHex } from '../../contracts/ids';
import type { SecretBox } from '../../crypto/secret-box';
import { Webhook, type WebhookDoc } from '../../data/models/webhook';
import { generateWebhookSecret } from '../../webhooks/signing';
import { webhookUrlProblem } from '../../webhooks/url-policy';
import { assertOwnTeam, authOf, requireScope } from '../auth';
import { badRequest, notFound } from '../errors';
import type { webhookCreatedViewSchema, webhookViewSchema } from '../../schemas/responses';
import { webhookCreateSchema, webhookUpdateSchema } from '../../schemas/webhooks';
import { parseOrThrow } from '../validation';
import type { RequestState } from '../state';

export type WebhookView = z.output<typeof webhookViewSchema>;
type WebhookCreatedView = z.output<typeof webhookCreatedViewSchema>;

export function toWebhookView(doc: WebhookDoc): WebhookView {
  return {
    _id: doc._id.toHexString(),
    teamId: doc.teamId.toHexString(),
    url: doc.url,
    // Validated as event names on create and update.
    subscribedEvents: [...doc.subscribedEvents] as SubscribedEvent[],
    method: doc.method,
    createAt: (doc.createAt ?? new Date(0)).toISOString(),
    updatedAt: (doc.updatedAt ?? new Date(0)).toISOString(),
  };
}

export function createWebhooksRouter(deps: {
  secretBox: SecretBox;
  allowPrivateUrls: boolean;
  /** MAX_WEBHOOKS_PER_TEAM (0: no cap): each call runs one delivery stream per endpoint of its team. */
  maxPerTeam: number;
}): Router {
  const router = new Router<RequestState>({ prefix: '/v1/webhooks' });

  async function assertDeliverable(url: string): Promise<void> {
    const problem = await webhookUrlProblem(url, deps.allowPrivateUrls);
    if (problem) throw badRequest(`url ${problem}`);
  }

  async function findOwn(teamId: string, id: string) {
    const key = id.toLowerCase();
    const doc = isObjectIdHex(key) ? await Webhook.findOne({ _id: key, teamId }).lean() : null;
    if (!doc) throw notFound(`webhook ${id} not found`);
    return doc;
  }

  router.post('/', requireScope('webhooks:write'), async (ctx) => {
    const auth = authOf(ctx);
    const input = parseOrThrow(webhookCreateSchema, ctx.request.body);
    assertOwnTeam(auth, input.teamId);
    // A soft cap: counted before the insert, so creates racing each other may pass it by a few.
    if (deps.maxPerTeam > 0 && (await Webhook.countDocuments({ teamId: input.teamId })) >= deps.maxPerTeam) {
      throw badRequest(
        `a team has at most ${deps.maxPerTeam} webhooks; change one of them (PATCH /v1/webhooks/{_id}) instead of adding another`,
      );
    }
    await assertDeliverable(input.url);
    const secret = generateWebhookSecret();
    const created = await new Webhook({
      teamId: input.teamId,
      url: input.url,
      subscribedEvents: [...input.subscribedEvents],
      method: input.method,
      secretSealed: deps.secretBox.seal(secret),
    }).save();
    ctx.status = 200;
    ctx.body = { data: { ...toWebhookView(created.toObject()), secret } satisfies WebhookCreatedView };
  });

  router.get('/:id', requireScope('webhooks:read'), async (ctx) => {
    const auth = authOf(ctx);
    ctx.body = { data: toWebhookView(await findOwn(auth.teamId, ctx.params.id)) };
  });

  router.patch('/:id', requireScope('webhooks:write'), async (ctx) => {
    const auth = authOf(ctx);
    const existing = await findOwn(auth.teamId, ctx.params.id);
    const changes = parseOrThrow(webhookUpdateSchema, ctx.request.body);
    if (changes.url) await assertDeliverable(changes.url);
    const set: Record<string, unknown> = { ...changes };
    const updated = await Webhook.findByIdAndUpdate(
      existing._id,
      { $set: set },
      { returnDocument: 'after' },
    ).lean<WebhookDoc>();
    if (!updated) throw notFound(`webhook ${ctx.params.id} not found`);
    ctx.body = { data: toWebhookView(updated) };
  });

  return router;
}

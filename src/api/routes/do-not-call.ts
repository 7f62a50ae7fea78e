// A team's do-not-call list: list, add one or many, remove. Create refuses listed numbers and the
// dial activity checks the list again right before every dial.
import Router from '@koa/router';
import type { DoNotCallList } from '../../data/do-not-call-store';
import { toDoNotCallEntryView } from '../../data/do-not-call-view';
import { e164 } from '../../schemas/common';
import { doNotCallAddSchema, doNotCallListQuerySchema } from '../../schemas/do-not-call';
import { assertOwnTeam, authOf, requireScope } from '../auth';
import { badRequest, notFound } from '../errors';
import { decodeCursor, encodeCursor } from '../pagination';
import { parseOrThrow, parseQueryOrThrow } from '../validation';
import type { RequestState } from '../state';

export function createDoNotCallRouter(deps: { list: DoNotCallList }): Router {
  const router = new Router<RequestState>({ prefix: '/v1/doNotCall' });

  router.get('/', requireScope('dnc:read'), async (ctx) => {
    const auth = authOf(ctx);
    const query = parseQueryOrThrow(doNotCallListQuerySchema, ctx.query);
    const { entries, hasMore } = await deps.list.page(auth.teamId, {
      limit: query.limit,
      after: query.cursor ? decodeCursor(query.cursor) : undefined,
      phoneNumber: query.phoneNumber,
    });
    const last = entries[entries.length - 1];
    ctx.body = {
      data: entries.map(toDoNotCallEntryView),
      nextCursor: hasMore && last ? encodeCursor({ at: last.createdAt, id: last._id.toHexString() }) : null,
    };
  });

  router.post('/', requireScope('dnc:write'), async (ctx) => {
    const auth = authOf(ctx);
    const input = parseOrThrow(doNotCallAddSchema, ctx.request.body);
    assertOwnTeam(auth, input.teamId);
    const { entries, added } = await deps.list.add(auth.teamId, input.entries, { source: 'api', keyId: auth.keyId });
    ctx.body = { data: entries.map(toDoNotCallEntryView), added };
  });

  router.delete('/:phoneNumber', requireScope('dnc:write'), async (ctx) => {
    const auth = authOf(ctx);
    const parsed = e164.safeParse(ctx.params.phoneNumber);
    if (!parsed.success) throw badRequest('phoneNumber must be a valid E.164 phone number');
    const removed = await deps.list.remove(auth.teamId, parsed.data);
    if (!removed) throw notFound(`${parsed.data} is not on the team's do-not-call list`);
    ctx.body = { data: toDoNotCallEntryView(removed) };
  });

  return router;
}

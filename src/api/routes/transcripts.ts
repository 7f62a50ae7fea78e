// Endpoint 10: one record per utterance, in spoken order, only the key's team's.
import Router from '@koa/router';
import type { QueryFilter } from 'mongoose';
import { z } from 'zod';
import { Transcript, type TranscriptDoc } from '../../data/models/transcript';
import { toTranscriptView } from '../../data/transcript-view';
import { authOf, requireScope } from '../auth';
import { decodeCursor, encodeCursor } from '../pagination';
import { objectId, pageCursor, pageLimit } from '../../schemas/common';
import { parseQueryOrThrow } from '../validation';
import type { RequestState } from '../state';

const querySchema = z.strictObject({
  phoneCallId: objectId.optional(),
  limit: pageLimit,
  cursor: pageCursor,
});

export function createTranscriptsRouter(): Router {
  const router = new Router<RequestState>({ prefix: '/v1/transcripts' });
  router.get('/', requireScope('transcripts:read'), async (ctx) => {
    const auth = authOf(ctx);
    const query = parseQueryOrThrow(querySchema, ctx.query);
    const filter: QueryFilter<TranscriptDoc> = { teamId: auth.teamId };
    if (query.phoneCallId) filter.phoneCallId = query.phoneCallId;
    if (query.cursor) {
      const position = decodeCursor(query.cursor);
      filter.$or = [{ createdAt: { $gt: position.at } }, { createdAt: position.at, _id: { $gt: position.id } }];
    }
    const docs = await Transcript.find(filter)
      .sort({ createdAt: 1, _id: 1 })
      .limit(query.limit + 1)
      .lean();
    const page = docs.slice(0, query.limit);
    const last = page[page.length - 1];
    ctx.body = {
      data: page.map((doc) => toTranscriptView(doc)),
      nextCursor:
        docs.length > query.limit && last ? encodeCursor({ at: last.createdAt, id: last._id.toHexString() }) : null,
    };
  });
  return router;
}

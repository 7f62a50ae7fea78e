// Endpoint 10: one record per utterance, in spoken order, only the key's team's: one call's by the
// call, a team's through its time slices (src/data/transcript-list.ts).
import Router from '@koa/router';
import { Types, type QueryFilter } from 'mongoose';
import { z } from 'zod';
import { Transcript, type TranscriptDoc } from '../../data/models/transcript';
import { readTeamTranscriptPage, type TranscriptPosition } from '../../data/transcript-list';
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
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const { rows, more } = query.phoneCallId
      ? await readCallTranscriptPage(auth.teamId, query.phoneCallId, after, query.limit)
      : await readTeamTranscriptPage(new Types.ObjectId(auth.teamId), after, query.limit);
    const last = rows[rows.length - 1];
    ctx.body = {
      data: rows.map((doc) => toTranscriptView(doc)),
      nextCursor: more && last ? encodeCursor({ at: last.createdAt, id: last._id.toHexString() }) : null,
    };
  });
  return router;
}

/** One call's rows: few, so one read by the call (an index on both stores) sorted in the query. */
async function readCallTranscriptPage(
  teamId: string,
  phoneCallId: string,
  after: TranscriptPosition | undefined,
  limit: number,
): Promise<{ rows: TranscriptDoc[]; more: boolean }> {
  const filter: QueryFilter<TranscriptDoc> = { teamId, phoneCallId };
  if (after) filter.$or = [{ createdAt: { $gt: after.at } }, { createdAt: after.at, _id: { $gt: after.id } }];
  const docs = await Transcript.find(filter)
    .sort({ createdAt: 1, _id: 1 })
    .limit(limit + 1)
    .lean<TranscriptDoc[]>();
  return { rows: docs.slice(0, limit), more: docs.length > limit };
}

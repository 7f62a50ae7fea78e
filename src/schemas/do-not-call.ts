// Requests of the do-not-call list endpoints (src/api/routes/do-not-call.ts).
import { z } from 'zod';
import { e164, objectId, pageCursor, pageLimit, text } from './common';

/** Numbers one request may add: enough for a day's opt-outs; the CLI imports larger files in parts. */
export const MAX_DNC_ADD = 1000;

const entry = z.strictObject({
  phoneNumber: e164,
  reason: text().max(500, 'must be at most 500 characters').optional(),
});

export const doNotCallAddSchema = z.strictObject({
  teamId: objectId,
  entries: z
    .array(entry, { error: 'must be an array' })
    .min(1, 'must have at least 1 element')
    .max(MAX_DNC_ADD, `must have at most ${MAX_DNC_ADD} elements`),
});
export type DoNotCallAddInput = z.output<typeof doNotCallAddSchema>;

export const doNotCallListQuerySchema = z.strictObject({
  phoneNumber: e164.optional(),
  limit: pageLimit,
  cursor: pageCursor,
});

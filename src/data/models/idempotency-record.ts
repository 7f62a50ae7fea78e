import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

const idempotencyRecordSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, required: true },
    /** Which operation the key was used for (`POST /v1/phoneCalls`, ...). */
    scope: { type: String, required: true },
    key: { type: String, required: true },
    /** SHA-256 of the canonical request body: the same key with another body is refused. */
    requestHash: { type: String, required: true },
    state: { type: String, enum: ['pending', 'done'], required: true },
    responseStatus: { type: Number },
    responseBody: { type: Schema.Types.Mixed },
    createdAt: { type: Date, required: true },
    /**
     * Until when the request holding a `pending` key is known to be alive (it extends this while it
     * works); past it, a retry takes the key over. Records from before leases have none.
     */
    leaseUntil: { type: Date },
    /** The dispatch batch the holding request writes its calls under: a takeover finishes or discards it. */
    dispatchBatchId: { type: Schema.Types.ObjectId },
  },
  { minimize: false },
);
idempotencyRecordSchema.index({ teamId: 1, scope: 1, key: 1 }, { unique: true });
// Real MongoDB expires records itself; lookups also ignore records older than the window.
idempotencyRecordSchema.index({ createdAt: 1 }, { expireAfterSeconds: IDEMPOTENCY_WINDOW_MS / 1000 });

export type IdempotencyRecordDoc = InferSchemaType<typeof idempotencyRecordSchema> & { _id: Types.ObjectId };
export const IdempotencyRecord = model('IdempotencyRecord', idempotencyRecordSchema);

// A retry's claim to take one claim of a key over (a dead request's, or an expired one), held while
// it rewrites the key's record: `_id` `<team>:<scope>:<key>:<claimed-at ms>`, so of retries arriving
// together exactly one inserts it (a unique `_id` holds on FerretDB as on MongoDB, where two
// conditional updates of one record can both apply on FerretDB 1.x). Removed once the record is
// rewritten; one left by a process that died in between is removed by the next retry once it is a
// lease old (idempotency.ts), and expires after an hour on MongoDB.
const idempotencyTakeoverSchema = new Schema({
  _id: { type: String, required: true },
  createdAt: { type: Date, required: true },
});
const TAKEOVER_KEPT_MS = 60 * 60 * 1000;
idempotencyTakeoverSchema.index({ createdAt: 1 }, { expireAfterSeconds: TAKEOVER_KEPT_MS / 1000 });
export const IdempotencyTakeover = model('IdempotencyTakeover', idempotencyTakeoverSchema);

/**
 * Removes keys past their window and takeover claims past their hour, as MongoDB's TTL indexes do
 * (FerretDB has none, and kept every key's stored answer, with its callees' names and numbers, for
 * ever); returns how many. Lookups ignore such records already: none is needed any more.
 */
export async function sweepIdempotencyRecords(now = new Date()): Promise<number> {
  const [records, takeovers] = await Promise.all([
    IdempotencyRecord.deleteMany({ createdAt: { $lt: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) } }),
    IdempotencyTakeover.deleteMany({ createdAt: { $lt: new Date(now.getTime() - TAKEOVER_KEPT_MS) } }),
  ]);
  return records.deletedCount + takeovers.deletedCount;
}

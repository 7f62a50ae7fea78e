import { Schema, model, type Types } from 'mongoose';

// A queued call deleted from its dispatch batch (DELETE, a batch's or a file's cancel). A batch still
// pending is known to be written whole when its calls and these notes together make its size
// (src/calls/dispatch.ts). Insert-only, `_id` the call's id: concurrent deletes never touch one
// document (FerretDB 1.x loses one of two racing updates of a document, so a count on the batch
// went wrong), and a retried delete notes its call once.
const batchCallDeletionSchema = new Schema(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    dispatchBatchId: { type: Schema.Types.ObjectId, required: true },
    deletedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
batchCallDeletionSchema.index({ dispatchBatchId: 1 });
// A batch is pending for minutes; past the time a started batch is kept (a day and an hour) nothing
// reads these. MongoDB expires them; the worker's reconciler removes them on FerretDB.
export const BATCH_CALL_DELETION_KEPT_MS = 25 * 60 * 60 * 1000;
batchCallDeletionSchema.index({ deletedAt: 1 }, { expireAfterSeconds: BATCH_CALL_DELETION_KEPT_MS / 1000 });

export const BatchCallDeletion = model('BatchCallDeletion', batchCallDeletionSchema);

/** Notes that a queued call of the batch is being deleted (again: no change). */
export async function noteDeletedFromBatch(callId: Types.ObjectId, dispatchBatchId: Types.ObjectId): Promise<void> {
  await BatchCallDeletion.updateOne(
    { _id: callId },
    { $setOnInsert: { dispatchBatchId, deletedAt: new Date() } },
    { upsert: true },
  );
}

/** The calls of the batch deleted since they were written. */
export async function callsDeletedFromBatch(dispatchBatchId: Types.ObjectId): Promise<Types.ObjectId[]> {
  const notes = await BatchCallDeletion.find({ dispatchBatchId }, { _id: 1 }).lean();
  return notes.map((note) => note._id);
}

/** Removes notes older than BATCH_CALL_DELETION_KEPT_MS (FerretDB does not expire them); returns how many. */
export async function sweepBatchCallDeletions(now = new Date()): Promise<number> {
  const { deletedCount } = await BatchCallDeletion.deleteMany({
    deletedAt: { $lt: new Date(now.getTime() - BATCH_CALL_DELETION_KEPT_MS) },
  });
  return deletedCount;
}

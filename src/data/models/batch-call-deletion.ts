import { Schema, model, type Types } from 'mongoose';

// A queued call being deleted (DELETE, a batch's or a file's cancel), noted before its record goes.
// - A batch still pending is known to be written whole when its calls and these notes together make
//   its size (src/calls/dispatch.ts). Insert-only, `_id` the call's id: concurrent deletes never touch
//   one document (FerretDB 1.x loses one of two racing updates of a document, so a count on the batch
//   went wrong), and a retried delete notes its call once.
// - It keeps the call as it was (`call`, `ownWebhooks`): a retried delete whose first try removed the
//   record and lost its answer still has the call for its `phoneCall.deleted`.
const batchCallDeletionSchema = new Schema(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    // Absent for calls written before dispatch batches.
    dispatchBatchId: { type: Schema.Types.ObjectId },
    deletedAt: { type: Date, required: true },
    /** The call's read view as it was deleted (notes written since 2026-11-29). */
    call: { type: Schema.Types.Mixed },
    /** Its own webhooks, secrets sealed as on the call. */
    ownWebhooks: { type: [Schema.Types.Mixed], default: undefined },
  },
  { versionKey: false },
);
batchCallDeletionSchema.index({ dispatchBatchId: 1 });
// A batch is pending for minutes; past the time a started batch is kept (a day and an hour) nothing
// reads these. MongoDB expires them; the worker's reconciler removes them on FerretDB.
export const BATCH_CALL_DELETION_KEPT_MS = 25 * 60 * 60 * 1000;
batchCallDeletionSchema.index({ deletedAt: 1 }, { expireAfterSeconds: BATCH_CALL_DELETION_KEPT_MS / 1000 });

export const BatchCallDeletion = model('BatchCallDeletion', batchCallDeletionSchema);

/** Notes that a queued call (of the batch, if any) is being deleted, as it is now. */
export async function noteDeletedFromBatch(
  callId: Types.ObjectId,
  dispatchBatchId: Types.ObjectId | null | undefined,
  kept: { call?: Record<string, unknown>; ownWebhooks?: unknown[] } = {},
): Promise<void> {
  await BatchCallDeletion.updateOne(
    { _id: callId },
    {
      $setOnInsert: { ...(dispatchBatchId ? { dispatchBatchId } : {}), deletedAt: new Date() },
      // The call as this delete found it: a note left by an earlier delete that lost to a dial (the call
      // redialled and queued again since) holds an older copy.
      ...(kept.call ? { $set: kept } : {}),
    },
    { upsert: true },
  );
}

/** The call a deletion note kept, with its own webhooks (null: no note, or one from before they were kept). */
export async function callKeptByDeletion(
  callId: string,
): Promise<{ call: Record<string, unknown>; ownWebhooks: unknown[] } | null> {
  const note = await BatchCallDeletion.findById(callId, { call: 1, ownWebhooks: 1 }).lean();
  return note?.call ? { call: note.call as Record<string, unknown>, ownWebhooks: note.ownWebhooks ?? [] } : null;
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

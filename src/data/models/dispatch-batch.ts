import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

// The outbox of workflow starts: written `pending` before its calls, flipped to `started` (one
// single-document write, however many calls) once every call's workflow is known to exist. The
// worker's reconciler starts the workflows of batches left pending (a crash, Temporal unreachable).
const dispatchBatchSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, required: true },
    state: { type: String, enum: ['pending', 'started'], required: true, default: 'pending' },
    size: { type: Number, required: true },
  },
  { timestamps: true },
);
dispatchBatchSchema.index({ state: 1, createdAt: 1 });

export type DispatchBatchDoc = InferSchemaType<typeof dispatchBatchSchema> & { _id: Types.ObjectId; createdAt: Date };
export const DispatchBatch = model('DispatchBatch', dispatchBatchSchema);

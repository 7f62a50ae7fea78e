import { Schema, model, type Types } from 'mongoose';

// One per batch of a file (a `fileId` on the batch create): the highest list position its calls took.
// A page of one file starts its walk there instead of at the team's newest call, however many calls
// came after the file (src/data/call-list-query.ts). Written once, never updated: no race to lose.
const callListFileBlockSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, required: true },
    fileId: { type: String, required: true },
    top: { type: Number, required: true },
  },
  { versionKey: false },
);
callListFileBlockSchema.index({ teamId: 1, fileId: 1 });

export type CallListFileBlockDoc = { _id: Types.ObjectId; teamId: Types.ObjectId; fileId: string; top: number };
export const CallListFileBlock = model('CallListFileBlock', callListFileBlockSchema);

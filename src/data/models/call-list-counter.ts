import { Schema, model, type Types } from 'mongoose';

// One per team: the last list position handed out and when (src/data/call-list-positions.ts).
// `_id` is the team's id, so that every allocation is one single-document read and conditional write.
const callListCounterSchema = new Schema(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    /** The highest position handed out; a team's first call is position 1. */
    seq: { type: Number, required: true },
    /** The creation time given to the calls of the last allocation; each allocation's is later. */
    at: { type: Date, required: true },
    /** The lowest position in use: below 1 only for calls made before positions existed. */
    min: { type: Number, required: true, default: 1 },
  },
  { versionKey: false },
);

export type CallListCounterDoc = { _id: Types.ObjectId; seq: number; at: Date; min: number };
export const CallListCounter = model('CallListCounter', callListCounterSchema);

import { Schema, model } from 'mongoose';

// One per block of list positions handed out (src/data/call-list-positions.ts), keyed by the team and
// the block's first position. Inserted once, never updated: a unique `_id` is what settles a race
// between API processes for the same positions, on FerretDB 1.x too, whose conditional updates are
// not atomic. The blocks of a team form a chain (each starts where the one before it ended), which
// is the truth the team's counter only caches.
const callListBlockSchema = new Schema(
  {
    /** `<teamId>:<first position>`. */
    _id: { type: String, required: true },
    /** How many positions the block holds: `first` .. `first + count - 1`. */
    count: { type: Number, required: true },
    /** The creation time of every call of the block, later than the block's before it. */
    at: { type: Date, required: true },
  },
  { versionKey: false },
);

export type CallListBlockDoc = { _id: string; count: number; at: Date };
export const CallListBlock = model('CallListBlock', callListBlockSchema);

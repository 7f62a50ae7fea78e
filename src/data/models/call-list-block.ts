import { Schema, model } from 'mongoose';

// One per block of list positions handed out (src/data/call-list-positions.ts), keyed by the team and
// the block's first position. Inserted once, never updated: a unique `_id` is what settles a race
// between API processes for the same positions, on FerretDB 1.x too, whose conditional updates are
// not atomic. The blocks of a team form a chain (each starts where the one before it ended), which
// is the truth the team's counter only caches. Blocks a day old that the counter has passed are removed.
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
// Old blocks are removed by the worker's reconciler (src/data/call-list-block-sweep.ts), which must
// also check each team's counter, so no TTL index does it; this one serves its search on MongoDB.
callListBlockSchema.index({ at: 1 });

/**
 * A block is kept at least this long, and for as long as its team's counter has not reached it. The
 * tip of a team's list a process remembers is trusted for far less (call-list-positions.ts), so a
 * block that may still refuse a second creator of its positions is always there.
 */
export const LIST_BLOCK_KEPT_MS = 24 * 60 * 60 * 1000;

export type CallListBlockDoc = { _id: string; count: number; at: Date };
export const CallListBlock = model('CallListBlock', callListBlockSchema);

import { Schema, model } from 'mongoose';

/**
 * Calls waiting for a dial slot beyond what a team's pacer keeps in its own state
 * (workflows/team-pacer.ts). One document per waiter, numbered by the pacer; read back a page at a
 * time by an equality match on (teamId, page), which FerretDB pushes down to PostgreSQL.
 */
const dialQueueEntrySchema = new Schema(
  {
    /** `<teamId>:<seq>`: a retried write of the same waiter lands on the same document. */
    _id: { type: String, required: true },
    teamId: { type: String, required: true },
    page: { type: Number, required: true },
    seq: { type: Number, required: true },
    callId: { type: String, required: true },
    provider: { type: String, required: true },
    ticket: { type: Number, required: true },
  },
  { versionKey: false },
);
dialQueueEntrySchema.index({ teamId: 1, page: 1 });
// Waiters that withdrew are removed by call (a paused batch, calling hours closed).
dialQueueEntrySchema.index({ teamId: 1, callId: 1 });

export const DialQueueEntry = model('DialQueueEntry', dialQueueEntrySchema, 'dial_queue_entries');

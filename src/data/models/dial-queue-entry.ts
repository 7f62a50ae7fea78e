import { Schema, model } from 'mongoose';
import type { DialSlotRequest } from '../../contracts/pacing';

/**
 * Calls waiting for a dial slot beyond what a team's pacer keeps in its own state
 * (workflows/team-pacer.ts). One document per waiter, numbered by the pacer; read back a page at a
 * time by an equality match on (teamId, page), which FerretDB pushes down to PostgreSQL.
 */
const dialQueueEntrySchema = new Schema(
  {
    /** spilledWaiterId: a retried write, or the call's repeated request, lands on the same document. */
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

/**
 * `<teamId>:<callId>:<ticket>`: one entry per request, however often the call repeats it while it
 * waits (entries written before 2026-11-29 are `<teamId>:<seq>`, read back alike).
 */
export function spilledWaiterId(teamId: string, request: Pick<DialSlotRequest, 'callId' | 'ticket'>): string {
  return `${teamId}:${request.callId}:${request.ticket}`;
}

import { Schema, model, type Types } from 'mongoose';

// A provider call id seen in a verified callback about one of our calls, recorded by the API for the
// dial's retry: should a dial's own answer be lost (a timeout, a dropped connection), the retry finds
// the call placed here and does not dial again (a provider's search may no longer list a call that
// has ended). Insert-only, `_id` `<callId>:<providerCallId>`: the API never writes a call's record,
// which only its workflow writes, one write at a time (FerretDB 1.x rewrites a whole document on
// update without checking it is unchanged, so two writers would lose each other's changes).
const providerCallSightingSchema = new Schema(
  {
    _id: { type: String, required: true },
    callId: { type: Schema.Types.ObjectId, required: true },
    providerCallId: { type: String, required: true },
    seenAt: { type: Date, required: true },
  },
  { versionKey: false },
);
providerCallSightingSchema.index({ callId: 1 });
// A retried dial's search sets aside a provider call seen in another call's callbacks.
providerCallSightingSchema.index({ providerCallId: 1 });
// A dial's retries are over within minutes; MongoDB expires sightings after a day, and the worker's
// reconciler removes them on FerretDB, which has no TTL monitor (sweepProviderCallSightings).
export const SIGHTING_KEPT_MS = 24 * 60 * 60 * 1000;
providerCallSightingSchema.index({ seenAt: 1 }, { expireAfterSeconds: SIGHTING_KEPT_MS / 1000 });

export interface ProviderCallSightingDoc {
  _id: string;
  callId: Types.ObjectId;
  providerCallId: string;
  seenAt: Date;
}
export const ProviderCallSighting = model('ProviderCallSighting', providerCallSightingSchema);

/** Removes sightings older than SIGHTING_KEPT_MS (FerretDB does not expire them); returns how many. */
export async function sweepProviderCallSightings(now = new Date()): Promise<number> {
  const { deletedCount } = await ProviderCallSighting.deleteMany({
    seenAt: { $lt: new Date(now.getTime() - SIGHTING_KEPT_MS) },
  });
  return deletedCount;
}

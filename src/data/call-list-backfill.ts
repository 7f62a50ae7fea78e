// Calls stored before list positions existed get them once, when an API process starts: below every
// position handed out since (counting down from 0), in the order the API lists them, so they page
// exactly as before. A marker document records that it is done, so later starts skip the scan.
// Until the marker is written every start numbers all such calls again, those placed by a run cut
// short included (positions up to 0: the positions handed out since start at 1), the same way each
// time: a run that died halfway, or two processes starting together, leave each call one position of
// its own, in order. (Numbering only the calls still without one, a second run gave them positions
// the first had given newer calls: two calls per position, and pages that skipped calls.)
import mongoose, { Types } from 'mongoose';
import { listFields } from './call-list-positions';
import { newestFirst } from './call-list-query';
import { CallListCounter } from './models/call-list-counter';
import { PhoneCall } from './models/phone-call';

const MARKER_COLLECTION = 'migrations';
const MARKER_ID = 'phoneCallListPositions';
// FerretDB 1.x holds a PostgreSQL connection per update of a bulk write until the whole write ends:
// more updates than its pool (50) in one write wait on each other forever.
const WRITE_CHUNK = 25;

/** Returns how many calls it placed (0 when already done). */
export async function backfillListPositions(): Promise<number> {
  const markers = mongoose.connection.collection<{ _id: string; doneAt: Date }>(MARKER_COLLECTION);
  if (await markers.findOne({ _id: MARKER_ID })) return 0;
  const unplaced = await PhoneCall.find(
    { $or: [{ listSeq: { $exists: false } }, { listSeq: { $lte: 0 } }] },
    { teamId: 1, createdAt: 1 },
  ).lean<Array<{ _id: Types.ObjectId; teamId: Types.ObjectId; createdAt: Date }>>();
  const byTeam = new Map<string, typeof unplaced>();
  for (const call of unplaced) {
    const team = call.teamId.toHexString();
    const calls = byTeam.get(team);
    if (calls) calls.push(call);
    else byTeam.set(team, [call]);
  }
  for (const [team, calls] of byTeam) {
    // Newest first, as listed: the newest gets position 0, the oldest -(n - 1).
    calls.sort(newestFirst);
    for (let start = 0; start < calls.length; start += WRITE_CHUNK) {
      await PhoneCall.collection.bulkWrite(
        calls.slice(start, start + WRITE_CHUNK).map((call, offset) => ({
          updateOne: {
            filter: { _id: call._id, $or: [{ listSeq: { $exists: false } }, { listSeq: { $lte: 0 } }] },
            update: { $set: listFields(team, 0 - (start + offset) || 0) },
          },
        })),
        { ordered: false },
      );
    }
    const lowest = -(calls.length - 1);
    await CallListCounter.updateOne(
      { _id: new Types.ObjectId(team) },
      // A team without calls since gets a counter whose next block starts at 1 with a later time.
      { $min: { min: lowest }, $setOnInsert: { seq: 0, at: calls[0]!.createdAt } },
      { upsert: true },
    );
  }
  await markers.updateOne({ _id: MARKER_ID }, { $set: { doneAt: new Date() } }, { upsert: true });
  return unplaced.length;
}

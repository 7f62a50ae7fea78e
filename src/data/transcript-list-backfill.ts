// Transcript rows stored before time slices existed get theirs once, when an API process starts: their
// slices are registered, then each row is given its key (src/data/transcript-list.ts), so a team-wide
// page lists them as before. A marker document records that it is done, so later starts skip the
// scan. Idempotent: a run cut short, or two processes starting together, write the same values.
// Workers of the release before write rows without a key, so a deployment upgrades its workers first.
import mongoose, { type Types } from 'mongoose';
import { mapBounded } from '../concurrency/run-bounded';
import { Transcript } from './models/transcript';
import { registerTranscriptSlices, transcriptListKeys } from './transcript-list';

const MARKER_COLLECTION = 'migrations';
const MARKER_ID = 'transcriptListSlices';
/** Rows read and placed at a time: one scan of the rows without a key, this many in memory. */
const BATCH = 1_000;
// FerretDB 1.x holds a PostgreSQL connection per update of a bulk write until the whole write ends.
const WRITE_CHUNK = 25;
/** Calls whose parts of time are registered at once (each a bulk write of a few upserts). */
const REGISTERED_AT_ONCE = 4;

type Unplaced = { _id: Types.ObjectId; teamId: Types.ObjectId; phoneCallId: Types.ObjectId; createdAt: Date };

/** Returns how many rows it placed (0 when already done). */
export async function backfillTranscriptSlices(): Promise<number> {
  const markers = mongoose.connection.collection<{ _id: string; doneAt: Date }>(MARKER_COLLECTION);
  if (await markers.findOne({ _id: MARKER_ID })) return 0;
  const unplaced = Transcript.collection
    .find({ listSlice: { $exists: false } }, { projection: { teamId: 1, phoneCallId: 1, createdAt: 1 } })
    .batchSize(BATCH);
  let placed = 0;
  let batch: Unplaced[] = [];
  for await (const row of unplaced) {
    batch.push(row as Unplaced);
    if (batch.length === BATCH) {
      placed += await place(batch);
      batch = [];
    }
  }
  placed += await place(batch);
  await markers.updateOne({ _id: MARKER_ID }, { $set: { doneAt: new Date() } }, { upsert: true });
  return placed;
}

async function place(batch: Unplaced[]): Promise<number> {
  // A row without a time has no part of time to be read in (none is written so: createdAt is given
  // by capture); it stays unplaced rather than stop every API start.
  const rows = batch.filter((row) => row.createdAt instanceof Date && !Number.isNaN(row.createdAt.getTime()));
  const byCall = new Map<string, Unplaced[]>();
  for (const row of rows) {
    const call = row.phoneCallId.toHexString();
    byCall.set(call, [...(byCall.get(call) ?? []), row]);
  }
  // A call's rows may fall in two batches: its counts are then of one batch's rows, an estimate low
  // by the rest, which costs a page a read more, never a row.
  await mapBounded([...byCall.values()], REGISTERED_AT_ONCE, (callRows) => {
    const { phoneCallId, teamId } = callRows[0]!;
    return registerTranscriptSlices(
      { _id: phoneCallId, teamId },
      callRows.map((row) => row.createdAt),
    );
  });
  for (let at = 0; at < rows.length; at += WRITE_CHUNK) {
    await Transcript.collection.bulkWrite(
      rows.slice(at, at + WRITE_CHUNK).map((row) => ({
        updateOne: {
          filter: { _id: row._id, listSlice: { $exists: false } },
          update: { $set: transcriptListKeys(row.teamId, row.createdAt) },
        },
      })),
      { ordered: false },
    );
  }
  return rows.length;
}

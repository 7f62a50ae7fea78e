// A team's transcripts in spoken order, read in parts of time so that no read sorts the whole team.
//
// FerretDB 1.x pushes equality filters down to PostgreSQL but sorts in memory: `find({teamId}).sort()`
// fetched and sorted every utterance of the team for each page (seconds at 100,000 calls). Each row
// now names the UTC day, the ten minutes and the minute it was said in (`listDay`, `listSlice`,
// `listMinute`), and a registry (`transcriptslices`) holds, under the team's root key, one document
// per month with rows, under it one per day with rows, and under that one per ten-minute slice with
// rows, with how many rows each call put there. A page reads the lists of the months and days it
// reaches, then rows in time order, each read an equality on one key and the team (an index on both
// stores): a quiet day whole, a busy day slice by slice, a busy slice minute by minute. Parts of time
// read one after another, each sorted, give the exact order. Capture registers a row's slice before
// it writes the row, and nothing registered is removed, so a page misses no row. The counts only
// choose the reads.
import { type mongo, type Types } from 'mongoose';
import { upsertRacingInserts } from './duplicate-key';
import { Transcript, type TranscriptDoc } from './models/transcript';
import { TranscriptSlice, type TranscriptSliceDoc } from './models/transcript-slice';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
export const TRANSCRIPT_SLICE_MS = 600_000;
/** A read expected to hold no more rows than this is never split (a read costs a round trip too). */
const SMALL_READ = 64;

/** A UTC month's number (months since January 1970, negative before) and its first instant. */
function monthOf(at: Date): { n: number; start: Date } {
  const [year, month] = [at.getUTCFullYear(), at.getUTCMonth()];
  return { n: (year - 1970) * 12 + month, start: new Date(Date.UTC(year, month, 1)) };
}
const floorTo = (at: Date, ms: number) => new Date(Math.floor(at.getTime() / ms) * ms);

export const TRANSCRIPT_SLICE_KEYS = {
  /** The parent of a team's months. */
  root: (team: string) => `${team}:months`,
  month: (team: string, at: Date) => `${team}:M:${monthOf(at).n}`,
  day: (team: string, at: Date) => `${team}:d:${Math.floor(at.getTime() / DAY_MS)}`,
  slice: (team: string, at: Date) => `${team}:s:${Math.floor(at.getTime() / TRANSCRIPT_SLICE_MS)}`,
  minute: (team: string, at: Date) => `${team}:m:${Math.floor(at.getTime() / MINUTE_MS)}`,
};

export interface TranscriptListKeys {
  listDay: string;
  listSlice: string;
  listMinute: string;
}

/** The keys a row said at `at` is read by: its day, its ten-minute slice, and its minute. */
export function transcriptListKeys(teamId: Types.ObjectId, at: Date): TranscriptListKeys {
  const team = teamId.toHexString();
  return {
    listDay: TRANSCRIPT_SLICE_KEYS.day(team, at),
    listSlice: TRANSCRIPT_SLICE_KEYS.slice(team, at),
    listMinute: TRANSCRIPT_SLICE_KEYS.minute(team, at),
  };
}

// FerretDB 1.x holds a PostgreSQL connection per update of a bulk write until the whole write ends:
// more updates than its pool (50) in one write would wait on each other.
const WRITE_CHUNK = 25;

/** The registry as the driver sees it, its string ids typed (Mongoose types a collection's ids as ObjectId). */
const sliceCollection = () => TranscriptSlice.collection as unknown as mongo.Collection<TranscriptSliceDoc>;
type SliceUpdate = mongo.AnyBulkWriteOperation<TranscriptSliceDoc>;

/**
 * Registers the months, days and slices of a call's rows (before the rows are written), with the
 * call's rows per slice. Idempotent: a retry, or an overlapping attempt, writes the same.
 */
export async function registerTranscriptSlices(
  call: { _id: Types.ObjectId; teamId: Types.ObjectId },
  said: readonly Date[],
): Promise<void> {
  const team = call.teamId.toHexString();
  const registered = new Map<string, { parent: string; start: Date; rows?: number }>();
  for (const at of said) {
    const [month, day, slice] = [
      TRANSCRIPT_SLICE_KEYS.month(team, at),
      TRANSCRIPT_SLICE_KEYS.day(team, at),
      TRANSCRIPT_SLICE_KEYS.slice(team, at),
    ];
    registered.set(month, { parent: TRANSCRIPT_SLICE_KEYS.root(team), start: monthOf(at).start });
    registered.set(day, { parent: month, start: floorTo(at, DAY_MS) });
    const rows = (registered.get(slice)?.rows ?? 0) + 1;
    registered.set(slice, { parent: day, start: floorTo(at, TRANSCRIPT_SLICE_MS), rows });
  }
  const counted = `counts.${call._id.toHexString()}`;
  await writeSliceUpdates(
    [...registered].map(([key, { parent, start, rows }]) =>
      upsertSlice(key, parent, start, rows === undefined ? undefined : { [counted]: rows }),
    ),
  );
}

function upsertSlice(key: string, parent: string, start: Date, set?: Record<string, number>): SliceUpdate {
  return {
    updateOne: {
      filter: { _id: key },
      update: { $setOnInsert: { parent, start }, ...(set && { $set: set }) },
      upsert: true,
    },
  };
}

async function writeSliceUpdates(updates: SliceUpdate[]): Promise<void> {
  for (let at = 0; at < updates.length; at += WRITE_CHUNK) {
    const chunk = updates.slice(at, at + WRITE_CHUNK);
    // Captures of calls said in the same slice insert it at once: the unique `_id` refuses all but one.
    await upsertRacingInserts(() => sliceCollection().bulkWrite(chunk, { ordered: false }));
  }
}

/** Takes a deleted call's rows off the counts of the slices they were in (after the rows are removed). */
export async function forgetTranscriptCounts(phoneCallId: Types.ObjectId, sliceKeys: Iterable<string>): Promise<void> {
  const field = `counts.${phoneCallId.toHexString()}`;
  await writeSliceUpdates(
    [...new Set(sliceKeys)].map((key) => ({
      updateOne: { filter: { _id: key }, update: { $unset: { [field]: '' } } },
    })),
  );
}

/** Where a page starts: after this row (a cursor's `createdAt` and `_id`), or at the team's first row. */
export interface TranscriptPosition {
  at: Date;
  id: string;
}

/** Lists of slices read at once, at most (doubling from one): a quiet team's page reaches far. */
const MAX_LISTS_AT_ONCE = 16;
/** Reads of rows made at once, at most. */
const MAX_READS_AT_ONCE = 16;

/**
 * A part of the team's time, earliest first: a month or a day whose contents are not known yet, or a
 * read of rows by one key (a day, a slice or a minute) with the rows its counts expect.
 */
type Part = { list: 'month' | 'day'; key: string; start: Date } | ReadPart;
interface ReadPart {
  list?: undefined;
  read: { listDay: string } | { listSlice: string } | { listMinute: string };
  start: Date;
  rows: number;
}

/**
 * The team's next `limit` rows in spoken order after `after`, and whether more follow. Every read
 * names one key: the team's root, a month, a day, a slice or a minute. The reads of rows are chosen
 * to hold about what the page still needs: a day read whole when its count is small, else its slices,
 * and a slice holding many more than needed read minute by minute.
 */
export async function readTeamTranscriptPage(
  teamId: Types.ObjectId,
  after: TranscriptPosition | undefined,
  limit: number,
): Promise<{ rows: TranscriptDoc[]; more: boolean }> {
  const team = teamId.toHexString();
  const need = limit + 1;
  const fromMs = after ? after.at.getTime() : -Infinity;
  const isAfter = (row: TranscriptDoc) =>
    !after ||
    row.createdAt.getTime() > fromMs ||
    (row.createdAt.getTime() === fromMs && row._id.toHexString() > after.id);
  // A part that ends at or before the cursor holds only rows before it.
  const notPassed = (start: Date, spanMs: number) => start.getTime() + spanMs > fromMs;
  const found: TranscriptDoc[] = [];
  const pending: Part[] = (await slicesUnder(TRANSCRIPT_SLICE_KEYS.root(team)))
    .filter((month) => nextMonth(month.start).getTime() > fromMs)
    .map((month) => ({ list: 'month', key: month._id, start: month.start }));
  let listsAtOnce = 1;
  while (found.length < need && pending.length) {
    const stillNeeded = need - found.length;
    // Months and days at the front: their lists, read at once, take their places.
    const listing: Array<Exclude<Part, ReadPart>> = [];
    for (const part of pending) {
      if (part.list === undefined || listing.length === listsAtOnce) break;
      listing.push(part);
    }
    if (listing.length) {
      listsAtOnce = Math.min(listsAtOnce * 2, MAX_LISTS_AT_ONCE);
      const lists = await Promise.all(listing.map((part) => slicesUnder(part.key)));
      const parts = listing.flatMap((part, n): Part[] => {
        const listed = lists[n]!;
        if (part.list === 'month')
          return listed
            .filter((day) => notPassed(day.start, DAY_MS))
            .map((day) => ({ list: 'day', key: day._id, start: day.start }));
        const slices = listed
          .filter((slice) => notPassed(slice.start, TRANSCRIPT_SLICE_MS))
          .map((slice) => ({ read: { listSlice: slice._id }, start: slice.start, rows: rowsOf(slice) }));
        // A day that holds about what the page still needs is read whole: all of it, the rows before
        // the cursor too, so it is counted whole.
        const rows = listed.reduce((sum, slice) => sum + rowsOf(slice), 0);
        return slices.length && rows <= Math.max(2 * stillNeeded, SMALL_READ)
          ? [{ read: { listDay: part.key }, start: part.start, rows }]
          : slices;
      });
      pending.splice(0, listing.length, ...parts);
      continue;
    }
    // Reads at the front, as many as the counts say the page still needs (one at least).
    const reading: ReadPart[] = [];
    let expected = 0;
    while (reading.length < MAX_READS_AT_ONCE && expected < stillNeeded) {
      const part = pending[0];
      if (!part || part.list !== undefined) break;
      pending.shift();
      if ('listSlice' in part.read && part.rows > Math.max(2 * (stillNeeded - expected), SMALL_READ)) {
        // Its minutes instead, those the cursor has not passed, each expected to hold a tenth.
        const count = TRANSCRIPT_SLICE_MS / MINUTE_MS;
        const minutes = Array.from({ length: count }, (_, i) => new Date(part.start.getTime() + i * MINUTE_MS));
        pending.unshift(
          ...minutes
            .filter((start) => notPassed(start, MINUTE_MS))
            .map((start) => ({
              read: { listMinute: TRANSCRIPT_SLICE_KEYS.minute(team, start) },
              start,
              rows: part.rows / count,
            })),
        );
        continue;
      }
      reading.push(part);
      expected += part.rows;
    }
    // The team named too: a key names it already, and a read never trusts that alone.
    const read = await Promise.all(
      reading.map((part) =>
        Transcript.find({ ...part.read, teamId })
          .lean<TranscriptDoc[]>()
          .exec(),
      ),
    );
    for (const rows of read) found.push(...rows.filter(isAfter).sort(spokenOrder));
  }
  return { rows: found.slice(0, limit), more: found.length > limit };
}

function nextMonth(start: Date): Date {
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

function rowsOf(slice: TranscriptSliceDoc): number {
  return Object.values(slice.counts ?? {}).reduce((sum, n) => sum + n, 0);
}

/** The slices registered under `parent`, earliest first. */
async function slicesUnder(parent: string): Promise<TranscriptSliceDoc[]> {
  const slices = await TranscriptSlice.find({ parent }).lean<TranscriptSliceDoc[]>().exec();
  return slices.sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** `createdAt` ascending, then `_id` ascending: the order GET /v1/transcripts answers in. */
function spokenOrder(a: TranscriptDoc, b: TranscriptDoc): number {
  const byTime = a.createdAt.getTime() - b.createdAt.getTime();
  if (byTime) return byTime;
  const [x, y] = [a._id.toHexString(), b._id.toHexString()];
  return x < y ? -1 : x > y ? 1 : 0;
}

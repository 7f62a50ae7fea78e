// A page of a team's calls, newest first (createdAt desc, _id desc), read as a few small
// equality-filtered slices walking down the team's list positions (src/data/call-list-positions.ts).
//
// Why slices: FerretDB 1.x pushes equality filters down to PostgreSQL but sorts every matching
// document in memory, at about a third of a millisecond each, so "the team's calls, sorted, first
// 100" costs seconds at 100,000 calls. A slice is an equality filter on one list key (and the page's
// filters), so each read returns at most a slice of documents, found by index on either store.
//
// Why it is exact: positions order calls as the API does (see call-list-positions.ts), so every call
// below the lowest position read sorts after every call read. The walk can stop as soon as it holds
// one more matching call than the page needs, and sorting what it read gives the page.
//
// Which slice next: the walk reads aligned slices only (never a document twice) and picks the largest
// one whose expected matches (by the density seen so far) do not exceed what is still needed, growing
// at most fourfold per read. A dense page reads a handful of 32-position slices; a rare filter climbs
// to large slices in a few cheap index lookups; a large read that meets a dense stretch stops early
// and the stretch is read again in smaller slices.
import { Types, type QueryFilter } from 'mongoose';
import { CallListCounter, type CallListCounterDoc } from './models/call-list-counter';
import { CallListFileBlock } from './models/call-list-file-block';
import { PhoneCall, type PhoneCallDoc } from './models/phone-call';
import { LIST_SLICE_SIZES, followListBlocks, listKey, type ListFilterField, type ListTip } from './call-list-positions';

/** Where a page ends: the sort keys of its last call, and its list position when known. */
export interface ListPosition {
  at: Date;
  id: string;
  seq?: number;
}

export interface CallPageQuery {
  teamId: Types.ObjectId;
  equals: Partial<Record<ListFilterField, string | Types.ObjectId>>;
  createdAfter?: Date;
  createdBefore?: Date;
  /** The previous page's end (its cursor). */
  after?: ListPosition;
  limit: number;
}

export interface CallPage {
  docs: PhoneCallDoc[];
  /** Where the next page starts, or null on the last page. */
  next: ListPosition | null;
  /** What the walk read, for logs and benchmarks. */
  reads: number;
}

const SMALLEST = LIST_SLICE_SIZES[0];
const LEVELS = LIST_SLICE_SIZES.length;
/** Time probes for createdBefore are at most this many (a binary search over 32-position slices). */
const MAX_PROBES = 40;
/** A read expected to find almost nothing stops after this many matches. */
const PROBE = 16;

/** The API's list order: `createdAt` descending, then `_id` descending. */
export const newestFirst = (a: { createdAt: Date; _id: Types.ObjectId }, b: { createdAt: Date; _id: Types.ObjectId }) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a._id.toHexString() < b._id.toHexString() ? 1 : -1);

function sortsAfter(doc: PhoneCallDoc, position: ListPosition): boolean {
  const t = doc.createdAt.getTime();
  const at = position.at.getTime();
  return t < at || (t === at && doc._id.toHexString() < position.id);
}

export async function findCallPage(query: CallPageQuery): Promise<CallPage> {
  // A page makes up to a few dozen small reads, so they go to the driver directly: through Mongoose
  // each cost about a millisecond more (casting, middleware), as much as the read itself on FerretDB.
  // The page's filters are cast once, by the schema, as Mongoose would cast them on every read.
  const calls = PhoneCall.collection;
  const counter = await CallListCounter.collection.findOne<CallListCounterDoc>({ _id: query.teamId });
  if (!counter) return { docs: [], next: null, reads: 1 };
  const team = query.teamId.toHexString();
  const lowest = counter.min;
  const pageFilter = PhoneCall.find().cast(PhoneCall, { teamId: query.teamId, ...query.equals });
  let reads = 1;
  const read = (filter: QueryFilter<PhoneCallDoc>, limit: number | undefined) => {
    reads++;
    return calls.find<PhoneCallDoc>({ ...pageFilter, ...filter }, limit ? { limit } : {}).toArray();
  };

  // The team's newest block: the counter's, or one after it that the counter does not show yet.
  // Read once, and only when needed: a later page's cursor usually bounds the walk by itself.
  let newest: ListTip | undefined;
  const newestBlock = async () =>
    (newest ??= await followListBlocks(team, { seq: counter.seq, at: counter.at }, () => reads++));

  // Exclusive upper bound of the positions still to read.
  let upper: number;
  if (query.after) {
    const position = await positionOf(query.after, query.teamId);
    // A cursor names a listed call, so its position is at most the newest: one past the counter is
    // checked against the chain (a cursor made up with a higher position must not start a walk there).
    upper = (position > counter.seq ? Math.min(position, (await newestBlock()).seq) : position) + 1;
  } else {
    upper = (await newestBlock()).seq + 1;
  }
  // A later page's cursor names a call created before `createdBefore` and its position, which then
  // bounds the walk lower than the search would: only a first page (or an old-form cursor) searches.
  const cursorBounds = query.after?.seq !== undefined && query.createdBefore && query.after.at < query.createdBefore;
  if (query.createdBefore && !cursorBounds) upper = Math.min(upper, await firstPositionAtOrAfter(query.createdBefore));
  if (query.equals.fileId !== undefined) {
    // A file's calls lie at or below the top of its newest batch (calls stored before files left
    // their blocks have positions below every block's).
    reads++;
    const blocks = await CallListFileBlock.collection
      .find<{ top: number }>({ teamId: query.teamId, fileId: String(query.equals.fileId) }, { projection: { top: 1 } })
      .toArray();
    if (blocks.length) upper = Math.min(upper, Math.max(...blocks.map((block) => block.top)) + 1);
  }

  const need = query.limit + 1;
  const found: PhoneCallDoc[] = [];
  let covered = 0;
  let lastSpan: number = SMALLEST;
  // After a read that stopped early, the next must be smaller than it.
  let sizeLimit = Infinity;
  // Matches per position in the last slice read (or at least, in one that stopped early).
  let densityHere = 0;
  let fewTried = false;
  let passedCreatedAfter = false;
  while (upper > lowest && found.length < need && !passedCreatedAfter) {
    const wanted = need - found.length;
    // Matches per position so far; before any read, a dense list is assumed.
    const density = Math.max(densityHere, covered === 0 ? 1 : (found.length + 1) / covered);
    let lo: number;
    let key: string | undefined;
    // A callee's number has a handful of calls in a team: its first read takes them all at once,
    // without a slice key. (Any other read names a slice: a key-less read returns every match of the
    // team, those above `upper` too, since a range of positions is no equality FerretDB passes on.)
    const fewExpected = !fewTried && covered === 0 && query.equals.toPhoneNumber !== undefined;
    if (fewExpected) {
      lo = lowest;
    } else {
      let level = 0;
      for (let l = 1; l < LEVELS; l++) {
        const size = LIST_SLICE_SIZES[l]!;
        if (upper % size !== 0 || size > lastSpan * 4 || size > sizeLimit || density * size > wanted) break;
        level = l;
      }
      const slice = Math.floor((upper - 1) / LIST_SLICE_SIZES[level]!);
      lo = Math.max(lowest, slice * LIST_SLICE_SIZES[level]!);
      key = listKey(team, level, slice);
    }
    // A read larger than the smallest slice stops early when it meets many more matches than
    // expected: a filter sparse above may be dense here (an old file under newer calls), and decoding
    // a whole dense slice costs far more than a few smaller reads. Stopping early is cheap: FerretDB
    // decodes only the documents it returns.
    const span = upper - lo;
    const cap =
      key === undefined || span > SMALLEST
        ? Math.min(wanted + 1, Math.max(PROBE, Math.ceil(2 * density * span)))
        : undefined;
    const docs = await read({ ...(key ? { listKeys: key } : {}), listSeq: { $gte: lo, $lt: upper } }, cap);
    if (cap !== undefined && docs.length >= cap) {
      // Denser than thought: read the same positions again in slices a quarter of this one or smaller.
      densityHere = cap / span;
      sizeLimit = span / 4;
      fewTried = true;
      continue;
    }
    // How dense the slice just read was: the next read stays small inside a dense region.
    densityHere = docs.length / span;
    sizeLimit = Infinity;
    for (const doc of docs) {
      if (query.createdAfter && doc.createdAt <= query.createdAfter) {
        // Everything further down is older still.
        passedCreatedAfter = true;
        continue;
      }
      if (query.createdBefore && doc.createdAt >= query.createdBefore) continue;
      if (query.after && !sortsAfter(doc, query.after)) continue;
      found.push(doc);
    }
    covered += upper - lo;
    lastSpan = upper - lo;
    upper = lo;
  }

  found.sort(newestFirst);
  const docs = found.slice(0, query.limit);
  const last = docs[docs.length - 1];
  const next =
    found.length > query.limit && last
      ? { at: last.createdAt, id: last._id.toHexString(), seq: last.listSeq ?? undefined }
      : null;
  return { docs, next, reads };

  /** The position of a cursor's call; a cursor without one (an older form) is found by its call. */
  async function positionOf(position: ListPosition, teamId: Types.ObjectId): Promise<number> {
    if (position.seq !== undefined) return position.seq;
    reads++;
    // Both cursor forms carry an id as this service writes them (pagination.ts).
    const doc = await calls.findOne<{ listSeq?: number }>(
      { _id: new Types.ObjectId(position.id), teamId },
      { projection: { listSeq: 1 } },
    );
    // Its call deleted since: walk from the top; the cursor's sort keys still place the page.
    return doc?.listSeq ?? (await newestBlock()).seq;
  }

  /**
   * An exclusive upper bound on the positions of calls created before `time`: a binary search over
   * the team's 32-position slices, each probed by one of its calls (created at or after `time` means
   * every later slice is too). A slice with no call left is taken as older, which only widens the walk.
   */
  async function firstPositionAtOrAfter(time: Date): Promise<number> {
    const tip = await newestBlock();
    // Every call is older: the newest block's time is the newest call's.
    if (tip.at < time) return tip.seq + 1;
    let low = Math.floor(lowest / SMALLEST);
    let high = Math.floor(tip.seq / SMALLEST) + 1; // slice `high` is past the newest call
    for (let probes = 0; low < high && probes < MAX_PROBES; probes++) {
      const mid = Math.floor((low + high) / 2);
      const probe = await probeSlice(mid);
      if (probe && probe.createdAt >= time) high = mid;
      else low = mid + 1;
    }
    // Slice `high` is the first whose probe was not older: it may still hold older calls.
    return (high + 1) * SMALLEST;
  }

  /**
   * One call of a 32-position slice: the one at its first position, else (deleted, or below the
   * team's first) any. Naming the position lets PostgreSQL drop the slice's other rows before
   * FerretDB decodes them: 1.7-1.9 ms a probe at 100,000 calls, against 2.0-2.4 ms for the slice.
   */
  async function probeSlice(slice: number): Promise<{ createdAt: Date } | null> {
    const filter = { teamId: query.teamId, listKeys: listKey(team, 0, slice) };
    reads++;
    const first = await calls.findOne<{ createdAt: Date }>(
      { ...filter, listSeq: slice * SMALLEST },
      { projection: { createdAt: 1 } },
    );
    if (first) return first;
    reads++;
    return calls.findOne<{ createdAt: Date }>(filter, { projection: { createdAt: 1 } });
  }
}

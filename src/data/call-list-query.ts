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
// Which slice next: the walk reads slices so that no two reads it keeps overlap, and picks the largest
// one whose expected matches (by the density seen so far, or by what this process last counted of the
// filter) do not exceed what is still needed, growing at most fourfold per read. A slice is aligned
// to its size, so one that reaches above where the walk stands is read only when it would decode at
// most a few calls again up there (the store filters positions after decoding): a rare filter climbs
// to large slices in a few reads, a dense one reads a handful of 32-position slices, and a large read
// that meets a dense stretch stops early and the stretch is read again in smaller slices. The slice
// below is read while the walk waits for the one above, planned from the density seen so far: on one
// request at a time the store then works on two reads at once. It costs the reads a page turns out
// not to need (the last one ahead, or one planned smaller than the walk would have chosen).
//
// A rare filter (a callee's number, a status few calls are in) is read otherwise: one query for every
// call it matches, as the plain "find, sort, limit" reads them, when this process has seen it match
// few (call-list-match-counts.ts). That decodes at most a page's worth of documents and saves the
// walk's reads, the team's counter among them.
import { Types, type QueryFilter } from 'mongoose';
import { CallListCounter, type CallListCounterDoc } from './models/call-list-counter';
import { CallListFileBlock } from './models/call-list-file-block';
import { PhoneCall, type PhoneCallDoc } from './models/phone-call';
import { knownMatchCount, matchCountKey, rememberMatchCount } from './call-list-match-counts';
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
/**
 * A slice that reaches above the walk's position is read when it would decode at most this many
 * calls again up there (the store filters positions after decoding): a rare filter then climbs to
 * large slices at once instead of through the smaller ones that align it, about a read per level.
 */
const REREAD_MAX = 4;
/**
 * A filter matching at most this many calls, or a page's worth if more, is read in one query: it
 * decodes no more documents than a walk would, in one read instead of a dozen. Past a page, the
 * documents decoded for nothing cost more than the reads saved: in-process at 100,000 calls on
 * FerretDB, pages of 100, 20 rounds alternating in one process, `status=cancelled` (195 matches) took
 * 77 ms p50 walked against 130 ms in one read; a callee's number (21 matches) 49 ms walked, 18 ms in
 * one read (an earlier walk).
 */
const ONE_READ_MIN = 64;
/** Below every list position (those of calls made before positions existed are below 1). */
const ANY_POSITION = { $gte: Number.MIN_SAFE_INTEGER };

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
  const team = query.teamId.toHexString();
  const pageFilter = PhoneCall.find().cast(PhoneCall, { teamId: query.teamId, ...query.equals });
  const need = query.limit + 1;
  let reads = 0;
  const read = (filter: QueryFilter<PhoneCallDoc>, limit: number | undefined) => {
    reads++;
    return calls.find<PhoneCallDoc>({ ...pageFilter, ...filter }, limit ? { limit } : {}).toArray();
  };
  /** Whether a call the page's filters matched belongs on this page (its times and cursor). */
  const onPage = (doc: PhoneCallDoc) =>
    !(query.createdAfter && doc.createdAt <= query.createdAfter) &&
    !(query.createdBefore && doc.createdAt >= query.createdBefore) &&
    !(query.after && !sortsAfter(doc, query.after));
  const pageOf = (found: PhoneCallDoc[]): CallPage => {
    found.sort(newestFirst);
    const docs = found.slice(0, query.limit);
    const last = docs[docs.length - 1];
    const next =
      found.length > query.limit && last
        ? { at: last.createdAt, id: last._id.toHexString(), seq: last.listSeq ?? undefined }
        : null;
    return { docs, next, reads };
  };

  // A rare filter: every call it matches in one read, unless there are more than one read takes (a
  // count gone stale), which the walk below then reads. Only with a filter: the team's calls alone
  // are no equality the stores index (on FerretDB that read would scan every team's calls).
  // A callee's number has a handful of calls in a team, so it is tried before any count is known.
  const countKey = matchCountKey(team, query.equals);
  const filtered = Object.keys(query.equals).length > 0;
  const oneReadMax = Math.max(ONE_READ_MIN, need);
  const expected = knownMatchCount(countKey)?.matches ?? (query.equals.toPhoneNumber !== undefined ? 0 : undefined);
  if (filtered && expected !== undefined && expected <= oneReadMax) {
    const matches = await read({ listSeq: ANY_POSITION }, oneReadMax + 1);
    rememberMatchCount(countKey, { matches: matches.length });
    if (matches.length <= oneReadMax) return pageOf(matches.filter(onPage));
  }

  reads++;
  const counter = await CallListCounter.collection.findOne<CallListCounterDoc>({ _id: query.teamId });
  if (!counter) return { docs: [], next: null, reads };
  const lowest = counter.min;

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
  const top = upper;
  // A first page starts at the newest position: nothing lies above it to read again.
  const emptyAbove = !query.after && !query.createdBefore && query.equals.fileId === undefined;

  const found: PhoneCallDoc[] = [];
  let covered = 0;
  /** Calls the filters matched in the positions covered, on the page or not: the filter's density. */
  let matched = 0;
  /** Their positions: how many a slice reaching back above the walk would decode again. */
  const matchedAt: number[] = [];
  let lastSpan: number = SMALLEST;
  // After a read that stopped early, the next must be smaller than it.
  let sizeLimit = Infinity;
  // Matches per position in the last slice read (or at least, in one that stopped early).
  let densityHere = 0;
  let passedCreatedAfter = false;

  /** Whether the walk knows anything of the filter's density: it read some, or this process counted it. */
  const known = (at: { covered: number }) => at.covered > 0 || priorDensity !== undefined;
  /** Matches per position in `covered` positions that held `matched`; before any read, what is known. */
  const densityOver = (matched: number, covered: number) =>
    covered === 0 ? (priorDensity ?? 1) : (matched + 1) / covered;

  /**
   * Plans the slice to read next from `upper` down, given what the walk has found (on the page) and
   * matched (every call it decoded) in the positions it covered, and starts its read.
   */
  const nextSlice = (at: {
    upper: number;
    found: number;
    matched: number;
    covered: number;
    densityHere: number;
    lastSpan: number;
  }) => {
    const wanted = need - at.found;
    const density = Math.max(at.densityHere, densityOver(at.matched, at.covered));
    let level = 0;
    for (let l = 1; l < LEVELS; l++) {
      const size = LIST_SLICE_SIZES[l]!;
      const sliceLo = Math.floor((at.upper - 1) / size) * size;
      if (size > at.lastSpan * 4 || size > sizeLimit || density * (at.upper - sliceLo) > wanted) break;
      // Unaligned only once something is known of the filter: a dense one's first read stays small.
      if (at.upper % size !== 0 && (!known(at) || rereadAbove(at.upper, sliceLo + size, density) > REREAD_MAX)) break;
      level = l;
    }
    const slice = Math.floor((at.upper - 1) / LIST_SLICE_SIZES[level]!);
    const lo = Math.max(lowest, slice * LIST_SLICE_SIZES[level]!);
    // A read larger than the smallest slice stops early when it meets three times the matches
    // expected: a filter sparse above may be dense here (an old file under newer calls), and decoding
    // a whole dense slice costs far more than a few smaller reads. Stopping early is cheap: FerretDB
    // decodes only the documents it returns. Short of that the slice is read whole, even past what
    // the page needs: a read given up costs every document it decoded, a few more cost little.
    const span = at.upper - lo;
    const cap = span > SMALLEST ? Math.max(PROBE, Math.ceil(3 * density * span)) : undefined;
    const docs = read({ listKeys: listKey(team, level, slice), listSeq: { $gte: lo, $lt: at.upper } }, cap);
    // A read given up (the walk ended, or re-planned) must not reject unhandled.
    docs.catch(() => undefined);
    return { lo, span, cap, docs };
  };

  /**
   * How many calls a slice reaching from below `from` up to `to` would decode again above `from`:
   * those the walk matched there, and above where it began (a later page's), as many as the density says.
   */
  function rereadAbove(from: number, to: number, density: number): number {
    let again = 0;
    for (const at of matchedAt) if (at >= from && at < to) again++;
    // Positions still being read (a read ahead is planned before the one above it returns).
    if (upper > from) again += density * (Math.min(upper, to) - from);
    if (to > top && !emptyAbove) again += density * (to - top);
    return again;
  }

  // What this process last saw of the filter sets the first read's size (else a dense list is assumed):
  // its density over the positions it was counted over, which stays right while the team grows.
  const knownCount = filtered ? knownMatchCount(countKey) : undefined;
  const priorDensity =
    knownCount === undefined
      ? undefined
      : Math.max(knownCount.matches, 1) / Math.max(1, knownCount.positions ?? (newest ?? counter).seq + 1 - lowest);
  let current =
    upper > lowest
      ? nextSlice({
          upper,
          found: 0,
          matched: 0,
          covered: 0,
          densityHere,
          lastSpan: priorDensity === undefined ? lastSpan : Infinity,
        })
      : null;
  while (current && found.length < need && !passedCreatedAfter) {
    const { lo, span, cap } = current;
    // The slice below is read meanwhile, planned as if this one matched at the density seen so far:
    // the store works on both at once (a page is otherwise one read after another). Whatever the
    // guess, a slice read in full is a valid next step; one that stops early is read again smaller.
    const guessed = Math.round(densityOver(matched, covered) * span);
    const ahead =
      known({ covered }) && lo > lowest && found.length + guessed < need
        ? nextSlice({
            upper: lo,
            found: found.length + guessed,
            matched: matched + guessed,
            covered: covered + span,
            densityHere: guessed / span,
            lastSpan: span,
          })
        : null;
    const docs = await current.docs;
    if (cap !== undefined && docs.length >= cap) {
      // Denser than thought: read the same positions again in slices a quarter of this one or smaller.
      densityHere = cap / span;
      sizeLimit = span / 4;
      current = nextSlice({ upper, found: found.length, matched, covered, densityHere, lastSpan });
      continue;
    }
    // How dense the slice just read was: the next read stays small inside a dense region.
    densityHere = docs.length / span;
    sizeLimit = Infinity;
    matched += docs.length;
    for (const doc of docs) {
      matchedAt.push(doc.listSeq!);
      // Everything further down is older still.
      if (query.createdAfter && doc.createdAt <= query.createdAfter) passedCreatedAfter = true;
      else if (onPage(doc)) found.push(doc);
    }
    covered += span;
    lastSpan = span;
    upper = lo;
    if (upper <= lowest || found.length >= need || passedCreatedAfter) break;
    current = ahead ?? nextSlice({ upper, found: found.length, matched, covered, densityHere, lastSpan });
  }

  // What the walk saw of the filter, for the next page's choice: exact when it read every position,
  // else its density over the team's list. A count still trusted is kept (one that a read found too
  // large to take in one stays so, rather than one read in two trying again).
  if (filtered && covered > 0 && knownMatchCount(countKey) === undefined) {
    const positions = Math.max(top, (newest ?? counter).seq + 1) - lowest;
    const matches = covered >= positions ? matched : Math.round((matched / covered) * positions);
    rememberMatchCount(countKey, { matches, positions });
  }
  return pageOf(found);

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

// List positions: what makes a team's newest-first page cheap on every store, FerretDB 1.x included
// (it pushes equality filters down to PostgreSQL but sorts in memory, so a page must be read as a
// few small equality-filtered slices, never as "every call of the team, sorted").
//
// Each create (one call or a batch) takes a block of consecutive positions, right after the team's
// newest block, and one creation time, later than that block's: so positions order calls exactly as
// `createdAt` does, and within a block `_id`s (generated in request order) rise with positions,
// which makes the API's order (createdAt desc, _id desc) the same as descending positions. A call
// carries its position (`listSeq`) and one key per slice size it falls in (`listKeys`):
// `<teamId>:<level>:<slice>`, slice = floor(position / size). A page is read one aligned slice at a
// time walking down from the newest position (src/data/call-list-query.ts).
import { Types, type mongo } from 'mongoose';
import { sendTogether } from '../concurrency/send-together';
import { CallListBlock, type CallListBlockDoc } from './models/call-list-block';
import { CallListCounter, type CallListCounterDoc } from './models/call-list-counter';
import { CallListFileBlock } from './models/call-list-file-block';
import { isDuplicateKeyOnly } from './duplicate-key';
import { rememberedValues } from './remembered-values';

/** Slice sizes, smallest first: each level's slices are four of the level below. */
export const LIST_SLICE_SIZES = [32, 128, 512, 2048, 8192, 32768] as const;

/** The equality filters of GET /v1/phoneCalls: stores may index each (see src/local/ferretdb-indexes.ts). */
export const LIST_FILTER_FIELDS = ['callTemplateId', 'phoneNumberId', 'toPhoneNumber', 'status', 'fileId'] as const;
export type ListFilterField = (typeof LIST_FILTER_FIELDS)[number];

export function listKey(teamId: string, level: number, slice: number): string {
  return `${teamId}:${level}:${slice}`;
}

export function sliceOf(position: number, level: number): number {
  return Math.floor(position / LIST_SLICE_SIZES[level]!);
}

/** The fields that place a call in its team's list. */
export function listFields(teamId: string, position: number): { listSeq: number; listKeys: string[] } {
  return {
    listSeq: position,
    listKeys: LIST_SLICE_SIZES.map((_, level) => listKey(teamId, level, sliceOf(position, level))),
  };
}

export interface ListBlock {
  /** The first position of the block; the block is `first` .. `first + count - 1`. */
  first: number;
  /** The creation time of every call of the block. */
  at: Date;
}

/** The newest block of a team's list: its last position and its calls' creation time. */
export interface ListTip {
  seq: number;
  at: Date;
}

/** A team without blocks: its first block starts at 1 and may take any time. */
const EMPTY_TIP: ListTip = { seq: 0, at: new Date(0) };

export function listBlockId(team: string, first: number): string {
  return `${team}:${first}`;
}

/** A block's id, `<team>:<first position>`, read back (listBlockId's inverse). */
export function parseListBlockId(id: string): { team: string; first: number } {
  const colon = id.lastIndexOf(':');
  return { team: id.slice(0, colon), first: Number(id.slice(colon + 1)) };
}

/** The blocks' collection with its documents' type, for reads and writes through the driver. */
export const listBlocks = () => CallListBlock.collection as unknown as mongo.Collection<CallListBlockDoc>;

/**
 * The newest block, found from a tip known to be a block's end (the counter's, or this process's
 * last): the blocks after it, each keyed by its first position, are followed until there is none.
 * The counter lags the chain while a create is between its block and its counter write, and on
 * FerretDB a counter write can put back an older one. `onRead` counts the reads, for the list walk.
 */
export async function followListBlocks(
  team: string,
  from: ListTip,
  onRead: () => void = () => undefined,
): Promise<ListTip> {
  let tip = from;
  for (;;) {
    onRead();
    const next = await listBlocks().findOne({ _id: listBlockId(team, tip.seq + 1) });
    // (An empty block would end nowhere; allocateListBlock writes none.)
    if (!next || !(next.count >= 1)) return tip;
    tip = { seq: tip.seq + next.count, at: next.at };
  }
}

/** Gives up after this many blocks lost to other processes in a row (only a pathological burst loses that often). */
const MAX_ATTEMPTS = 200;
/**
 * How long a remembered tip is trusted; after that the process starts again from the counter. Far
 * less than blocks are kept (LIST_BLOCK_KEPT_MS, models/call-list-block.ts): a block that another
 * process took after the tip is younger than the tip, so it is still there to refuse this process
 * the same positions.
 */
export const KNOWN_TIP_TRUSTED_MS = 10 * 60 * 1000;
/**
 * Per team, where this process last saw the chain end: its next block most likely starts there. For
 * 10,000 teams; past that it starts again from the counters.
 */
const knownTips = rememberedValues<ListTip>({ trustedMs: KNOWN_TIP_TRUSTED_MS, maxEntries: 10_000 });

/** Forgets every team's tip, as a restarted process would (tests). */
export function forgetKnownListTips(): void {
  knownTips.clear();
}

async function storedTip(teamId: Types.ObjectId): Promise<ListTip> {
  const counter = await CallListCounter.findById(teamId).lean<CallListCounterDoc>();
  return followListBlocks(teamId.toHexString(), counter ? { seq: counter.seq, at: counter.at } : EMPTY_TIP);
}

/**
 * Takes `count` consecutive positions for a team's new calls. The positions are won by inserting
 * their block under its unique key, so two API processes never share one, on FerretDB too (a read
 * then a conditional write of the counter is not atomic there: both racers could win). A process
 * that lost follows the chain past the winner's block and tries again. Then the counter, which the
 * list reads start from, is moved on to the block; a counter write that loses to a later one is
 * dropped on MongoDB, and on FerretDB may land after it, leaving the counter behind: readers follow
 * the chain from it either way. Usually two writes: the block, the counter.
 */
export async function allocateListBlock(teamId: Types.ObjectId, count: number): Promise<ListBlock> {
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(`a block holds 1 or more positions, not ${count}`);
  const team = teamId.toHexString();
  let tip = knownTips.get(team) ?? (await storedTip(teamId));
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const first = tip.seq + 1;
    // Strictly later than the block before, whatever the clocks of the API processes say: two blocks
    // never share a creation time, so no tie of createdAt spans two blocks.
    const at = new Date(Math.max(Date.now(), tip.at.getTime() + 1));
    try {
      await listBlocks().insertOne({ _id: listBlockId(team, first), count, at });
    } catch (err) {
      if (!isDuplicateKeyOnly(err)) throw err;
      tip = await followListBlocks(team, tip);
      continue;
    }
    const taken = { seq: first + count - 1, at };
    knownTips.set(team, taken);
    await advanceCounter(teamId, taken);
    return { first, at };
  }
  throw new Error(`could not take list positions for team ${team}: the list is too contended`);
}

async function advanceCounter(teamId: Types.ObjectId, tip: ListTip): Promise<void> {
  try {
    await CallListCounter.collection.updateOne(
      { _id: teamId, seq: { $lt: tip.seq } },
      { $set: { seq: tip.seq, at: tip.at }, $setOnInsert: { min: 1 } },
      { upsert: true },
    );
  } catch (err) {
    // The counter exists and is past this block already (a later block's write came first).
    if (!isDuplicateKeyOnly(err)) throw err;
  }
}

type PlacedDoc = Record<string, unknown> & { _id: Types.ObjectId; fileId?: unknown };

/**
 * Places new calls of one team in its list: one block of positions and one creation time for all of
 * them. Positions follow `_id` order, so that within the block the two orders agree. Calls of a file
 * also leave the block's top position, before they are written, so that a page of the file can start
 * there.
 *
 * Concurrent creates of one team in this process share a block: while one takes the counter, the
 * others wait and then take one block together. Racing each other for the counter instead, sixteen
 * concurrent creates lost most rounds, and each lost round cost two more reads and writes.
 */
export function placeInTeamList(teamId: Types.ObjectId, docs: ReadonlyArray<PlacedDoc>): Promise<void> {
  if (!docs.length) return Promise.resolve();
  return placeWithOthers(teamId.toHexString(), docs);
}

const placeWithOthers = sendTogether<ReadonlyArray<PlacedDoc>>((team, creates) =>
  placeTogether(new Types.ObjectId(team), team, creates.flat()),
);

async function placeTogether(teamId: Types.ObjectId, team: string, docs: ReadonlyArray<PlacedDoc>): Promise<void> {
  const block = await allocateListBlock(teamId, docs.length);
  const byId = [...docs].sort((a, b) => (a._id.toHexString() < b._id.toHexString() ? -1 : 1));
  const tops = new Map<string, number>();
  byId.forEach((doc, index) => {
    const position = block.first + index;
    Object.assign(doc, listFields(team, position), { createdAt: block.at, updatedAt: block.at });
    if (typeof doc.fileId === 'string') tops.set(doc.fileId, position);
  });
  if (tops.size) await CallListFileBlock.insertMany([...tops].map(([fileId, top]) => ({ teamId, fileId, top })));
}

// List positions: what makes a team's newest-first page cheap on every store, FerretDB 1.x included
// (it pushes equality filters down to PostgreSQL but sorts in memory, so a page must be read as a
// few small equality-filtered slices, never as "every call of the team, sorted").
//
// Each create (one call or a batch) takes a block of consecutive positions from its team's counter
// and one creation time, later than the previous block's: so positions order calls exactly as
// `createdAt` does, and within a block `_id`s (generated in request order) rise with positions,
// which makes the API's order (createdAt desc, _id desc) the same as descending positions. A call
// carries its position (`listSeq`) and one key per slice size it falls in (`listKeys`):
// `<teamId>:<level>:<slice>`, slice = floor(position / size). A page is read one aligned slice at a
// time walking down from the newest position (src/data/call-list-query.ts).
import { Types } from 'mongoose';
import { sendTogether } from '../concurrency/send-together';
import { CallListCounter, type CallListCounterDoc } from './models/call-list-counter';
import { CallListFileBlock } from './models/call-list-file-block';
import { isDuplicateKeyOnly } from './duplicate-key';

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

/** Gives up after this many lost races for the counter (only a pathological burst loses that often). */
const MAX_ATTEMPTS = 200;

/**
 * Takes `count` consecutive positions for a team's new calls. One read and one conditional write of
 * the team's counter (retried when another create won the race), so it holds without transactions.
 */
export async function allocateListBlock(teamId: Types.ObjectId, count: number): Promise<ListBlock> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const now = Date.now();
    const current = await CallListCounter.findById(teamId).lean<CallListCounterDoc>();
    if (!current) {
      const at = new Date(now);
      try {
        await CallListCounter.create({ _id: teamId, seq: count, at, min: 1 });
        return { first: 1, at };
      } catch (err) {
        if (!isDuplicateKeyOnly(err)) throw err;
        continue;
      }
    }
    // Strictly later than the previous block, whatever the clocks of the API processes say: two
    // blocks never share a creation time, so no tie of createdAt spans two blocks.
    const at = new Date(Math.max(now, current.at.getTime() + 1));
    const won = await CallListCounter.updateOne(
      { _id: teamId, seq: current.seq, at: current.at },
      { $set: { seq: current.seq + count, at } },
    );
    if (won.matchedCount === 1) return { first: current.seq + 1, at };
  }
  throw new Error(`could not take list positions for team ${teamId.toHexString()}: the counter is too contended`);
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

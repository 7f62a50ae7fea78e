// Removes the list blocks (src/data/call-list-positions.ts) that no create or page needs any more:
// one small document per create would otherwise pile up for ever.
//
// Which are needed: a page and a create read the blocks past their team's counter (the counter lags
// the chain while a create is between its block and its counter write, and on FerretDB an older
// counter write can land over a newer one and stay if no create follows), so those are kept however
// old. A create also inserts right after the tip its process remembers, trusted for minutes only
// (KNOWN_TIP_TRUSTED_MS): a block another process took after that tip is younger than a day, so it is
// still there to refuse the insert. Every other block of a team, a day old and at or below its
// counter, is removed.
import { Types } from 'mongoose';
import { listBlocks, parseListBlockId } from './call-list-positions';
import { LIST_BLOCK_KEPT_MS, type CallListBlockDoc } from './models/call-list-block';
import { CallListCounter, type CallListCounterDoc } from './models/call-list-counter';

/** Blocks looked at per pass: a pass stays short, and says when it left some for the next. */
const PER_PASS = 20_000;
/** Blocks deleted per request: each by its `_id`, which FerretDB finds by index ($in it would not). */
const PER_REQUEST = 500;

export interface ListBlockSweep {
  removed: number;
  /** Whether the pass stopped at its limit, with old blocks perhaps left for the next one. */
  more: boolean;
}

export async function sweepListBlocks(now = new Date()): Promise<ListBlockSweep> {
  const cutoff = new Date(now.getTime() - LIST_BLOCK_KEPT_MS);
  const blocks = listBlocks();
  const old = await blocks.find({ at: { $lt: cutoff } }, { projection: { count: 1 }, limit: PER_PASS }).toArray();
  const counterOf = await counterSeqs(
    old.map((block) => teamOf(block._id)).filter((team) => Types.ObjectId.isValid(team)),
  );
  const passed = old
    .filter((block) => lastPosition(block) <= (counterOf.get(teamOf(block._id)) ?? 0))
    .map((block) => block._id);
  let removed = 0;
  for (let start = 0; start < passed.length; start += PER_REQUEST) {
    const ids = passed.slice(start, start + PER_REQUEST);
    // By `_id` and the age the search saw: a block inserted again under a removed one's key (which no
    // create should ever do) is young, and stays.
    const result = await blocks.bulkWrite(
      ids.map((_id) => ({ deleteOne: { filter: { _id, at: { $lt: cutoff } } } })),
      { ordered: false },
    );
    removed += result.deletedCount;
  }
  return { removed, more: old.length === PER_PASS && removed > 0 };
}

const teamOf = (blockId: string) => parseListBlockId(blockId).team;

function lastPosition(block: CallListBlockDoc): number {
  return parseListBlockId(block._id).first + block.count - 1;
}

/** Each team's counter position; a team without a counter has none (its blocks are all kept). */
async function counterSeqs(teams: string[]): Promise<Map<string, number>> {
  const seqs = new Map<string, number>();
  const ids = [...new Set(teams)];
  for (let start = 0; start < ids.length; start += PER_REQUEST) {
    const counters = await CallListCounter.collection
      .find<Pick<CallListCounterDoc, '_id' | 'seq'>>(
        { _id: { $in: ids.slice(start, start + PER_REQUEST).map((id) => new Types.ObjectId(id)) } },
        { projection: { seq: 1 } },
      )
      .toArray();
    for (const counter of counters) seqs.set(counter._id.toHexString(), counter.seq);
  }
  return seqs;
}

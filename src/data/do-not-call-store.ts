// A team's do-not-call list: the numbers it must never ring. Read before every dial and at create;
// written by the API, the operator CLI and the capture of a call whose callee opted out. Adding is
// idempotent per (team, number) without transactions: the unique index refuses a second entry.
import { Types, type QueryFilter } from 'mongoose';
import { isDuplicateKeyOnly } from './duplicate-key';
import { DoNotCallEntry, type DncSource, type DoNotCallEntryDoc } from './models/do-not-call-entry';

export interface NewDncEntry {
  /** E.164. */
  phoneNumber: string;
  reason?: string;
}

/** Who lists the numbers of one `add`. */
export type DncListing = { source: 'api'; keyId: string } | { source: 'cli' } | { source: 'callee'; callId: string };

export interface DncPage {
  entries: DoNotCallEntryDoc[];
  /** Set when more entries follow the last one of this page. */
  hasMore: boolean;
}

export interface DoNotCallStore {
  /** Which of `numbers` are on the team's list. */
  listedAmong(teamId: string, numbers: readonly string[]): Promise<Set<string>>;
  /**
   * Lists the numbers not listed yet; a listed one keeps its first entry. Answers each number's
   * entry (new or old) in the order given, and how many were new.
   */
  add(
    teamId: string,
    entries: readonly NewDncEntry[],
    listing: DncListing,
  ): Promise<{ entries: DoNotCallEntryDoc[]; added: number }>;
}

/** The whole list, for the API and the CLI; activities need only the store above. */
export interface DoNotCallList extends DoNotCallStore {
  /** The removed entry, or null when the number was not listed. */
  remove(teamId: string, phoneNumber: string): Promise<DoNotCallEntryDoc | null>;
  /** Newest first (`createdAt`, then `_id`, descending), after `after` when given. */
  page(
    teamId: string,
    query: { limit: number; after?: { at: Date; id: string }; phoneNumber?: string },
  ): Promise<DncPage>;
}

async function entriesFor(teamId: string, numbers: readonly string[]): Promise<DoNotCallEntryDoc[]> {
  if (numbers.length === 0) return [];
  const distinct = [...new Set(numbers)];
  // FerretDB 1.x pushes an equality down to PostgreSQL but not $in (that reads the team's entries
  // through their team index): a dial checks one number, by equality.
  const phoneNumber = distinct.length === 1 ? distinct[0] : { $in: distinct };
  return DoNotCallEntry.find({ teamId, phoneNumber }).lean<DoNotCallEntryDoc[]>();
}

/** Which of `numbers` are on the team's list (create checks a whole batch with one query). */
export async function listedAmong(teamId: string, numbers: readonly string[]): Promise<Set<string>> {
  const found = await entriesFor(teamId, numbers);
  return new Set(found.map((entry) => entry.phoneNumber));
}

export function createDoNotCallStore(): DoNotCallList {
  return {
    listedAmong,

    async add(teamId, entries, listing) {
      const unique = new Map<string, NewDncEntry>();
      for (const entry of entries) if (!unique.has(entry.phoneNumber)) unique.set(entry.phoneNumber, entry);
      const numbers = [...unique.keys()];
      const now = Date.now();
      const docs = numbers.map((phoneNumber, i) => ({
        _id: new Types.ObjectId(),
        teamId,
        phoneNumber,
        reason: unique.get(phoneNumber)!.reason ?? '',
        source: listing.source satisfies DncSource,
        keyId: listing.source === 'api' ? listing.keyId : null,
        callId: listing.source === 'callee' ? listing.callId : null,
        // Distinct times in the given order, so the list reads newest first as they were given.
        createdAt: new Date(now + i),
      }));
      if (docs.length) {
        try {
          await DoNotCallEntry.insertMany(docs, { ordered: false });
        } catch (err) {
          // Listed before (or meanwhile, by another request): the first entry stands.
          if (!isDuplicateKeyOnly(err)) throw err;
        }
      }
      const byNumber = new Map((await entriesFor(teamId, numbers)).map((e) => [e.phoneNumber, e]));
      const ours = new Set(docs.map((d) => d._id.toHexString()));
      const stored = numbers.flatMap((n) => byNumber.get(n) ?? []);
      return { entries: stored, added: stored.filter((e) => ours.has(e._id.toHexString())).length };
    },

    async remove(teamId, phoneNumber) {
      return DoNotCallEntry.findOneAndDelete({ teamId, phoneNumber }).lean<DoNotCallEntryDoc>();
    },

    async page(teamId, query) {
      const filter: QueryFilter<DoNotCallEntryDoc> = { teamId: new Types.ObjectId(teamId) };
      if (query.phoneNumber) filter.phoneNumber = query.phoneNumber;
      if (query.after) {
        const { at, id } = query.after;
        filter.$or = [{ createdAt: { $lt: at } }, { createdAt: at, _id: { $lt: new Types.ObjectId(id) } }];
      }
      const docs = await DoNotCallEntry.find(filter)
        .sort({ createdAt: -1, _id: -1 })
        .limit(query.limit + 1)
        .lean<DoNotCallEntryDoc[]>();
      return { entries: docs.slice(0, query.limit), hasMore: docs.length > query.limit };
    },
  };
}

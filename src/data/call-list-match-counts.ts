// How many of a team's calls a list's equality filters matched, as this process last counted or
// estimated: what lets a page of a rare filter be read as one query returning every match, which
// costs what the plain "find, sort, limit" costs, instead of a walk of a dozen slice reads.
//
// A count only chooses how a page is read, never what it holds: a filter that has since grown past
// one read shows it by filling that read (call-list-query.ts then walks, and remembers it), so a
// stale count costs one read, not a wrong page. Counts are per process and forgotten after a while.
import type { Types } from 'mongoose';
import { rememberedValues } from './remembered-values';

/** A filter's matches, and how many of the team's list positions they were counted over (when known). */
export interface MatchCount {
  matches: number;
  /**
   * The team's list positions at the count: a walk's density is matches over these, not over the
   * list as it is now, which a large create may since have made many times longer.
   */
  positions?: number;
}

/**
 * Trusted for 5 minutes: long enough for someone paging through a filter, short beside a campaign.
 * For 10,000 filters; past that it starts again (a walk relearns a count).
 */
const counts = rememberedValues<MatchCount>({ trustedMs: 5 * 60 * 1000, maxEntries: 10_000 });

/** The key of a team's equality filters, whatever order they came in. */
export function matchCountKey(team: string, equals: Record<string, string | Types.ObjectId>): string {
  const fields = Object.keys(equals).sort();
  return [team, ...fields.map((field) => `${field}=${String(equals[field])}`)].join('|');
}

/** The filter's last count or estimate, while trusted. */
export function knownMatchCount(key: string): MatchCount | undefined {
  return counts.get(key);
}

export function rememberMatchCount(key: string, count: MatchCount): void {
  counts.set(key, count);
}

/** Forgets every count, as a restarted process would (tests). */
export function forgetMatchCounts(): void {
  counts.clear();
}

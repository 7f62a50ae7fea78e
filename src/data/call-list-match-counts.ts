// How many of a team's calls a list's equality filters matched, as this process last counted or
// estimated: what lets a page of a rare filter be read as one query returning every match, which
// costs what the plain "find, sort, limit" costs, instead of a walk of a dozen slice reads.
//
// A count only chooses how a page is read, never what it holds: a filter that has since grown past
// one read shows it by filling that read (call-list-query.ts then walks, and remembers it), so a
// stale count costs one read, not a wrong page. Counts are per process and forgotten after a while.
import type { Types } from 'mongoose';
import { rememberedValues } from './remembered-values';

/**
 * Trusted for 5 minutes: long enough for someone paging through a filter, short beside a campaign.
 * For 10,000 filters; past that it starts again (a walk relearns a count).
 */
const counts = rememberedValues<number>({ trustedMs: 5 * 60 * 1000, maxEntries: 10_000 });

/** The key of a team's equality filters, whatever order they came in. */
export function matchCountKey(team: string, equals: Record<string, string | Types.ObjectId>): string {
  const fields = Object.keys(equals).sort();
  return [team, ...fields.map((field) => `${field}=${String(equals[field])}`)].join('|');
}

/** The filter's last count or estimate, while trusted. */
export function knownMatchCount(key: string): number | undefined {
  return counts.get(key);
}

export function rememberMatchCount(key: string, matches: number): void {
  counts.set(key, matches);
}

/** Forgets every count, as a restarted process would (tests). */
export function forgetMatchCounts(): void {
  counts.clear();
}

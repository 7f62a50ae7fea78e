// Time zones named with a spoken meeting time ("3pm Eastern", "3 pm ET", "15:00 London time"), for
// meeting-time.ts: a time with a zone is read in that zone instead of the callee's.
//
// - Names map to IANA zones, so the offset is the one in force on the meeting's day: "3pm Eastern"
//   is UTC-4 in July and UTC-5 in January.
// - Standard and daylight abbreviations (EST, CDT, PST...) are read as their region's zone too, not
//   as the fixed offset they spell: people say "EST" all summer and mean the clock on the wall.
// - A callee whose own zone keeps a region's standard time all year (Arizona, Saskatchewan) names
//   their own clock with it: "3pm Mountain" from Phoenix in July is UTC-7, not Denver's UTC-6. Not
//   with a daylight name: "3pm MDT" from Phoenix is UTC-6, a clock Phoenix never keeps.
// - A region name or abbreviation said without "time" is not a zone when a capitalised word follows
//   (but a day or a month), nor a noun that makes it a place or thing: "Mountain View office",
//   "Atlantic City", "PT session" and "Mt. Vernon" are places and things, not zones.
// - Ambiguous names are not guessed ("IST": India, Ireland or Israel; "AST": Atlantic or Arabia):
//   the time is read in the callee's zone, as for "my time" from the callee, "your time" from the
//   agent and "local time". "your time" from the callee would be the template's zone, which the
//   meeting-time options do not carry: it is not read as a zone.
// - GMT is UTC, not the UK's clock ("BST" and "London time" say that).
import { parseMentions, type Mention, type Slot } from './spoken-time';
import type { Speaker } from './text';

const NEW_YORK = 'America/New_York';
const CHICAGO = 'America/Chicago';
const DENVER = 'America/Denver';
const LOS_ANGELES = 'America/Los_Angeles';
const ANCHORAGE = 'America/Anchorage';
const HONOLULU = 'Pacific/Honolulu';
const HALIFAX = 'America/Halifax';
const ST_JOHNS = 'America/St_Johns';
const LONDON = 'Europe/London';
const DUBLIN = 'Europe/Dublin';
const PARIS = 'Europe/Paris';
const ATHENS = 'Europe/Athens';
const LISBON = 'Europe/Lisbon';

/** An IANA zone, or null for a name that does not say which zone (read in the callee's). */
type Named = string | null;

// Said alone or with "(standard|daylight|summer) time": "Eastern", "Pacific Daylight Time".
const REGIONS: Readonly<Record<string, Named>> = {
  eastern: NEW_YORK,
  'east coast': NEW_YORK,
  central: CHICAGO,
  mountain: DENVER,
  pacific: LOS_ANGELES,
  'west coast': LOS_ANGELES,
  alaska: ANCHORAGE,
  alaskan: ANCHORAGE,
  hawaii: HONOLULU,
  hawaiian: HONOLULU,
  'hawaii aleutian': HONOLULU,
  atlantic: HALIFAX,
  newfoundland: ST_JOHNS,
  'central european': PARIS,
  'eastern european': ATHENS,
  'western european': LISBON,
  // Queensland and the Northern Territory keep standard time all year, their neighbours do not.
  'australian eastern': null,
  'australian central': null,
};

const ABBREVIATIONS: Readonly<Record<string, Named>> = {
  et: NEW_YORK,
  est: NEW_YORK,
  edt: NEW_YORK,
  ct: CHICAGO,
  cst: CHICAGO,
  cdt: CHICAGO,
  mt: DENVER,
  mst: DENVER,
  mdt: DENVER,
  pt: LOS_ANGELES,
  pst: LOS_ANGELES,
  pdt: LOS_ANGELES,
  akt: ANCHORAGE,
  akst: ANCHORAGE,
  akdt: ANCHORAGE,
  hst: HONOLULU,
  adt: HALIFAX,
  nst: ST_JOHNS,
  ndt: ST_JOHNS,
  utc: 'UTC',
  gmt: 'UTC',
  bst: LONDON,
  cet: PARIS,
  cest: PARIS,
  eet: ATHENS,
  eest: ATHENS,
  ist: null,
  ast: null,
  sst: null,
};

// Said only with "time": "London time", "India Standard Time" ("3pm London" is not a zone).
const PLACES: Readonly<Record<string, Named>> = {
  'new york': NEW_YORK,
  toronto: NEW_YORK,
  chicago: CHICAGO,
  denver: DENVER,
  arizona: 'America/Phoenix',
  'los angeles': LOS_ANGELES,
  vancouver: LOS_ANGELES,
  london: LONDON,
  uk: LONDON,
  british: LONDON,
  england: LONDON,
  irish: DUBLIN,
  ireland: DUBLIN,
  dublin: DUBLIN,
  paris: PARIS,
  berlin: 'Europe/Berlin',
  india: 'Asia/Kolkata',
  indian: 'Asia/Kolkata',
  israel: 'Asia/Jerusalem',
  israeli: 'Asia/Jerusalem',
  'greenwich mean': 'UTC',
  universal: 'UTC',
  'coordinated universal': 'UTC',
};

// Zones that keep a region's standard time all year, whose callees mean their own clock by its
// name or its standard forms (never its daylight ones).
const OWN_CLOCK_IN_REGION: Readonly<Record<string, readonly string[]>> = {
  [DENVER]: ['America/Phoenix', 'US/Arizona', 'America/Creston', 'America/Dawson_Creek', 'America/Fort_Nelson'],
  [CHICAGO]: ['America/Regina', 'America/Swift_Current', 'Canada/Saskatchewan'],
};

const SEP = '[\\s-]+';
const names = (table: Readonly<Record<string, Named>>) =>
  Object.keys(table)
    .sort((a, b) => b.length - a.length)
    .map((name) => name.replace(/ /g, SEP))
    .join('|');
const KIND = `(?:${SEP}(?:standard|daylight|summer))?`;
const TIME = `${SEP}time(?:[\\s-]*zone)?`;
// "Central Africa time" or "Pacific Island time" name another zone than "Central" or "Pacific".
const NOT_ANOTHER_ZONE = `(?!${SEP}(?!(?:standard|daylight|summer|time)(?!\\p{L}))\\p{L}+${KIND}${SEP}time(?!\\p{L}))`;
const ZONE_PATTERN = new RegExp(
  '(?<![\\p{L}\\p{N}-])(?:' +
    `(?<place>${names(PLACES)})${KIND}${TIME}` +
    `|(?<region>${names(REGIONS)})${NOT_ANOTHER_ZONE}${KIND}(?<regionTime>${TIME})?` +
    // "GMT+2" and "UTC-5" are offsets, which chrono reads.
    `|(?<abbr>${names(ABBREVIATIONS)})(?!\\s*[+\\-\\u2212]\\s*\\d)(?<abbrTime>${TIME})?` +
    `|(?<own>(?:my|your)(?:${SEP}local)?|local)${TIME}` +
    ')(?![\\p{L}\\p{N}])',
  'giu',
);

// A region name or abbreviation said without "time" is part of a name when a capitalised word follows
// ("Mountain View", "Atlantic City", "Central Park"), but for a day or month ("3pm Eastern Tuesday",
// "3pm ET January 5th"), or a noun that makes it a place or a thing ("central office", "PT session"),
// or a hyphen ("Pacific-Northwest"). Anything else may follow a zone in unpunctuated speech ("3pm
// Eastern probably", "3pm EST does that work").
const CALENDAR_WORDS = new Set(
  (
    'monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun ' +
    'january february march april may june july august september october november december ' +
    'jan feb mar apr jun jul aug sep sept oct nov dec i'
  ).split(' '),
);
const PLACE_NOUNS = new Set(
  (
    'office offices session sessions park city view center centre branch store shop location street ' +
    'avenue road campus hospital clinic school university college bank station airport mall plaza ' +
    'square region area team division building side coast club court hall'
  ).split(' '),
);

/** Whether the words after `end` make the region name or abbreviation before it part of a name. */
function partOfAName(text: string, end: number): boolean {
  if (text[end] === '-' && /[\p{L}\p{N}]/u.test(text[end + 1] ?? '')) return true;
  let from = end;
  while (from < text.length && (text[from] === ' ' || text[from] === '\t')) from++;
  let to = from;
  while (to < text.length && /\p{L}/u.test(text[to]!)) to++;
  if (to === from) return false;
  const word = text.slice(from, to);
  const lower = word.toLowerCase();
  if (CALENDAR_WORDS.has(lower)) return false;
  return PLACE_NOUNS.has(lower) || /^\p{Lu}/u.test(word);
}

// Daylight and summer abbreviations, which never name a clock kept on standard time all year.
const DAYLIGHT_ABBREVIATIONS = new Set(['edt', 'cdt', 'mdt', 'pdt', 'akdt', 'adt', 'ndt', 'bst', 'cest', 'eest']);

/** Where a zone is named in an utterance, and which. */
export interface SpokenZone {
  start: number;
  end: number;
  timeZone: Named;
  /** Said as daylight or summer time ("MDT", "Mountain Daylight Time"): never the callee's own clock. */
  daylight: boolean;
}

/** The zones named in `text`, in order; "my time" counts from the human, "your time" from the agent. */
export function findSpokenZones(text: string, speaker: Speaker): SpokenZone[] {
  return scanZones(text, speaker).zones;
}

/**
 * The zones named in `text`, and the words to hide from chrono: the zones, and abbreviations that
 * are not zones here ("3pm PT session"), which chrono would otherwise read as zones itself.
 */
function scanZones(text: string, speaker: Speaker): { zones: SpokenZone[]; hidden: { start: number; end: number }[] } {
  const zones: SpokenZone[] = [];
  const hidden: { start: number; end: number }[] = [];
  for (const match of text.matchAll(ZONE_PATTERN)) {
    const { place, region, abbr, own, regionTime, abbrTime } = match.groups ?? {};
    const key = (place ?? region ?? abbr ?? '').toLowerCase().replace(/[\s-]+/g, ' ');
    const start = match.index ?? 0;
    const end = start + match[0].length;
    if ((region !== undefined && regionTime === undefined) || (abbr !== undefined && abbrTime === undefined)) {
      // "Mt.", "Ct.", "Pt.", "Est.": a written abbreviation of Mount, Court, Point, established.
      const dotted = abbr !== undefined && /^\p{Lu}\p{Ll}+$/u.test(abbr) && text[end] === '.';
      if (dotted || partOfAName(text, end)) {
        if (abbr !== undefined) hidden.push({ start, end });
        continue;
      }
    }
    let timeZone: Named;
    if (own !== undefined) {
      const whose = own.toLowerCase().split(/[\s-]/)[0];
      if ((whose === 'my' && speaker !== 'human') || (whose === 'your' && speaker !== 'agent')) continue;
      timeZone = null;
    } else {
      timeZone = (place ? PLACES[key] : region ? REGIONS[key] : ABBREVIATIONS[key]) ?? null;
    }
    const daylight = region
      ? /daylight|summer/i.test(match[0].slice(region.length))
      : abbr !== undefined && DAYLIGHT_ABBREVIATIONS.has(key);
    const zone = { start, end, timeZone, daylight };
    zones.push(zone);
    hidden.push(zone);
  }
  return { zones, hidden };
}

/** A slot with the zone its time is read in: the one named with it, else null for the callee's. */
export interface ZonedSlot extends Slot {
  timeZone: string | null;
}

export interface ZonedMention extends Mention {
  slot: ZonedSlot;
}

/**
 * parseMentions with the zone named right after (or inside) each mention; such a mention's end
 * takes in the zone's words, so "Tuesday at 3pm Eastern." is still a bare answer.
 */
export function parseZonedMentions(text: string, callTime: Date, calleeZone: string, speaker: Speaker): ZonedMention[] {
  const { zones, hidden } = scanZones(text, speaker);
  // Chrono gets the text with the zones blanked out, positions kept: it would read "EST" at a fixed
  // offset, and would not take "at three Eastern" for a time.
  let blanked = '';
  let from = 0;
  for (const z of hidden) {
    blanked += text.slice(from, z.start) + ' '.repeat(z.end - z.start);
    from = z.end;
  }
  blanked += text.slice(from);
  return parseMentions(blanked, callTime, calleeZone).map((m) => {
    const zone = zones.find(
      (z) => z.start > m.start && (z.start < m.end || /^[\s,(]*$/.test(blanked.slice(m.end, z.start))),
    );
    if (!zone) return { ...m, slot: { ...m.slot, timeZone: null } };
    const timeZone =
      zone.timeZone === null || (!zone.daylight && OWN_CLOCK_IN_REGION[zone.timeZone]?.includes(calleeZone))
        ? calleeZone
        : zone.timeZone;
    return { start: m.start, end: Math.max(m.end, zone.end), slot: { ...m.slot, timeZone } };
  });
}

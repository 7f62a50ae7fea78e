// Time zones named with a spoken meeting time ("3pm Eastern", "3 pm ET", "15:00 London time"), for
// meeting-time.ts: a time with a zone is read in that zone instead of the callee's.
//
// - Names map to IANA zones, so the offset is the one in force on the meeting's day: "3pm Eastern"
//   is UTC-4 in July and UTC-5 in January.
// - Standard and daylight abbreviations (EST, CDT, PST...) are read as their region's zone too, not
//   as the fixed offset they spell: people say "EST" all summer and mean the clock on the wall.
// - A callee whose own zone keeps a region's standard time all year (Arizona, Saskatchewan) names
//   their own clock with it: "3pm Mountain" from Phoenix in July is UTC-7, not Denver's UTC-6.
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

// Zones that keep a region's standard time all year, whose callees mean their own clock by its name.
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
    `|(?<region>${names(REGIONS)})${NOT_ANOTHER_ZONE}(?:${KIND}${TIME})?` +
    // "GMT+2" and "UTC-5" are offsets, which chrono reads.
    `|(?<abbr>${names(ABBREVIATIONS)})(?!\\s*[+\\-\\u2212]\\s*\\d)(?:${TIME})?` +
    `|(?<own>(?:my|your)(?:${SEP}local)?|local)${TIME}` +
    ')(?![\\p{L}\\p{N}])',
  'giu',
);

/** Where a zone is named in an utterance, and which. */
export interface SpokenZone {
  start: number;
  end: number;
  timeZone: Named;
}

/** The zones named in `text`, in order; "my time" counts from the human, "your time" from the agent. */
export function findSpokenZones(text: string, speaker: Speaker): SpokenZone[] {
  const found: SpokenZone[] = [];
  for (const match of text.matchAll(ZONE_PATTERN)) {
    const { place, region, abbr, own } = match.groups ?? {};
    const key = (place ?? region ?? abbr ?? '').toLowerCase().replace(/[\s-]+/g, ' ');
    let timeZone: Named;
    if (own !== undefined) {
      const whose = own.toLowerCase().split(/[\s-]/)[0];
      if ((whose === 'my' && speaker !== 'human') || (whose === 'your' && speaker !== 'agent')) continue;
      timeZone = null;
    } else {
      timeZone = (place ? PLACES[key] : region ? REGIONS[key] : ABBREVIATIONS[key]) ?? null;
    }
    const start = match.index ?? 0;
    found.push({ start, end: start + match[0].length, timeZone });
  }
  return found;
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
  const zones = findSpokenZones(text, speaker);
  // Chrono gets the text with the zones blanked out, positions kept: it would read "EST" at a fixed
  // offset, and would not take "at three Eastern" for a time.
  let blanked = '';
  let from = 0;
  for (const z of zones) {
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
      zone.timeZone === null || OWN_CLOCK_IN_REGION[zone.timeZone]?.includes(calleeZone) ? calleeZone : zone.timeZone;
    return { start: m.start, end: Math.max(m.end, zone.end), slot: { ...m.slot, timeZone } };
  });
}

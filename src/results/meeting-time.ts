// The meeting time the human agreed to during a call (`fixedMeetingTime`).
//
// Dates and times are read by chrono-node (English, casual mode), extended with two parsers it
// lacks for speech: a bare ordinal day ("the 5th", "Monday the 9th", "the twenty-first") and
// spoken clock times ("half past four", "quarter to five", "at three thirty", "four o'clock",
// "how about 11", "can we make it 4").
// Everything is read relative to the call time as a wall clock in the callee's IANA time zone.
//
// Rules:
// 1. A mention is a date and/or a time of day. A time of day needs a stated hour ("3pm", "noon",
//    "half past four"); "Friday afternoon" or "tomorrow" alone is a day, not a fixed time.
// 2. A bare hour from 1 to 7 without am/pm ("at 3", "Thursday at 4") means the afternoon: nobody
//    books a call for 3 in the morning. "07:30" with a leading zero is read as written.
// 3. Each mention is judged within its clause (clauses end at . ! ? ; , : dashes and at "but",
//    "however", "although", "though", "whereas", "otherwise", "unless"). It is refused when a
//    negation comes before it in the clause ("I can't do Tuesday", "not Tuesday", "rather than
//    Tuesday") or after it ("Tuesday doesn't work", "Tuesday is no good"); "Tuesday or Wednesday"
//    after a negation refuses both. Phrases such as "no problem", "why not", "don't mind" are
//    not negations.
// 4. A human mention that is not refused is agreed when its clause holds an agreeing or proposing
//    expression ("works for me", "sounds good", "yes", "sure", "let's", "how about", "I can do",
//    "that's fine", "is better"...) or holds nothing but the time and filler words: answering
//    "When suits you?" with "Tuesday at 3pm." proposes that time, and proposing counts as agreeing.
// 5. The agent proposes when its utterance holds a mention not refused and is a question or uses
//    a proposing word ("would", "how about", "suit", "book"...). The proposal stands until the
//    human next speaks. If that human utterance agrees (an agreeing expression and no negation
//    anywhere in it) without naming a time of its own, the proposed time is agreed.
// 6. Missing parts are taken from the conversation: a human day without a time ("Thursday works",
//    "how about Friday instead?") takes the time of the standing proposal; a human time without a
//    day ("can we make it 4 instead?") takes the proposal's day, else the last day anyone named
//    without refusing it, else today in the callee's zone (tomorrow once that time has passed).
// 7. Only future times count: a mention at or before the call time, or introduced by "last",
//    "past" or "previous", is ignored.
// 8. A later human refusal of the agreed day or time ("actually I can't do Tuesday") withdraws it.
// 9. The most recent agreement in the conversation wins; none gives null.
//
// Time zones: chrono gets the zone's offset at the call instant, so "tomorrow" is the callee's
// tomorrow. The agreed wall-clock time is then converted to UTC with the offset in force on that
// day (from Intl), so a meeting after a daylight-saving change lands on the right instant. A time
// that does not exist (skipped by a spring-forward change) moves forward by the gap; an ambiguous
// one (repeated by a fall-back change) takes the earlier instant. A zone named in the words
// ("3pm EST") or a relative time ("in two hours") keeps the offset chrono read from them.
import * as chrono from 'chrono-node';
import type { Component, ParsedResult, Parser, ParsingContext } from 'chrono-node';
import { PhraseSet, tokenize, type Utterance } from './text';

export interface MeetingTimeOptions {
  callTime: Date;
  /** IANA zone of the callee, e.g. 'America/New_York'. Default 'UTC'. */
  timeZone?: string;
}

/** ISO 8601 UTC (with milliseconds) of the meeting the human agreed to, or null. */
export function findFixedMeetingTime(
  utterances: readonly Utterance[],
  opts: MeetingTimeOptions,
): string | null {
  const call = callContext(opts);
  let agreed: Placed | null = null;
  let pending: Slot | null = null;
  let contextDate: ContextDate | null = null;

  for (const utterance of utterances) {
    if (utterance.text.trim() === '') continue;
    const mentions = assess(utterance.text, parseSlots(utterance.text, call));

    if (utterance.speaker === 'agent') {
      const offered = mentions.filter((m) => !m.negated);
      const last = offered[offered.length - 1];
      if (last && isProposal(utterance.text)) pending = complete(last.slot, pending, contextDate);
    } else {
      for (const m of mentions) {
        if (m.negated && agreed && refuses(m.slot, agreed)) agreed = null;
      }
      const candidates = mentions
        .filter((m) => m.agreed)
        .map((m) => place(complete(m.slot, pending, contextDate), call))
        .filter((p): p is Placed => p !== null);
      const ownChoice = candidates[candidates.length - 1];
      if (ownChoice) {
        agreed = ownChoice;
      } else if (pending && !mentions.some((m) => m.agreed) && utteranceAgrees(utterance.text)) {
        agreed = place(pending, call) ?? agreed;
      }
      pending = null;
    }

    for (const m of mentions) {
      if (!m.negated && m.slot.date) contextDate = { date: m.slot.date, flexible: m.slot.weekdayFlexible };
    }
  }
  return agreed ? new Date(agreed.instant).toISOString() : null;
}

// ---------------------------------------------------------------------------------------------
// Wall-clock arithmetic and time zones

interface WallDate {
  year: number;
  month: number; // 1-12
  day: number;
}
interface WallTime {
  hour: number;
  minute: number;
}

const DAY_MS = 86_400_000;

function addDays(date: WallDate, days: number): WallDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function weekdayOf(date: WallDate): number {
  return new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function zoneFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new RangeError(`unknown IANA time zone: ${timeZone}`);
    }
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's wall clock at an instant, as if it were UTC. */
function wallClockMs(instantMs: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of zoneFormatter(timeZone).formatToParts(new Date(instantMs))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  return Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second);
}

/** Minutes the zone is ahead of UTC at an instant (New York in winter: -300). */
export function zoneOffsetMinutes(instantMs: number, timeZone: string): number {
  const wholeSecond = Math.floor(instantMs / 1000) * 1000;
  return Math.round((wallClockMs(wholeSecond, timeZone) - wholeSecond) / 60_000);
}

/** The instant a wall-clock time in the zone names (see the header for gaps and overlaps). */
export function wallTimeToInstant(date: WallDate, time: WallTime, timeZone: string): number {
  const asUtc = Date.UTC(date.year, date.month - 1, date.day, time.hour, time.minute);
  // The offsets a day either side bracket any change; a candidate is real when the zone agrees.
  const offsetBefore = zoneOffsetMinutes(asUtc - DAY_MS, timeZone);
  const offsetAfter = zoneOffsetMinutes(asUtc + DAY_MS, timeZone);
  const real = [offsetBefore, offsetAfter]
    .map((offset) => asUtc - offset * 60_000)
    .filter((instant) => wallClockMs(instant, timeZone) === asUtc);
  if (real.length > 0) return Math.min(...real);
  return asUtc - offsetBefore * 60_000;
}

interface CallContext {
  instant: number;
  timeZone: string;
  today: WallDate;
  reference: chrono.ParsingReference;
}

function callContext(opts: MeetingTimeOptions): CallContext {
  const instant = opts.callTime.getTime();
  if (Number.isNaN(instant)) throw new RangeError('callTime is not a valid date');
  const timeZone = opts.timeZone ?? 'UTC';
  const wall = new Date(wallClockMs(instant, timeZone));
  return {
    instant,
    timeZone,
    today: { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() },
    reference: { instant: opts.callTime, timezone: zoneOffsetMinutes(instant, timeZone) },
  };
}

// ---------------------------------------------------------------------------------------------
// Parsing: chrono plus the two spoken forms it misses

const WEEKDAYS: Readonly<Record<string, number>> = {
  sunday: 0,
  monday: 1,
  tuesday: 2,
  wednesday: 3,
  thursday: 4,
  friday: 5,
  saturday: 6,
};

const ORDINAL_WORDS: Readonly<Record<string, number>> = (() => {
  const units = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'];
  const teens = ['tenth', 'eleventh', 'twelfth', 'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth']
    .concat(['seventeenth', 'eighteenth', 'nineteenth']);
  const words: Record<string, number> = { twentieth: 20, thirtieth: 30, 'thirty first': 31 };
  units.forEach((w, i) => {
    words[w] = i + 1;
    words[`twenty ${w}`] = 21 + i;
  });
  teens.forEach((w, i) => (words[w] = 10 + i));
  return words;
})();

const HOUR_WORDS: Readonly<Record<string, number>> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};

const MINUTE_WORDS: Readonly<Record<string, number>> = (() => {
  const words: Record<string, number> = { oclock: 0, ten: 10, fifteen: 15, twenty: 20, thirty: 30 };
  words.forty = 40;
  words.fifty = 50;
  ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'].forEach((w, i) => {
    words[`oh ${w}`] = i + 1;
    for (const [tens, value] of [['twenty', 20], ['thirty', 30], ['forty', 40], ['fifty', 50]] as const) {
      words[`${tens} ${w}`] = value + i + 1;
    }
  });
  return words;
})();

/** Regex alternation of phrases, longest first, with a space matching any spaces or a hyphen. */
function alternation(phrases: Iterable<string>): string {
  return [...phrases]
    .sort((a, b) => b.length - a.length)
    .map((p) => p.replace(/ /g, '[\\s-]+'))
    .join('|');
}

function wordKey(text: string): string {
  return text.toLowerCase().replace(/['’]/g, '').replace(/[\s-]+/g, ' ');
}

const NOT_A_DAY_AFTER = '(?:floor|time|times|place|grade|century|row|street|avenue|birthday|anniversary|edition|option|one|person|people|attempt|try)';

const ORDINAL_DAY_PATTERN = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:(?<weekday>${alternation(Object.keys(WEEKDAYS))})\\s*,?\\s+)?(?:on\\s+)?` +
    `(?:(?:the\\s+)?(?<num>3[01]|[12]\\d|0?[1-9])(?:st|nd|rd|th)(?![\\p{L}\\p{N}])(?!\\s+${NOT_A_DAY_AFTER}\\b)` +
    // A word ordinal is too common in other senses ("the second option") unless it ends a phrase.
    `|the\\s+(?<word>${alternation(Object.keys(ORDINAL_WORDS))})(?=\\s*(?:$|[,.!?;:]|\\s(?:at|of|in|around|works?|is|would|please|then|for|sounds|suits?|could|if|or|and)\\b)))`,
  'iu',
);

const ordinalDayParser: Parser = {
  pattern: () => ORDINAL_DAY_PATTERN,
  extract(context: ParsingContext, match: RegExpMatchArray) {
    const groups = match.groups ?? {};
    const day = groups.num ? Number(groups.num) : ORDINAL_WORDS[wordKey(groups.word ?? '')];
    if (!day) return null;
    // The wall clock of the call in the callee's zone (chrono shifts it for us).
    const ref = context.reference.getDateWithAdjustedTimezone();
    let year = ref.getFullYear();
    let month = ref.getMonth() + 1;
    // The next such day: this month if it is still ahead, else the first month that has it.
    if (day < ref.getDate()) ({ year, month } = nextMonth(year, month));
    while (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) ({ year, month } = nextMonth(year, month));
    const components = context.createParsingComponents({ day });
    components.imply('month', month).imply('year', year);
    if (groups.weekday) components.assign('weekday', WEEKDAYS[groups.weekday.toLowerCase()]);
    return components;
  },
};

function nextMonth(year: number, month: number): { year: number; month: number } {
  return month === 12 ? { year: year + 1, month: 1 } : { year, month: month + 1 };
}

const MERIDIEM = '(?<mer>[ap]\\.?\\s?m\\.?|in\\s+the\\s+(?:morning|afternoon|evening)|at\\s+night|tonight)';
const SPOKEN_TIME_PATTERN = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:(?<pre>at|around|say|do|make\\s+it|(?:how|what)\\s+about)\\s+)?` +
    `(?:(?<frac>half|quarter)\\s+(?<dir>past|after|to|before|of)\\s+(?<fhour>${alternation(Object.keys(HOUR_WORDS))}|1[0-2]|[1-9])` +
    `|(?<hour>${alternation(Object.keys(HOUR_WORDS))}|(?<=(?:at|around|say|do|it|about)\\s+)(?:1[0-2]|[1-9]))(?:[\\s-]+(?<min>o['’]?clock|${alternation(Object.keys(MINUTE_WORDS))}))?)` +
    `(?:\\s*${MERIDIEM})?(?![\\p{L}\\p{N}])`,
  'iu',
);

// After "at three" with nothing else marking a time, only these words may follow: "at one point"
// or "at two locations" are not times.
const AFTER_BARE_SPOKEN_HOUR = new Set(
  ('on this next tomorrow today tonight then works work is would could should suits suit sounds ' +
    'please if or and for instead sharp ok okay good fine maybe perhaps').split(' '),
);

const spokenTimeParser: Parser = {
  pattern: () => SPOKEN_TIME_PATTERN,
  extract(context: ParsingContext, match: RegExpMatchArray) {
    const g = match.groups ?? {};
    if (!g.pre && !g.frac && !g.mer && !g.min) return null;
    if (!g.frac && !g.mer && !g.min) {
      const rest = context.text.slice((match.index ?? 0) + match[0].length);
      const next = /^\s*([\p{L}]+)/u.exec(rest)?.[1]?.toLowerCase();
      if (next && !AFTER_BARE_SPOKEN_HOUR.has(next)) return null;
    }
    const hourText = (g.fhour ?? g.hour ?? '').toLowerCase();
    let hour = HOUR_WORDS[hourText] ?? Number(hourText);
    let minute = 0;
    if (g.frac) {
      const quarterTo = g.frac.toLowerCase() === 'quarter' && /^(to|before|of)$/i.test(g.dir ?? '');
      if (quarterTo) {
        hour = hour === 1 ? 12 : hour - 1;
        minute = 45;
      } else {
        minute = g.frac.toLowerCase() === 'half' ? 30 : 15;
      }
    } else if (g.min) {
      minute = MINUTE_WORDS[wordKey(g.min)] ?? 0;
    }
    const components: { hour: number; minute: number; meridiem?: number } = { hour, minute };
    if (g.mer) {
      const pm = !/^(a|in\s+the\s+morning)/i.test(g.mer);
      components.meridiem = pm ? chrono.Meridiem.PM : chrono.Meridiem.AM;
      if (pm && hour < 12) components.hour = hour + 12;
      if (!pm && hour === 12) components.hour = 0;
    }
    return components;
  },
};

const parser = chrono.casual.clone();
parser.parsers.push(ordinalDayParser, spokenTimeParser);

/** A day and/or time of day, as far as the words or the conversation fix it. */
interface Slot {
  date: WallDate | null;
  time: WallTime | null;
  /** The date came from a bare weekday, so which week is a guess that may be moved. */
  weekdayFlexible: boolean;
  /** Offset fixed by the words themselves ("3pm EST", "in two hours"), else null. */
  offsetMinutes: number | null;
}

interface Mention {
  start: number;
  end: number;
  slot: Slot;
}

function parseSlots(text: string, call: CallContext): Mention[] {
  return parser
    .parse(text, call.reference, { forwardDate: true })
    .filter((r) => !/^(?:last|past|previous)\b/i.test(r.text) && !r.start.tags().has('casualReference/now'))
    .map((r) => ({ start: r.index, end: r.index + r.text.length, slot: toSlot(r) }));
}

function toSlot(result: ParsedResult): Slot {
  const c = result.start;
  const value = (name: Component): number => c.get(name) ?? 0;
  const hasDate = c.isCertain('day') || c.isCertain('weekday');
  let time: WallTime | null = null;
  if (c.isCertain('hour')) {
    let hour = value('hour');
    const leadingZero = /(?<!\d)0\d[:.h]\d/.test(result.text);
    if (!c.isCertain('meridiem') && hour >= 1 && hour <= 7 && !leadingZero) hour += 12;
    time = { hour, minute: value('minute') };
  }
  return {
    date: hasDate ? { year: value('year'), month: value('month'), day: value('day') } : null,
    time,
    weekdayFlexible: c.isCertain('weekday') && !c.isCertain('day') && !/\bnext\b/i.test(result.text),
    offsetMinutes: c.isCertain('timezoneOffset') ? value('timezoneOffset') : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Agreement and refusal

const NEGATIONS = new PhraseSet([
  'no', 'not', 'never', 'nope', 'nah', 'cannot', "can't", "couldn't", "won't", "don't", "doesn't",
  "didn't", "isn't", "aren't", "wasn't", "wouldn't", "shouldn't", 'unable', 'unavailable', 'busy',
  'impossible', 'booked', 'neither', 'nor', 'except', 'instead of', 'rather than', 'than',
  'other than', 'apart from', 'conflict', 'away', 'out of town', 'out of the office', 'on vacation',
  'on holiday', 'bad', 'tough', 'difficult', 'tricky',
]);

// Negation words that point forward at the next mention ("Wednesday rather than Tuesday").
const FORWARD_NEGATIONS = ['instead of', 'rather than', 'other than', 'apart from', 'but not', 'except', 'not', 'than']
  .map(tokenize);

// Phrases built from negation words that agree.
const NOT_NEGATIONS = [
  'no problem', 'no worries', 'not a problem', 'why not', 'not bad', "can't wait", 'cannot wait',
  "don't mind", 'do not mind', "doesn't matter", 'no doubt', 'not at all', 'never mind', 'no rush',
].map(tokenize);

const AGREEMENTS = new PhraseSet([
  'yes', 'yeah', 'yep', 'yup', 'sure', 'ok', 'okay', 'alright', 'all right', 'fine', 'good', 'great',
  'perfect', 'excellent', 'lovely', 'works', 'work', 'suits', 'suit', 'sounds', 'agreed', 'agree',
  'deal', 'absolutely', 'definitely', 'certainly', 'of course', "let's", 'lets', 'let us',
  'how about', 'what about', 'can do', 'could do', 'can make', 'could make', "i'll be", 'i will be',
  'free', 'available', 'book', 'schedule', 'put me down', 'see you', 'go with', 'go for', 'say',
  'prefer', 'better', 'rather', 'happy', 'glad', 'confirm', 'confirmed', 'correct', 'count me in',
  "i'm in", 'could we', 'can we', 'shall we', 'we could', 'we can', 'make it', 'maybe', 'perhaps',
  'no problem', 'no worries', 'why not', "don't mind", 'not at all', 'no rush',
]);

const FILLERS = new Set(
  ('um umm uh uhh er erm hmm hm mm ah oh well so then on at in the a this that it its is be i guess ' +
    'think suppose say please actually just like or and maybe perhaps probably around about instead again')
    .split(' '),
);

const PROPOSALS = new PhraseSet([
  'would', 'could', 'can', 'does', 'do', 'how about', 'what about', 'shall', 'should', "let's",
  'suit', 'suits', 'work', 'works', 'free', 'available', 'book', 'schedule', 'put you down',
  'confirm', 'see you', 'pencil', 'set up', 'arrange',
]);

const CLAUSE_BREAK =
  /[.!?;]+(?=\s|$)|[,:]|\s[-\u2013\u2014]+\s|(?<![\p{L}\p{N}])(?:but|however|although|though|whereas|otherwise|unless)(?![\p{L}\p{N}])/giu;

interface Assessed extends Mention {
  negated: boolean;
  agreed: boolean;
}

/** Removes the phrases that look negative but agree, so they are not read as refusals. */
function withoutNotNegations(tokens: string[]): string[] {
  const out = [...tokens];
  for (const phrase of NOT_NEGATIONS) {
    for (let i = 0; i + phrase.length <= out.length; i++) {
      if (phrase.every((w, j) => out[i + j] === w)) out.splice(i, phrase.length, '_');
    }
  }
  return out;
}

function negates(text: string): boolean {
  return NEGATIONS.matches(withoutNotNegations(tokenize(text)));
}

function agrees(tokens: string[]): boolean {
  return AGREEMENTS.matches(tokens);
}

/** Drops the negation words at the end of a gap that belong to the mention after it. */
function withoutTrailingForwardNegation(text: string): string[] {
  const tokens = withoutNotNegations(tokenize(text));
  let changed = true;
  while (changed) {
    changed = false;
    for (const phrase of FORWARD_NEGATIONS) {
      const tail = tokens.slice(tokens.length - phrase.length);
      if (tokens.length >= phrase.length && phrase.every((w, i) => tail[i] === w)) {
        tokens.splice(tokens.length - phrase.length);
        changed = true;
      }
    }
  }
  return tokens;
}

function assess(text: string, mentions: Mention[]): Assessed[] {
  const inMention = (i: number) => mentions.some((m) => i >= m.start && i < m.end);
  const breaks = [...text.matchAll(CLAUSE_BREAK)].filter((b) => !inMention(b.index ?? 0));
  const clauseOf = (m: Mention): [number, number] => {
    let start = 0;
    let end = text.length;
    for (const b of breaks) {
      const at = b.index ?? 0;
      if (at + b[0].length <= m.start) start = at + b[0].length;
      else if (at >= m.end) {
        end = at;
        break;
      }
    }
    return [start, end];
  };

  const assessed: Assessed[] = [];
  mentions.forEach((m, i) => {
    const [start, end] = clauseOf(m);
    const prev = i > 0 && mentions[i - 1].end > start ? assessed[i - 1] : undefined;
    const next = i + 1 < mentions.length && mentions[i + 1].start < end ? mentions[i + 1] : undefined;
    const before = text.slice(prev ? prev.end : start, m.start);
    const after = text.slice(m.end, next ? next.start : end);
    let negated: boolean;
    if (prev && /^\s*(?:or|and|nor|&|\/)?\s*$/i.test(before)) {
      negated = prev.negated; // "I can't do Tuesday or Wednesday"
    } else {
      const afterNegates = next
        ? NEGATIONS.matches(withoutTrailingForwardNegation(after))
        : negates(after);
      negated = negates(before) || afterNegates;
    }
    // What the clause says besides its mentions: nothing but fillers makes a bare answer.
    let rest = '';
    let cursor = start;
    for (const other of mentions.filter((o) => o.start >= start && o.end <= end)) {
      rest += `${text.slice(cursor, other.start)} `;
      cursor = other.end;
    }
    rest += text.slice(cursor, end);
    const bare = tokenize(rest).every((t) => FILLERS.has(t));
    // Cues are looked for in the whole clause: a mention may begin with one ("how about four").
    const cue = agrees(tokenize(text.slice(start, end)));
    assessed.push({ ...m, negated, agreed: !negated && (bare || cue) });
  });
  return assessed;
}

function utteranceAgrees(text: string): boolean {
  const tokens = tokenize(text);
  return agrees(tokens) && !NEGATIONS.matches(withoutNotNegations(tokens));
}

function isProposal(text: string): boolean {
  return text.includes('?') || PROPOSALS.matches(tokenize(text));
}

// ---------------------------------------------------------------------------------------------
// Completing and placing slots

interface ContextDate {
  date: WallDate;
  flexible: boolean;
}

interface Placed {
  instant: number;
  date: WallDate;
  time: WallTime;
}

/** Fills a missing day or time from the standing proposal or the day under discussion (rule 6). */
function complete(slot: Slot, proposal: Slot | null, context: ContextDate | null): Slot {
  let { date, weekdayFlexible } = slot;
  let { time } = slot;
  if (!date && time) {
    if (proposal?.date) ({ date, weekdayFlexible } = proposal);
    else if (context) ({ date, flexible: weekdayFlexible } = context);
  }
  if (date && !time && proposal?.time) time = proposal.time;
  return { ...slot, date, time, weekdayFlexible };
}

function instantOf(date: WallDate, time: WallTime, offsetMinutes: number | null, call: CallContext): number {
  if (offsetMinutes === null) return wallTimeToInstant(date, time, call.timeZone);
  return Date.UTC(date.year, date.month - 1, date.day, time.hour, time.minute) - offsetMinutes * 60_000;
}

/** The instant of a slot with a time, if it is after the call. */
function place(slot: Slot, call: CallContext): Placed | null {
  const { time } = slot;
  if (!time) return null;
  let date = slot.date ?? call.today;
  let instant = instantOf(date, time, slot.offsetMinutes, call);
  if (!slot.date && instant <= call.instant) {
    date = addDays(date, 1);
    instant = instantOf(date, time, slot.offsetMinutes, call);
  }
  if (slot.weekdayFlexible) {
    // The parser chose the week before rule 2 moved the hour: take the first such weekday ahead.
    const weekEarlier = addDays(date, -7);
    const earlierInstant = instantOf(weekEarlier, time, slot.offsetMinutes, call);
    if (earlierInstant > call.instant) {
      date = weekEarlier;
      instant = earlierInstant;
    } else if (instant <= call.instant) {
      date = addDays(date, 7);
      instant = instantOf(date, time, slot.offsetMinutes, call);
    }
  }
  return instant > call.instant ? { instant, date, time } : null;
}

/** Whether a refused mention names the agreed meeting's day or time (rule 8). */
function refuses(slot: Slot, agreed: Placed): boolean {
  const sameTime = (t: WallTime) => t.hour === agreed.time.hour && t.minute === agreed.time.minute;
  if (slot.date) {
    const sameDay = slot.weekdayFlexible
      ? weekdayOf(slot.date) === weekdayOf(agreed.date)
      : slot.date.year === agreed.date.year && slot.date.month === agreed.date.month && slot.date.day === agreed.date.day;
    return sameDay && (!slot.time || sameTime(slot.time));
  }
  return slot.time !== null && sameTime(slot.time);
}

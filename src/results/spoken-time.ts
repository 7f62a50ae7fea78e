// Dates and times as people say them on a call, for the meeting time (meeting-time.ts, rules 1, 2
// and 7). chrono-node reads them (English, casual mode), extended with two parsers it lacks for
// speech: a bare ordinal day ("the 5th", "Monday the 9th", "the twenty-first") and spoken clock
// times ("half past four", "quarter to five", "at three thirty", "four o'clock", "how about 11",
// "can we make it 4"). Words are read against the call time on the callee's wall clock: chrono
// gets the zone's offset at the call instant, so "tomorrow" is the callee's tomorrow.
import * as chrono from 'chrono-node';
import type { Component, ParsedResult, Parser, ParsingContext, Refiner } from 'chrono-node';
import { Temporal } from 'temporal-polyfill';
import { zoneOffsetMinutes } from './time-zones';

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
  const teens = ['tenth', 'eleventh', 'twelfth', 'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth'].concat([
    'seventeenth',
    'eighteenth',
    'nineteenth',
  ]);
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
    for (const [tens, value] of [
      ['twenty', 20],
      ['thirty', 30],
      ['forty', 40],
      ['fifty', 50],
    ] as const) {
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
  return text
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[\s-]+/g, ' ');
}

const NOT_A_DAY_AFTER =
  '(?:floor|time|times|place|grade|century|row|street|avenue|birthday|anniversary|edition|option|one|person|people|attempt|try)';

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
    let month = Temporal.PlainYearMonth.from({ year: ref.getFullYear(), month: ref.getMonth() + 1 });
    // The next such day: this month if it is still ahead, else the first month that has it.
    if (day < ref.getDate()) month = month.add({ months: 1 });
    while (day > month.daysInMonth) month = month.add({ months: 1 });
    const components = context.createParsingComponents({ day });
    components.imply('month', month.month).imply('year', month.year);
    if (groups.weekday) components.assign('weekday', WEEKDAYS[groups.weekday.toLowerCase()]);
    return components;
  },
};

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
  (
    'on this next tomorrow today tonight then works work is would could should suits suit sounds ' +
    'please if or and for instead sharp ok okay good fine maybe perhaps'
  ).split(' '),
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
      // "at night" and "tonight": nine to eleven are evening hours, twelve is midnight, one to four
      // are past it ("two at night"); "a.m." and "in the morning" say morning.
      const night = /^(?:at\s+night|tonight)/i.test(g.mer);
      const pm = night ? hour >= 5 && hour < 12 : !/^(?:a\.?\s?m|in\s+the\s+morning)/i.test(g.mer);
      components.meridiem = pm ? chrono.Meridiem.PM : chrono.Meridiem.AM;
      if (pm && hour < 12) components.hour = hour + 12;
      if (!pm && hour === 12) components.hour = 0;
    }
    return components;
  },
};

// chrono's own test for a zone abbreviation after a time: two to four letters, in any case.
const ABBREVIATION_AFTER = /^\s*,?\s*\(?([A-Z]{2,4})\)?(?=\W|$)/i;

/**
 * chrono's abbreviation refiner, taking only abbreviations written in capitals: it read "Friday at
 * 3pm, get it booked" at Gulf time (GET) and "3pm eat lunch" at East Africa time. The zone names
 * people say in lower case are read before chrono sees the words (spoken-zones.ts).
 */
function capitalsOnly(refiner: Refiner): Refiner {
  return {
    refine(context, results) {
      const written = results.filter((r) => {
        const match = ABBREVIATION_AFTER.exec(context.text.slice(r.index + r.text.length));
        return !match || match[1] === match[1]!.toUpperCase();
      });
      refiner.refine(context, written);
      return results;
    },
  };
}

const parser = chrono.casual.clone();
parser.parsers.push(ordinalDayParser, spokenTimeParser);
parser.refiners = parser.refiners.map((r) =>
  r.constructor.name === 'ExtractTimezoneAbbrRefiner' ? capitalsOnly(r) : r,
);

/** A day and/or time of day, as far as the words or the conversation fix it. */
export interface Slot {
  date: Temporal.PlainDate | null;
  time: Temporal.PlainTime | null;
  /** The date came from a bare weekday, so which week is a guess that may be moved. */
  weekdayFlexible: boolean;
  /** Offset fixed by the words themselves ("3pm EST", "in two hours"), else null. */
  offsetMinutes: number | null;
}

/** Where in the utterance a day or time is named, and what it names. */
export interface Mention {
  start: number;
  end: number;
  slot: Slot;
}

/**
 * The days and times named in `text`, in order, read on the callee's wall clock at the call; past
 * ones named as such ("last Tuesday") and "now" are left out.
 */
export function parseMentions(text: string, callTime: Date, timeZone: string): Mention[] {
  const reference: chrono.ParsingReference = {
    instant: callTime,
    timezone: zoneOffsetMinutes(callTime.getTime(), timeZone),
  };
  return parser
    .parse(text, reference, { forwardDate: true })
    .filter((r) => !/^(?:last|past|previous)\b/i.test(r.text) && !r.start.tags().has('casualReference/now'))
    .map((r) => {
      const end = r.index + r.text.length;
      return { start: r.index, end, slot: toSlot(r, MORNING_AFTER.test(text.slice(end))) };
    });
}

// The words of a time that say it is before noon ("tomorrow morning at 7:30", "7 a.m."), and the
// same words just after it ("7:30 tomorrow morning", which chrono reads as two results).
const MORNING = /\b(?:morning|a\.?\s?m\b\.?)/i;
const MORNING_AFTER = /^[\s,]*(?:in\s+the\s+)?morning\b/i;
const QUARTER_TO = /\bquarter\s+(?:to|before|of)\b/i;

function toSlot(result: ParsedResult, morningAfter = false): Slot {
  const c = result.start;
  const value = (name: Component): number => c.get(name) ?? 0;
  const hasDate = c.isCertain('day') || c.isCertain('weekday');
  let time: Temporal.PlainTime | null = null;
  if (c.isCertain('hour')) {
    let hour = value('hour');
    const leadingZero = /(?<!\d)0\d[:.h]\d/.test(result.text);
    const morning = morningAfter || c.tags().has('casualReference/morning') || MORNING.test(result.text);
    // Rule 2 looks at the hour said: "quarter to eight" (7:45) names eight, a morning hour.
    const said = QUARTER_TO.test(result.text) ? hour + 1 : hour;
    // Rule 2: a bare hour from 1 to 7 is in the afternoon, unless the words say morning.
    if (!c.isCertain('meridiem') && said >= 1 && said <= 7 && !leadingZero && !morning) hour += 12;
    time = Temporal.PlainTime.from({ hour, minute: value('minute') });
  }
  return {
    date: hasDate ? Temporal.PlainDate.from({ year: value('year'), month: value('month'), day: value('day') }) : null,
    time,
    weekdayFlexible: c.isCertain('weekday') && !c.isCertain('day') && !/\bnext\b/i.test(result.text),
    offsetMinutes: c.isCertain('timezoneOffset') ? value('timezoneOffset') : null,
  };
}

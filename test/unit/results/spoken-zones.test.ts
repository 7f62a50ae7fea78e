// Which words name a time zone, and which mention each belongs to, before any agreement rule.
import { describe, expect, it } from 'vitest';
import { findSpokenZones, parseZonedMentions } from '../../../src/results/spoken-zones';
import type { Speaker } from '../../../src/results/text';

// Monday 2 March 2026, 09:00 in Chicago.
const MONDAY_CALL = new Date('2026-03-02T15:00:00.000Z');

/** Each zone named in `text` as its words and its IANA zone (null: the callee's). */
function zones(text: string, speaker: Speaker = 'human') {
  return findSpokenZones(text, speaker).map((z) => [text.slice(z.start, z.end), z.timeZone]);
}

function mentions(text: string, calleeZone = 'America/Chicago', speaker: Speaker = 'human') {
  return parseZonedMentions(text, MONDAY_CALL, calleeZone, speaker).map((m) => ({
    words: text.slice(m.start, m.end),
    time: m.slot.time?.toString().slice(0, 5) ?? null,
    timeZone: m.slot.timeZone,
    offsetMinutes: m.slot.offsetMinutes,
  }));
}

describe('findSpokenZones', () => {
  it.each([
    ['3pm Eastern', 'Eastern', 'America/New_York'],
    ['3pm eastern time', 'eastern time', 'America/New_York'],
    ['3pm Eastern Daylight Time', 'Eastern Daylight Time', 'America/New_York'],
    ['3pm East Coast time', 'East Coast time', 'America/New_York'],
    ['3 pm ET', 'ET', 'America/New_York'],
    ['3pm est', 'est', 'America/New_York'],
    ['3pm EDT', 'EDT', 'America/New_York'],
    ['3pm Central time zone', 'Central time zone', 'America/Chicago'],
    ['3pm CDT', 'CDT', 'America/Chicago'],
    ['3pm Mountain Standard Time', 'Mountain Standard Time', 'America/Denver'],
    ['3pm MT', 'MT', 'America/Denver'],
    ['3pm Pacific', 'Pacific', 'America/Los_Angeles'],
    ['3pm PST', 'PST', 'America/Los_Angeles'],
    ['3pm Alaska', 'Alaska', 'America/Anchorage'],
    ['3pm Hawaii-Aleutian time', 'Hawaii-Aleutian time', 'Pacific/Honolulu'],
    ['3pm Atlantic', 'Atlantic', 'America/Halifax'],
    ['3pm Newfoundland time', 'Newfoundland time', 'America/St_Johns'],
    ['3pm UTC', 'UTC', 'UTC'],
    ['3pm GMT', 'GMT', 'UTC'],
    ['3pm Greenwich Mean Time', 'Greenwich Mean Time', 'UTC'],
    ['3pm London time', 'London time', 'Europe/London'],
    ['3pm UK time', 'UK time', 'Europe/London'],
    ['3pm CET', 'CET', 'Europe/Paris'],
    ['3pm CEST', 'CEST', 'Europe/Paris'],
    ['3pm Central European Summer Time', 'Central European Summer Time', 'Europe/Paris'],
    ['3pm India Standard Time', 'India Standard Time', 'Asia/Kolkata'],
    // ambiguous: India, Ireland or Israel; Atlantic or Arabia; Queensland or New South Wales
    ['3pm IST', 'IST', null],
    ['3pm AST', 'AST', null],
    ['3pm Australian Eastern Standard Time', 'Australian Eastern Standard Time', null],
    // a bare name or abbreviation at the end, before punctuation or a dash, or a word said after times
    ['3pm Eastern.', 'Eastern', 'America/New_York'],
    ['3pm PT, okay?', 'PT', 'America/Los_Angeles'],
    ['3pm Pacific \u2014 works', 'Pacific', 'America/Los_Angeles'],
    ['3pm Central on Friday', 'Central', 'America/Chicago'],
    ['3pm MT works', 'MT', 'America/Denver'],
    ['3pm Eastern Thursday', 'Eastern', 'America/New_York'],
    ['3pm Pacific Standard works', 'Pacific Standard', 'America/Los_Angeles'],
  ])('%j names %j: %s', (text, words, timeZone) => {
    expect(zones(text)).toEqual([[words, timeZone]]);
  });

  it.each([
    // offsets, which chrono reads itself
    '3pm GMT+2',
    '3pm UTC-05:00',
    // another zone than the region's
    '3pm Central Africa time',
    '3pm Pacific Island time',
    // not on its own: "London" alone is a place, "Mid-Atlantic" a region
    'in London at 3pm',
    'the Mid-Atlantic office',
    // inside words
    'the best time is Tuesday',
  ])('%j names no zone', (text) => {
    expect(zones(text)).toEqual([]);
  });

  // A bare region name or abbreviation followed by another word is part of a name or a noun.
  it.each([
    'Tuesday at 10am Mountain View office works',
    '3pm Atlantic City works',
    '3pm Central Park',
    '3pm central office',
    '3pm PT session',
    '3pm Mt. Vernon',
    '3pm EST Office hours',
  ])('%j names no zone', (text) => {
    expect(zones(text)).toEqual([]);
  });

  it('reads a long hostile utterance in linear time', () => {
    const length = 60_000;
    const fill = (unit: string, head = '') =>
      head + unit.repeat(Math.ceil(length / unit.length)).slice(0, length - head.length);
    for (const hostile of [
      fill(' ', 'Eastern'), // each candidate's look past it reads the spaces once
      fill('a', 'Central '), // "Central Africa time"'s word, backtracked letter by letter
      fill(' -', 'Pacific x'),
      fill('ET '), // a candidate every three characters, each rejected by the next
      fill('Mt. '),
      fill('Eastern Mountain View office '),
    ]) {
      expect(hostile).toHaveLength(length);
      const started = performance.now();
      findSpokenZones(hostile, 'human');
      // About 1 to 20 ms each on this machine; a quadratic read of 60,000 characters takes seconds. The
      // bound leaves room for a loaded machine (it took 339 ms once beside a CI run).
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });

  it('takes "my time" from the human and "your time" from the agent as the callee\'s clock', () => {
    expect(zones('3pm my time', 'human')).toEqual([['my time', null]]);
    expect(zones('3pm your local time', 'agent')).toEqual([['your local time', null]]);
    expect(zones('3pm local time', 'agent')).toEqual([['local time', null]]);
    // the agent's or template's zone, which the options do not give
    expect(zones('3pm your time', 'human')).toEqual([]);
    expect(zones('3pm my time', 'agent')).toEqual([]);
  });
});

describe('parseZonedMentions', () => {
  it('gives a mention the zone named right after it, and takes its words into the mention', () => {
    expect(mentions('Tuesday at 3pm Eastern time works')).toEqual([
      { words: 'Tuesday at 3pm Eastern time', time: '15:00', timeZone: 'America/New_York', offsetMinutes: null },
    ]);
    expect(mentions('How about 3pm EST on Friday')).toEqual([
      { words: 'How about 3pm EST on Friday', time: '15:00', timeZone: 'America/New_York', offsetMinutes: null },
    ]);
  });

  it('reads a spoken hour followed by a zone as a time', () => {
    expect(mentions('at three Eastern')).toEqual([
      { words: 'at three Eastern', time: '15:00', timeZone: 'America/New_York', offsetMinutes: null },
    ]);
  });

  it("gives an ambiguous zone the callee's, and a region the callee keeps standard time of the callee's", () => {
    expect(mentions('3pm IST')[0].timeZone).toBe('America/Chicago');
    expect(mentions('3pm Mountain', 'America/Phoenix')[0].timeZone).toBe('America/Phoenix');
    expect(mentions('3pm CST', 'America/Regina')[0].timeZone).toBe('America/Regina');
    expect(mentions('3pm Mountain', 'America/Chicago')[0].timeZone).toBe('America/Denver');
    expect(mentions('How about Friday at 10am your time?', 'America/Denver', 'agent')[0].timeZone).toBe(
      'America/Denver',
    );
  });

  it('leaves a mention without a zone next to it, and offsets in the words, as chrono reads them', () => {
    expect(mentions('Tuesday at 3pm at the Central office')[0]).toEqual({
      words: 'Tuesday at 3pm',
      time: '15:00',
      timeZone: null,
      offsetMinutes: null,
    });
    expect(mentions('Tuesday at 3pm GMT+2')[0]).toMatchObject({ timeZone: null, offsetMinutes: 120 });
  });

  it('hides an abbreviation that is not a zone from chrono, which would read it as one', () => {
    expect(mentions('Tuesday at 3pm PT session')).toEqual([
      { words: 'Tuesday at 3pm', time: '15:00', timeZone: null, offsetMinutes: null },
    ]);
  });

  it("never reads a daylight name as the clock of a callee who keeps the region's standard time", () => {
    expect(mentions('July 7 at 3pm MDT', 'America/Phoenix')[0].timeZone).toBe('America/Denver');
    expect(mentions('July 7 at 3pm Mountain Daylight Time', 'America/Phoenix')[0].timeZone).toBe('America/Denver');
    expect(mentions('July 7 at 3pm Mountain Summer Time', 'America/Phoenix')[0].timeZone).toBe('America/Denver');
    expect(mentions('July 7 at 3pm CDT', 'America/Regina')[0].timeZone).toBe('America/Chicago');
    expect(mentions('July 7 at 3pm Central Daylight Time', 'America/Regina')[0].timeZone).toBe('America/Chicago');
  });
});

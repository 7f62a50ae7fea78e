// What the parsing module finds in words, before any agreement rule looks at it.
import { describe, expect, it } from 'vitest';
import { parseMentions } from '../../../src/results/spoken-time';

// Monday 2 March 2026, 10:00 in New York.
const MONDAY_CALL = new Date('2026-03-02T15:00:00.000Z');

/** Each mention as its words, its day and time of day (ISO) and whether its week may move. */
function mentions(text: string, callTime = MONDAY_CALL, timeZone = 'America/New_York') {
  return parseMentions(text, callTime, timeZone).map((m) => ({
    words: text.slice(m.start, m.end),
    date: m.slot.date?.toString() ?? null,
    time: m.slot.time?.toString().slice(0, 5) ?? null,
  }));
}

describe('parseMentions: spoken clock times', () => {
  it.each([
    ['half past four', '16:30'],
    ['quarter to five', '16:45'],
    ['quarter to one', '12:45'],
    ['at three thirty', '15:30'],
    ["four o'clock", '16:00'],
    ['how about 11', '11:00'],
    ['make it 4', '16:00'],
    ['ten in the evening', '22:00'],
    // "at night" is no "a.m.": evening hours, midnight, and the small hours past it
    ['nine at night', '21:00'],
    ['eleven at night', '23:00'],
    ['twelve at night', '00:00'],
    ['two at night', '02:00'],
    ['at 9 at night', '21:00'],
    ['eleven tonight', '23:00'],
    ['nine in the morning', '09:00'],
    ['7 a.m.', '07:00'],
    // rule 2 reads the hour said: "quarter to eight" names eight, a morning hour
    ['quarter to eight', '07:45'],
    ['quarter to eight in the evening', '19:45'],
    // rule 2: a bare hour from 1 to 7 is in the afternoon, unless written with a leading zero
    ['at 07:30', '07:30'],
  ])('%j is %s', (text, time) => {
    expect(mentions(text)).toEqual([{ words: text, date: null, time }]);
  });

  it.each(['at one point', 'I have two kids at home', 'the second option', 'last Tuesday at 3pm', 'now'])(
    'finds nothing in %j',
    (text) => {
      expect(mentions(text)).toEqual([]);
    },
  );
});

describe('parseMentions: ordinal days', () => {
  it.each([
    ['the 5th', MONDAY_CALL, '2026-03-05'],
    ['Monday the 9th', MONDAY_CALL, '2026-03-09'],
    ['the twenty-first', MONDAY_CALL, '2026-03-21'],
    // already past this month: the next month
    ['the 1st', MONDAY_CALL, '2026-04-01'],
    // the next month that has the day
    ['the 31st', new Date('2026-04-10T15:00:00Z'), '2026-05-31'],
    ['the 30th', new Date('2026-02-10T15:00:00Z'), '2026-03-30'],
  ])('%j from %s is %s', (text, callTime, date) => {
    expect(mentions(text, callTime)).toEqual([{ words: text, date, time: null }]);
  });
});

describe("parseMentions: the call on the callee's wall clock", () => {
  it('reads "tomorrow" as the day after the call in the callee\'s zone', () => {
    expect(mentions('tomorrow at noon')[0].date).toBe('2026-03-03');
    // 15:00 UTC is already 02:00 on Tuesday in Sydney
    expect(mentions('tomorrow at noon', MONDAY_CALL, 'Australia/Sydney')[0].date).toBe('2026-03-04');
  });

  it("keeps an offset the words state, and says when a weekday's week may move", () => {
    const [est] = parseMentions('3pm EST', MONDAY_CALL, 'Europe/Paris');
    expect(est.slot.offsetMinutes).toBe(-300);
    expect(parseMentions('Thursday at 4', MONDAY_CALL, 'UTC')[0].slot.weekdayFlexible).toBe(true);
    expect(parseMentions('next Thursday at 4', MONDAY_CALL, 'UTC')[0].slot.weekdayFlexible).toBe(false);
  });

  it('takes no zone from an ordinary word after a time, only from capitals', () => {
    // chrono read these at Gulf time (GET) and East Africa time (EAT).
    for (const text of ['Friday at 3pm, get it booked', 'Friday 3pm eat lunch first']) {
      const [friday] = parseMentions(text, MONDAY_CALL, 'America/New_York');
      expect(friday.slot.offsetMinutes, text).toBeNull();
      expect(text.slice(friday.start, friday.end), text).toMatch(/3pm$/);
    }
    expect(parseMentions('Friday 3pm CET', MONDAY_CALL, 'America/New_York')[0].slot.offsetMinutes).toBe(60);
    expect(parseMentions('Friday at 3pm GMT+2', MONDAY_CALL, 'America/New_York')[0].slot.offsetMinutes).toBe(120);
  });
});

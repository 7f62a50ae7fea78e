import { describe, expect, it } from 'vitest';
import {
  CallingWindowError,
  checkCallingWindow,
  describeCallingWindow,
  isTimeZone,
  parseCallingHoursRule,
  validateCallingWindow,
  type CallingWindow,
} from '../../../src/calling-hours/calling-window';
import { timeZonesOfNumber } from '../../../src/calling-hours/callee-time-zones';

const weekdays9to20: CallingWindow = { rules: [parseCallingHoursRule('Mon-Fri 09:00-20:00')], skipDates: [] };
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const ny = ['America/New_York'];
/** What the check answers at each instant: `open until <closesAt>` or `closed until <opensAt>`. */
const answers = (window: CallingWindow, instants: string[]) =>
  instants.map((instant) => {
    const check = checkCallingWindow(window, ny, at(instant));
    if (check.open) return `open until ${iso(check.closesAt)}`;
    return `closed until ${check.opensAt === null ? 'never' : iso(check.opensAt)}`;
  });

describe('parsing and validation', () => {
  it('reads day ranges, lists, wrapping ranges and daily', () => {
    expect(parseCallingHoursRule('Mon-Fri 09:00-20:00')).toEqual({
      days: [1, 2, 3, 4, 5],
      start: '09:00',
      end: '20:00',
    });
    expect(parseCallingHoursRule('sat,sun 10:00-14:30').days).toEqual([6, 7]);
    expect(parseCallingHoursRule('Fri-Mon 08:00-24:00').days).toEqual([1, 5, 6, 7]);
    expect(parseCallingHoursRule('daily 00:00-24:00').days).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Days by their start, three letters at least, and a list with spaces after its commas.
    expect(parseCallingHoursRule('Tues-Thurs 09:00-17:00').days).toEqual([2, 3, 4]);
    expect(parseCallingHoursRule('Monday, Wednesday 09:00-17:00').days).toEqual([1, 3]);
    expect(describeCallingWindow({ ...weekdays9to20, skipDates: ['2026-12-25'] })).toBe(
      'Mon,Tue,Wed,Thu,Fri 09:00-20:00; not on 2026-12-25',
    );
  });

  it('refuses a window that can never open, and malformed parts', () => {
    expect(() => validateCallingWindow({ rules: [], skipDates: [] })).toThrow(CallingWindowError);
    expect(() => validateCallingWindow({ rules: [{ days: [], start: '09:00', end: '20:00' }], skipDates: [] })).toThrow(
      /at least one day/,
    );
    // Hours across midnight are two rules; the refusal says how to write them.
    expect(() => parseCallingHoursRule('Mon-Fri 22:00-02:00')).toThrow(
      /22:00-02:00 cross midnight.*"Mon-Fri 22:00-24:00" and "Tue-Sat 00:00-02:00"/,
    );
    expect(() => parseCallingHoursRule('Mon-Fri 09:00-00:00')).toThrow(/end at midnight: write the end as 24:00/);
    expect(() => parseCallingHoursRule('Mon-Fri 09:00-09:00')).toThrow(/empty/);
    expect(() => parseCallingHoursRule('Mon-Fri 25:00-26:00')).toThrow(/HH:MM/);
    expect(() => parseCallingHoursRule('Mon-Fri 9:00-17:00')).toThrow(/the start must be .* HH:MM .*got "9:00"/);
    expect(() => parseCallingHoursRule('Funday 09:00-10:00')).toThrow(/not a day/);
    // A word that only begins like a day is none.
    expect(() => parseCallingHoursRule('Monkey 09:00-10:00')).toThrow(/"Monkey" is not a day/);
    expect(() => parseCallingHoursRule('Fridge-Sun 09:00-10:00')).toThrow(/"Fridge" is not a day/);
    expect(() => parseCallingHoursRule('weekdays')).toThrow(/must look like/);
    expect(() => validateCallingWindow({ ...weekdays9to20, skipDates: ['2026-02-30'] })).toThrow(/not a date/);
    expect(() => validateCallingWindow({ ...weekdays9to20, skipDates: ['25.12.2026'] })).toThrow(/YYYY-MM-DD/);
  });
});

describe('isTimeZone', () => {
  it('takes zone names, not offsets or date-times that carry a zone', () => {
    for (const zone of ['America/New_York', 'UTC', 'Etc/GMT+5', 'America/Argentina/Buenos_Aires'])
      expect(isTimeZone(zone), zone).toBe(true);
    // Temporal reads a zone from each of these too; an offset keeps no daylight saving.
    for (const notZone of [
      '+05:30',
      '-00:00',
      '2026-01-01T00:00Z',
      '2026-01-01T00:00+01:00[Europe/Paris]',
      'Mars/Olympus',
    ])
      expect(isTimeZone(notZone), notZone).toBe(false);
  });
});

describe('checkCallingWindow', () => {
  it("is open inside the hours in the callee's zone, and says when it closes", () => {
    // Monday 2026-11-23 10:00 in New York is 15:00 UTC.
    expect(checkCallingWindow(weekdays9to20, ny, at('2026-11-23T15:00:00Z'))).toEqual({
      open: true,
      closesAt: at('2026-11-24T01:00:00Z'),
    });
    // Hours ending at 24:00 close at the next midnight: Monday 21:00 local until Tuesday 00:00 (05:00 UTC).
    const evenings: CallingWindow = { rules: [parseCallingHoursRule('Mon-Fri 20:00-24:00')], skipDates: [] };
    expect(checkCallingWindow(evenings, ny, at('2026-11-24T02:00:00Z'))).toEqual({
      open: true,
      closesAt: at('2026-11-24T05:00:00Z'),
    });
  });

  it('waits for the next opening: the evening, the weekend, a skipped holiday', () => {
    // Monday 21:00 local: opens Tuesday 09:00 local (14:00 UTC).
    expect(checkCallingWindow(weekdays9to20, ny, at('2026-11-24T02:00:00Z'))).toEqual({
      open: false,
      opensAt: at('2026-11-24T14:00:00Z'),
    });
    // Saturday noon: opens Monday 09:00.
    const saturday = checkCallingWindow(weekdays9to20, ny, at('2026-11-28T17:00:00Z'));
    expect(saturday.open === false && iso(saturday.opensAt!)).toBe('2026-11-30T14:00:00.000Z');
    // Christmas Friday skipped: Thursday evening waits until Monday the 28th.
    const holiday = checkCallingWindow({ ...weekdays9to20, skipDates: ['2026-12-25'] }, ny, at('2026-12-25T02:00:00Z'));
    expect(holiday.open === false && iso(holiday.opensAt!)).toBe('2026-12-28T14:00:00.000Z');
  });

  it('handles the spring-forward change: 09:00 the morning after is an hour earlier in UTC', () => {
    // Saturday 2027-03-13 is EST (UTC-5); Monday 2027-03-15 is EDT (UTC-4). DST starts Sunday 2027-03-14.
    const check = checkCallingWindow(weekdays9to20, ny, at('2027-03-13T15:00:00Z'));
    expect(check.open === false && iso(check.opensAt!)).toBe('2027-03-15T13:00:00.000Z');
  });

  // 2027-03-14 in New York: 02:00 EST jumps to 03:00 EDT at 07:00 UTC, so 02:00-02:59 never shows.
  it('opens a window starting in the hour spring-forward skips when the clock jumps', () => {
    const night: CallingWindow = { rules: [parseCallingHoursRule('Sun 02:30-05:00')], skipDates: [] };
    expect(answers(night, ['2027-03-14T05:00:00Z'])).toEqual(['closed until 2027-03-14T07:00:00.000Z']);
  });

  it('closes a window ending in the hour spring-forward skips when the clock jumps', () => {
    const early: CallingWindow = { rules: [parseCallingHoursRule('Sun 00:00-02:30')], skipDates: [] };
    // 01:30 EST is open until the jump; 03:15 EDT is past the 02:30 end, closed until next Sunday's 00:00.
    expect(answers(early, ['2027-03-14T06:30:00Z', '2027-03-14T07:15:00Z'])).toEqual([
      'open until 2027-03-14T07:00:00.000Z',
      'closed until 2027-03-21T04:00:00.000Z',
    ]);
  });

  it('handles the fall-back change: the hours follow the local clock, not UTC', () => {
    // Friday 2026-10-30 is EDT; Monday 2026-11-02 is EST (DST ended Sunday 2026-11-01).
    const friday = checkCallingWindow(weekdays9to20, ny, at('2026-10-30T12:00:00Z'));
    expect(friday.open === false && iso(friday.opensAt!)).toBe('2026-10-30T13:00:00.000Z');
    const monday = checkCallingWindow(weekdays9to20, ny, at('2026-10-31T12:00:00Z'));
    expect(monday.open === false && iso(monday.opensAt!)).toBe('2026-11-02T14:00:00.000Z');
  });

  it('is open in the hour fall-back repeats each time the clock shows a time within the hours', () => {
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST at 06:00 UTC. A window 01:30-03:00 opens at the
    // first 01:30 (EDT), closes while the clock shows 01:00-01:29 again, and opens at the second 01:30.
    const night: CallingWindow = { rules: [parseCallingHoursRule('Sun 01:30-03:00')], skipDates: [] };
    expect(answers(night, ['2026-11-01T04:00:00Z', '2026-11-01T05:45:00Z', '2026-11-01T06:15:00Z'])).toEqual([
      'closed until 2026-11-01T05:30:00.000Z',
      'open until 2026-11-01T06:00:00.000Z',
      'closed until 2026-11-01T06:30:00.000Z',
    ]);
    // A window ending at 01:30 closes at the first 01:30 and is open again for 01:00-01:29 EST.
    const evening: CallingWindow = { rules: [parseCallingHoursRule('Sun 00:00-01:30')], skipDates: [] };
    expect(answers(evening, ['2026-11-01T05:00:00Z', '2026-11-01T05:45:00Z', '2026-11-01T06:15:00Z'])).toEqual([
      'open until 2026-11-01T05:30:00.000Z',
      'closed until 2026-11-01T06:00:00.000Z',
      'open until 2026-11-01T06:30:00.000Z',
    ]);
  });

  it('counts only hours open in every zone of a number at once', () => {
    // New York and Los Angeles, 09:00-20:00 each: 12:00-20:00 New York time (17:00-01:00 UTC in winter).
    const both = checkCallingWindow(
      weekdays9to20,
      ['America/New_York', 'America/Los_Angeles'],
      at('2026-11-23T15:00:00Z'),
    );
    expect(both.open === false && iso(both.opensAt!)).toBe('2026-11-23T17:00:00.000Z');
    const open = checkCallingWindow(
      weekdays9to20,
      ['America/Los_Angeles', 'America/New_York'],
      at('2026-11-23T18:00:00Z'),
    );
    expect(open).toEqual({ open: true, closesAt: at('2026-11-24T01:00:00Z') });
    // Sydney and London never share a weekday hour between 09:00 and 12:00.
    const never = checkCallingWindow(
      { rules: [parseCallingHoursRule('Mon-Fri 09:00-12:00')], skipDates: [] },
      ['Australia/Sydney', 'Europe/London'],
      at('2026-11-23T00:00:00Z'),
    );
    expect(never).toEqual({ open: false, opensAt: null });
  });
});

describe('timeZonesOfNumber', () => {
  it("maps a number to its region's zones, and a non-geographic number to none", async () => {
    expect(await timeZonesOfNumber('+14155552671')).toEqual(['America/Los_Angeles']);
    expect(await timeZonesOfNumber('+12125550123')).toEqual(['America/New_York']);
    expect((await timeZonesOfNumber('+18005550100')).length).toBeGreaterThan(10);
    expect(await timeZonesOfNumber('+882345678901')).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { wallDateAt, wallTimeAtOffset, wallTimeToInstant, zoneOffsetMinutes } from '../../../src/results/time-zones';

const NEW_YORK = 'America/New_York';

describe('zoneOffsetMinutes', () => {
  it.each([
    ['UTC', '2026-01-15T12:00:00Z', 0],
    ['America/New_York', '2026-01-15T12:00:00Z', -300],
    ['America/New_York', '2026-07-15T12:00:00Z', -240],
    ['Europe/Paris', '2026-01-15T12:00:00Z', 60],
    ['Europe/Paris', '2026-07-15T12:00:00Z', 120],
    ['Asia/Kolkata', '2026-07-15T12:00:00Z', 330],
    ['Asia/Kathmandu', '2026-07-15T12:00:00Z', 345],
    ['Australia/Lord_Howe', '2026-01-15T12:00:00Z', 660],
    ['Australia/Lord_Howe', '2026-07-15T12:00:00Z', 630],
  ])('%s at %s is %d', (zone, at, offset) => {
    expect(zoneOffsetMinutes(Date.parse(at), zone)).toBe(offset);
  });
});

describe('wallTimeToInstant', () => {
  it.each([
    ['an ordinary winter time', { year: 2026, month: 1, day: 15 }, { hour: 9, minute: 0 }, '2026-01-15T14:00:00.000Z'],
    ['an ordinary summer time', { year: 2026, month: 7, day: 15 }, { hour: 9, minute: 0 }, '2026-07-15T13:00:00.000Z'],
    [
      'a skipped time (moved forward)',
      { year: 2026, month: 3, day: 8 },
      { hour: 2, minute: 30 },
      '2026-03-08T07:30:00.000Z',
    ],
    [
      'the first instant after the gap',
      { year: 2026, month: 3, day: 8 },
      { hour: 3, minute: 0 },
      '2026-03-08T07:00:00.000Z',
    ],
    [
      'a repeated time (the earlier one)',
      { year: 2026, month: 11, day: 1 },
      { hour: 1, minute: 30 },
      '2026-11-01T05:30:00.000Z',
    ],
    [
      'the hour after the repeat',
      { year: 2026, month: 11, day: 1 },
      { hour: 2, minute: 0 },
      '2026-11-01T07:00:00.000Z',
    ],
  ])('New York, %s', (_label, date, time, expected) => {
    expect(new Date(wallTimeToInstant(date, time, NEW_YORK)).toISOString()).toBe(expected);
  });
});

describe('wallDateAt', () => {
  it.each([
    ['America/New_York', '2026-03-03T04:59:00Z', '2026-03-02'],
    ['America/New_York', '2026-03-03T05:00:00Z', '2026-03-03'],
    ['Australia/Sydney', '2026-03-02T15:00:00Z', '2026-03-03'],
    ['Pacific/Kiritimati', '2026-12-31T10:00:00Z', '2027-01-01'],
  ])('in %s at %s is %s', (zone, at, expected) => {
    expect(wallDateAt(Date.parse(at), zone).toString()).toBe(expected);
  });
});

describe('wallTimeAtOffset', () => {
  it('takes the stated offset, whatever the zones say that day', () => {
    const date = { year: 2026, month: 3, day: 8 };
    expect(new Date(wallTimeAtOffset(date, { hour: 2, minute: 30 }, -300)).toISOString()).toBe(
      '2026-03-08T07:30:00.000Z',
    );
    expect(new Date(wallTimeAtOffset(date, { hour: 15, minute: 0 }, 330)).toISOString()).toBe(
      '2026-03-08T09:30:00.000Z',
    );
  });
});

describe('an unknown time zone', () => {
  it('is a RangeError', () => {
    expect(() => zoneOffsetMinutes(0, 'Mars/Olympus_Mons')).toThrow(RangeError);
    expect(() => wallTimeToInstant({ year: 2026, month: 1, day: 1 }, { hour: 9 }, 'Mars/Olympus_Mons')).toThrow(
      RangeError,
    );
  });
});

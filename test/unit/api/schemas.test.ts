// The OpenAPI document's patterns must accept exactly what the server accepts, or API fuzzers (and
// generated clients) find requests "valid by the document" that the server refuses, and the reverse.
import { describe, expect, it } from 'vitest';
import { CURSOR_PATTERN, decodeCursor, encodeCursor } from '../../../src/api/pagination';
import { DATE_TIME_PATTERN, VISIBLE_TEXT, e164, isoDateTime, visibleText } from '../../../src/schemas/common';

describe('visibleText', () => {
  it('takes text with a visible character and no U+0000, and nothing else', () => {
    for (const ok of ['Grace', '  x ', 'a\tb', 'é']) expect(visibleText().safeParse(ok).success).toBe(true);
    for (const refused of ['', '   ', '\ufeff \n', 'a\u0000b', '\u0000'])
      expect(visibleText().safeParse(refused).success).toBe(false);
  });

  it('refuses a long text ending in U+0000 at once (the old pattern took seconds, quadratic in its length)', () => {
    for (const filler of ['a', ' ']) {
      const hostile = `${filler.repeat(200_000)}\u0000`;
      const started = performance.now();
      expect(VISIBLE_TEXT.test(hostile)).toBe(false);
      expect(visibleText().safeParse(hostile).success).toBe(false);
      // The old pattern: about 25 s for this length on this machine; linear, it is about a millisecond.
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});

describe('DATE_TIME_PATTERN', () => {
  it('agrees with isoDateTime on every day of every month of leap, century and ordinary years', () => {
    const pattern = new RegExp(DATE_TIME_PATTERN);
    const years = [
      '0999',
      '1000',
      '1004',
      '1100',
      '1200',
      '1600',
      '1900',
      '2000',
      '2024',
      '2026',
      '2100',
      '2400',
      '9996',
      '9999',
    ];
    const pad = (n: number) => String(n).padStart(2, '0');
    let checked = 0;
    for (const year of years) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const value = `${year}-${pad(month)}-${pad(day)}T10:00:00Z`;
          expect(pattern.test(value), value).toBe(isoDateTime.safeParse(value).success);
          checked++;
        }
      }
    }
    const times = [
      'T00:00Z',
      'T23:59:59.999999999+23:59',
      'T24:00Z',
      'T10:60Z',
      'T10:00:60Z',
      'T10:00+0530',
      'T10:00-24:00',
      'T10:00',
      'T10:00:00.Z',
    ];
    for (const time of times) {
      const value = `2028-02-29${time}`;
      expect(pattern.test(value), value).toBe(isoDateTime.safeParse(value).success);
    }
    expect(checked).toBe(years.length * 14 * 33);
  });
});

describe('cursors', () => {
  it('encode to the documented pattern, and every string of that pattern decodes', () => {
    const pattern = new RegExp(CURSOR_PATTERN);
    const cursor = encodeCursor({ at: new Date('2026-11-23T10:00:00.123Z'), id: '6b03b03ac8632be4591950f0' });
    expect(cursor).toMatch(pattern);
    expect(decodeCursor(cursor)).toEqual({ at: new Date('2026-11-23T10:00:00.123Z'), id: '6b03b03ac8632be4591950f0' });
    for (const edge of ['0.000000000000000000000000', 'zzzzzzzzzz.ffffffffffffffffffffffff']) {
      expect(edge).toMatch(pattern);
      expect(Number.isNaN(decodeCursor(edge).at.getTime())).toBe(false);
    }
    expect(() => decodeCursor('0')).toThrow('cursor is not a cursor this API returned');
  });

  it('still reads cursors of the earlier form', () => {
    const legacy = Buffer.from(
      JSON.stringify({ t: '2026-11-23T10:00:00.123Z', i: '6b03b03ac8632be4591950f0' }),
    ).toString('base64url');
    expect(decodeCursor(legacy)).toEqual({ at: new Date('2026-11-23T10:00:00.123Z'), id: '6b03b03ac8632be4591950f0' });
  });
});

describe('e164', () => {
  it('takes a number written with separators, and refuses one inside other text', () => {
    for (const ok of ['+14155552671', ' +1 (415) 555-2671 ', '+1.415.555.2671', '+44 20 7946 0958'])
      expect(e164.safeParse(ok).success, ok).toBe(true);
    expect(e164.parse('+1 (415) 555-2671')).toBe('+14155552671');
    // The library finds a number inside any text unless told not to: these were taken as +14155552671.
    for (const refused of ['Call me at +1 415 555 2671 thanks', 'abc+14155552671xyz', '14155552671', '++14155552671'])
      expect(e164.safeParse(refused).success, refused).toBe(false);
  });
});

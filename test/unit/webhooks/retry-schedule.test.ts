import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_DELAYS, parseRetryDelays } from '../../../src/webhooks/retry-schedule';

describe('DEFAULT_RETRY_DELAYS', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h in milliseconds', () => {
    const s = 1000;
    expect(DEFAULT_RETRY_DELAYS).toEqual([5 * s, 300 * s, 1800 * s, 7200 * s, 18000 * s, 36000 * s, 36000 * s]);
  });

  it('cannot be changed by a caller', () => {
    expect(Object.isFrozen(DEFAULT_RETRY_DELAYS)).toBe(true);
  });
});

describe('parseRetryDelays', () => {
  it.each([
    ['1s,2s,5s', [1000, 2000, 5000]],
    ['250ms, 1.5s , 2m,1h', [250, 1500, 120_000, 3_600_000]],
    ['0ms', [0]],
    ['5s,5m,30m,2h,5h,10h,10h', [...DEFAULT_RETRY_DELAYS]],
  ])('%j -> %j', (text, expected) => {
    expect(parseRetryDelays(text)).toEqual(expected);
  });

  it.each([
    ['', /at least one duration/],
    ['   ', /at least one duration/],
    ['5', /retry delay 1 \("5"\) is not a duration/],
    ['1s,,2s', /retry delay 2 \(""\)/],
    ['1s,1d', /retry delay 2 \("1d"\)/],
    ['-1s', /not a duration/],
    ['1 s', /not a duration/],
    ['1e3ms', /not a duration/],
    ['99999999999999999999h', /too large/],
  ])('refuses %j', (text, message) => {
    expect(() => parseRetryDelays(text)).toThrow(message);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { rememberedValues } from '../../../src/data/remembered-values';

afterEach(() => {
  vi.useRealTimers();
});

describe('rememberedValues', () => {
  it('answers an entry while it is trusted, and nothing once it is older or the clock went back', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const values = rememberedValues<number>({ trustedMs: 5_000, maxEntries: 10 });
    values.set('a', 1);
    vi.setSystemTime(1_004_999);
    expect(values.get('a')).toBe(1);
    vi.setSystemTime(1_005_000);
    expect(values.get('a')).toBeUndefined();
    values.set('a', 2); // a new value is trusted afresh
    expect(values.get('a')).toBe(2);
    vi.setSystemTime(999_999);
    expect(values.get('a')).toBeUndefined();
    expect(values.get('never set')).toBeUndefined();
  });

  it('keeps an entry for ever without a trust window', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(0);
    const values = rememberedValues<string>({ maxEntries: 10 });
    values.set('key', 'team');
    vi.setSystemTime(10 * 365 * 86_400_000);
    expect(values.get('key')).toBe('team');
  });

  it('starts again when full, except to overwrite an entry it holds, and forgets all on clear', () => {
    const values = rememberedValues<number>({ maxEntries: 2 });
    values.set('a', 1);
    values.set('b', 2);
    values.set('b', 3); // not a new entry: nothing is dropped
    expect([values.get('a'), values.get('b')]).toEqual([1, 3]);
    values.set('c', 4); // a third: the map starts again with it
    expect([values.get('a'), values.get('b'), values.get('c')]).toEqual([undefined, undefined, 4]);
    values.clear();
    expect(values.get('c')).toBeUndefined();
  });
});

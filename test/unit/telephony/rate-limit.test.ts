// Providers' per-account dial rates, on the real emulator through the real adapters: Twilio queues
// the excess and places it at the account's pace; Vonage and Telnyx refuse it with 429, which the
// adapters turn into ProviderRateLimitedError with the wait the provider gave.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDialsPerSecond } from '../../../src/emulator';
import { createProvider } from '../../../src/telephony';
import { retryAfterMs } from '../../../src/telephony/http';
import { ProviderRateLimitedError } from '../../../src/telephony/provider';
import { startHarness, uniqueNumber, type Harness } from './harness';

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness?.close();
});
beforeEach(() => {
  harness.emulator.setDialsPerSecond({});
});

/** Dials `count` calls at once; each settles to its placed call or its error. */
function burst(name: 'twilio' | 'vonage' | 'telnyx', count: number, provider = harness.provider(name)) {
  return Promise.allSettled(
    Array.from({ length: count }, () => provider.placeCall(harness.request(name, { to: uniqueNumber('1486') }))),
  );
}

describe('per-account dial rates', () => {
  it('Twilio accepts every dial at once and places them at the account pace', async () => {
    harness.emulator.setDialsPerSecond({ twilio: 4 });
    const results = await burst('twilio', 8);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    const ids = new Set(results.map((r) => (r.status === 'fulfilled' ? r.value.providerCallId : '')));
    // The last is placed about 1.75 s after the first; a loaded machine may take longer to get there.
    const ours = () => harness.emulator.calls().filter((c) => ids.has(c.providerCallId) && c.placedAt);
    for (const deadline = Date.now() + 10_000; ours().length < 8 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const placed = ours()
      .map((c) => {
        expect(c.account).toBe(harness.credentials.twilio.twilio.accountSid);
        return c.placedAt!;
      })
      .sort((a, b) => a - b);
    expect(placed).toHaveLength(8);
    // Slots 250 ms apart from the first, so 8 calls span 1.75 s. A slot's timer fires late, never
    // early, so the i-th call is placed at least 250 * i ms after the first, less the first's own
    // lateness (150 ms allowed). A gap between two slots says nothing alone: a late timer shortens the
    // next one by its lateness (57 ms seen beside a type check). A dial let through out of turn
    // leaves the last slot unused: the eighth call would then come a slot early, at 1.5 s.
    for (let i = 1; i < placed.length; i += 1) expect(placed[i]! - placed[0]!).toBeGreaterThanOrEqual(250 * i - 150);
  });

  it.each(['vonage', 'telnyx'] as const)(
    '%s refuses the excess with 429, and the adapter says how long to wait',
    async (name) => {
      harness.emulator.setDialsPerSecond({ [name]: 3 });
      const before = harness.emulator.rateLimited(name);
      const results = await burst(name, 6);
      const refused = results.filter((r) => r.status === 'rejected').map((r) => r.reason as unknown);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      expect(refused).toHaveLength(3);
      for (const reason of refused) {
        expect(reason).toBeInstanceOf(ProviderRateLimitedError);
        expect((reason as ProviderRateLimitedError).retryAfterMs).toBeGreaterThan(0);
        expect((reason as ProviderRateLimitedError).retryAfterMs).toBeLessThanOrEqual(1_000);
      }
      expect(harness.emulator.rateLimited(name) - before).toBe(3);
      // After the wait the account has room again.
      await new Promise((resolve) => setTimeout(resolve, (refused[0] as ProviderRateLimitedError).retryAfterMs));
      expect((await burst(name, 3)).every((r) => r.status === 'fulfilled')).toBe(true);
    },
  );

  it('counts each account on its own', async () => {
    harness.emulator.setDialsPerSecond({ telnyx: 2 });
    const other = createProvider(
      {
        provider: 'telnyx',
        telnyx: { ...harness.credentials.telnyx.telnyx, apiKey: `KEY${randomUUID().replaceAll('-', '')}` },
      },
      { twilio: harness.emulator.url, vonage: harness.emulator.url, telnyx: harness.emulator.url },
    );
    const [mine, theirs] = await Promise.all([burst('telnyx', 2), burst('telnyx', 2, other)]);
    expect([...mine, ...theirs].every((r) => r.status === 'fulfilled')).toBe(true);
  });

  it('limits nothing unless configured', async () => {
    const results = await burst('vonage', 10);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
  });
});

describe('reading the wait', () => {
  it('takes Retry-After in seconds or as a date, else x-ratelimit-reset, else one second', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 23 Nov 2026 10:00:05 GMT' }), now)).toBe(5_000);
    expect(retryAfterMs(new Headers({ 'x-ratelimit-reset': '1' }), now)).toBe(1_000);
    expect(retryAfterMs(new Headers(), now)).toBe(1_000);
    expect(retryAfterMs(new Headers({ 'retry-after': '86400' }), now)).toBe(600_000);
  });

  it('parses EMULATOR_DIALS_PER_SECOND', () => {
    expect(parseDialsPerSecond(undefined)).toEqual({});
    expect(parseDialsPerSecond('5')).toEqual({ twilio: 5, vonage: 5, telnyx: 5 });
    expect(parseDialsPerSecond('twilio=1, vonage=3,telnyx=30')).toEqual({ twilio: 1, vonage: 3, telnyx: 30 });
    expect(() => parseDialsPerSecond('twilio=0')).toThrow(/EMULATOR_DIALS_PER_SECOND/);
    expect(() => parseDialsPerSecond('plivo=3')).toThrow(/EMULATOR_DIALS_PER_SECOND/);
  });
});

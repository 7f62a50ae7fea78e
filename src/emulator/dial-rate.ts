// Per-account dial rates, as the providers enforce them on their accounts. Off unless configured.
// Twilio queues calls over the account's CPS and places them at that pace ("Calls Per Second",
// help.twilio.com: excess calls are queued, not refused). Vonage answers the excess with 429
// (3 calls per second per account by default). Telnyx answers it with 429 too: 30 dials per second
// per account ("Dials Per Second Limit", developers.telnyx.com/docs/voice/programmable-voice/
// dials-per-second-limit). Rates are wall-clock: they model the account, not the emulated call.
import type { ProviderName } from '../contracts/providers';

export type DialsPerSecond = Partial<Record<ProviderName, number>>;

const WINDOW_MS = 1000;

export class DialRateLimiter {
  /** Twilio: when each account may place its next queued call. */
  private readonly nextPlacement = new Map<string, number>();
  /** Vonage, Telnyx: each account's admitted dials within the last second. */
  private readonly recent = new Map<string, number[]>();
  private readonly refusals = new Map<ProviderName, number>();

  constructor(private limits: DialsPerSecond = {}) {}

  /** Changes the limits from now on (tests); an absent provider is not limited. */
  configure(limits: DialsPerSecond): void {
    this.limits = limits;
    this.nextPlacement.clear();
    this.recent.clear();
  }

  /** Twilio: how long the account's queue holds a call created now before it is placed. */
  queueDelayMs(provider: ProviderName, account: string, now = Date.now()): number {
    const rate = this.limits[provider];
    if (!rate) return 0;
    const key = `${provider}:${account}`;
    const placeAt = Math.max(now, this.nextPlacement.get(key) ?? 0);
    this.nextPlacement.set(key, placeAt + WINDOW_MS / rate);
    return placeAt - now;
  }

  /** Vonage, Telnyx: null when the dial is admitted, else how long until the account has room. */
  refusal(provider: ProviderName, account: string, now = Date.now()): { retryAfterMs: number } | null {
    const rate = this.limits[provider];
    if (!rate) return null;
    const key = `${provider}:${account}`;
    const times = (this.recent.get(key) ?? []).filter((t) => now - t < WINDOW_MS);
    this.recent.set(key, times);
    if (times.length < rate) {
      times.push(now);
      return null;
    }
    this.refusals.set(provider, (this.refusals.get(provider) ?? 0) + 1);
    return { retryAfterMs: Math.max(1, times[times.length - Math.floor(rate)]! + WINDOW_MS - now) };
  }

  /** Dials refused for the rate, per provider. */
  refused(provider: ProviderName): number {
    return this.refusals.get(provider) ?? 0;
  }
}

/** `EMULATOR_DIALS_PER_SECOND`: one number for every provider, or `twilio=1,vonage=3,telnyx=30`. */
export function parseDialsPerSecond(value: string | undefined): DialsPerSecond {
  if (!value || !value.trim()) return {};
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    const rate = Number(trimmed);
    return { twilio: rate, vonage: rate, telnyx: rate };
  }
  const limits: DialsPerSecond = {};
  for (const part of trimmed.split(',')) {
    const match = /^\s*(twilio|vonage|telnyx)\s*=\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!match || !(Number(match[2]) > 0)) {
      throw new Error(`EMULATOR_DIALS_PER_SECOND must look like 5 or twilio=1,vonage=3,telnyx=30; got "${part}"`);
    }
    limits[match[1] as ProviderName] = Number(match[2]);
  }
  return limits;
}

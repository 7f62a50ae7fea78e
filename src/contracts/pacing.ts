// Pacing: how many calls of a team may be live at once and how fast it may dial. Plain data, shared by
// the pacer workflow, its activities, the operator CLI and the docs.
import { PROVIDERS, type ProviderName } from './providers';

export interface PacingLimits {
  /** Calls of the team that may be ringing or in progress at once. */
  maxConcurrentCalls: number;
  /** Dials per second through the team's account at each provider. */
  dialsPerSecond: Record<ProviderName, number>;
}

/**
 * The providers' own default account limits. Twilio: 1 call per second per account unless raised
 * (the excess is queued). Vonage: 3 calls per second per account (the excess is refused with 429).
 * Telnyx: 30 dials per second per account ("Dials Per Second Limit", developers.telnyx.com/docs/voice/
 * programmable-voice/dials-per-second-limit; the excess is refused with 429).
 */
export const PROVIDER_DEFAULT_DIALS_PER_SECOND: Record<ProviderName, number> = {
  twilio: 1,
  vonage: 3,
  telnyx: 30,
};

export const DEFAULT_MAX_CONCURRENT_CALLS = 10;

/** Where a provider is the emulator (npm start, tests) the defaults are higher; settable per team all the same. */
export const EMULATOR_DEFAULT_DIALS_PER_SECOND = 100;
export const EMULATOR_DEFAULT_MAX_CONCURRENT_CALLS = 100;

export const MAX_DIALS_PER_SECOND = 1000;
export const MAX_CONCURRENT_CALLS = 10_000;

/** A waiting call, as the pacer queues it. */
export interface DialSlotRequest {
  callId: string;
  provider: ProviderName;
  /** The call's own number for this request; the grant carries it back. */
  ticket: number;
}

/** What the pacer's query answers (Temporal UI, query tab: `pacingState`). */
export interface PacingState {
  teamId: string;
  limits: PacingLimits;
  liveCalls: number;
  waitingCalls: number;
  /** The calls holding a slot, oldest first. */
  holders: string[];
}

export function isProviderName(value: string): value is ProviderName {
  return (PROVIDERS as readonly string[]).includes(value);
}

// A call's state as its provider answers when asked (not told by a callback), turned into the events
// its callbacks would have brought. The call workflow asks when callbacks have gone quiet: a callback
// that met an outage of ours (API, database or Temporal down) is lost once the provider stops
// retrying it, and the call must still end as it really did, not by our own timeout.
import type { ProviderEvent, ProviderEventKind, ProviderName } from '../contracts/providers';

export interface PolledCallState {
  /** Our word for the call now; null while it is queued or ringing (nothing new to learn). */
  kind: ProviderEventKind | null;
  /** The provider's own status word, for the timeline. */
  providerStatus: string;
  /** When a person (or a machine) answered, if anyone did and the provider says when. */
  answeredAt: string | null;
  endedAt: string | null;
}

const ENDINGS = new Set<ProviderEventKind>(['completed', 'busy', 'declined', 'no-answer', 'failed']);

/** ISO 8601 from a provider's date (RFC 2822 for Twilio, ISO for the others), or null. */
export function isoOrNull(value: string | null | undefined): string | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * `answered` for a live call; for a completed one `answered` (when it was) and its end; for another
 * ending just that (a start time on a busy or unanswered call is when it was dialled, not answered).
 */
export function eventsOfPolledState(
  call: { callId: string; provider: ProviderName; providerCallId: string },
  state: PolledCallState,
  now = new Date(),
): ProviderEvent[] {
  const event = (kind: ProviderEventKind, at: string | null): ProviderEvent => ({
    ...call,
    kind,
    occurredAt: at ?? now.toISOString(),
    providerStatus: state.providerStatus,
  });
  if (state.kind === 'answered') return [event('answered', state.answeredAt)];
  if (state.kind === null || !ENDINGS.has(state.kind)) return [];
  const ended = event(state.kind, state.endedAt);
  return state.kind === 'completed' && state.answeredAt ? [event('answered', state.answeredAt), ended] : [ended];
}

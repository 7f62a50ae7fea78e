// Telephony provider names, in the order the interface's enum gives them.
import type { AnsweredBy } from './machine-detection';

export const PROVIDERS = ['twilio', 'vonage', 'telnyx'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/**
 * A provider's status report, mapped to our vocabulary (src/telephony/callbacks.ts does the mapping).
 * `ringing` and `answered` move a call forward; the others end it. `declined`: the callee refused the
 * call (SIP 603, Twilio's SipResponseCode 603, Vonage's `rejected`, Telnyx's `call_rejected`), told
 * apart from a busy line so that it is never redialled.
 *
 * Answering-machine detection adds three that do not end the call: `machine-detected` (who answered:
 * `answeredBy`), `greeting-ended` (a machine's greeting is over: a message can be left now) and
 * `message-left` (the provider finished speaking the message and leaves the hang-up to us).
 */
export type ProviderEventKind =
  | 'ringing'
  | 'answered'
  | 'completed'
  | 'busy'
  | 'declined'
  | 'no-answer'
  | 'failed'
  | 'machine-detected'
  | 'greeting-ended'
  | 'message-left';

export interface ProviderEvent {
  /** Our PhoneCall _id, carried through the provider's request. */
  callId: string;
  provider: ProviderName;
  providerCallId: string;
  kind: ProviderEventKind;
  /** When the provider says it happened (ISO 8601 UTC). */
  occurredAt: string;
  /** The provider's own status word, kept for the timeline. */
  providerStatus: string;
  /** With `machine-detected` (and a `greeting-ended` that also says it, like Twilio's `machine_end_beep`). */
  answeredBy?: AnsweredBy;
  /**
   * With `completed`, when the provider says it: when the call was answered (ISO 8601 UTC). The
   * answer's own callback may have been lost, or come after the ending.
   */
  answeredAt?: string;
}

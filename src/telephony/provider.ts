// The interface every telephony adapter implements (twilio.ts, vonage.ts, telnyx.ts).
// Activities dial, hang up and capture through it; the API's callback routes verify and map
// provider callbacks through it. Adapters are stateless: one is built per use from the team's
// credentials and the provider's base URL (the real one, or the local emulator's).
import type { ActiveMachineDetection } from '../contracts/machine-detection';
import type { ProviderEvent, ProviderName } from '../contracts/providers';

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
}
export interface VonageCredentials {
  applicationId: string;
  /** PEM, RS256: signs the JWT every Voice API request carries. */
  privateKey: string;
  /** HS256 secret Vonage signs its webhook JWTs with ("signed webhooks"). */
  signatureSecret: string;
}
export interface TelnyxCredentials {
  apiKey: string;
  /** The Call Control application (connection) calls are placed through. */
  connectionId: string;
  /** Base64 Ed25519 public key Telnyx signs webhooks with. */
  publicKey: string;
}
export type ProviderCredentials =
  | { provider: 'twilio'; twilio: TwilioCredentials }
  | { provider: 'vonage'; vonage: VonageCredentials }
  | { provider: 'telnyx'; telnyx: TelnyxCredentials };

export interface CallScript {
  /** The agent's first utterance: the template's prompt with the prompt variables filled in. */
  openingLine: string;
  nameOfHuman?: string;
  voiceId?: number;
}

export interface PlaceCallRequest {
  /** Our PhoneCall _id; travels with the provider request so a retried dial can find the call. */
  callId: string;
  to: string;
  from: string;
  record: boolean;
  /** Absolute URL the provider sends this call's status callbacks to. */
  statusCallbackUrl: string;
  script: CallScript;
  /**
   * Ask the provider to tell a person from a machine (asynchronously: a person hears the agent at
   * once). `leaveMessage` also asks it to report the end of a machine's greeting. Absent: no detection.
   */
  machineDetection?: ActiveMachineDetection;
  /**
   * How long the provider lets the call ring before it gives up (no answer); cut to the provider's
   * range (ringTimeoutFor). Absent: the provider's own default (Telnyx 30 s, Twilio and Vonage 60 s).
   */
  ringTimeoutSeconds?: number;
  /**
   * How long the provider lets the call last from answer before it ends the call itself; cut to the
   * provider's range (timeLimitFor). A backstop for our own hang-up at the maximum duration, should
   * that fail. Absent: the provider's own limit (Twilio and Telnyx 4 h, Vonage 2 h).
   */
  timeLimitSeconds?: number;
}

/** Each provider's range for a dial's ring timeout, as its API documents it. */
export const RING_TIMEOUT_RANGE = {
  twilio: { min: 1, max: 600 },
  vonage: { min: 1, max: 120 },
  telnyx: { min: 5, max: 600 },
} as const satisfies Record<ProviderName, { min: number; max: number }>;

/** The request's ring timeout within the provider's range, in whole seconds; undefined when not asked. */
export function ringTimeoutFor(provider: ProviderName, req: PlaceCallRequest): number | undefined {
  return withinRange(req.ringTimeoutSeconds, RING_TIMEOUT_RANGE[provider]);
}

/**
 * Each provider's range for a dial's time limit (Twilio `TimeLimit`, Vonage `length_timer`, Telnyx
 * `time_limit_secs`), counted from answer. Twilio takes one minute up to the account's limit (four
 * hours unless raised); Telnyx documents 30 s to its 4 h maximum. Vonage's SDK documents up to 24 h,
 * but its default, 2 h, is what every call had before: asking no more never shortens a call.
 */
export const TIME_LIMIT_RANGE = {
  twilio: { min: 60, max: 14_400 },
  vonage: { min: 1, max: 7_200 },
  telnyx: { min: 30, max: 14_400 },
} as const satisfies Record<ProviderName, { min: number; max: number }>;

/** The request's time limit within the provider's range, in whole seconds; undefined when not asked. */
export function timeLimitFor(provider: ProviderName, req: PlaceCallRequest): number | undefined {
  return withinRange(req.timeLimitSeconds, TIME_LIMIT_RANGE[provider]);
}

function withinRange(seconds: number | undefined, { min, max }: { min: number; max: number }): number | undefined {
  if (seconds === undefined) return undefined;
  return Math.min(max, Math.max(min, Math.round(seconds)));
}

export interface PlacedCall {
  providerCallId: string;
}

export interface Utterance {
  speaker: 'agent' | 'human';
  text: string;
  /** Seconds from answer. */
  offsetSeconds: number;
}

export interface InboundCallback {
  method: string;
  /** The absolute URL as the provider called it (Twilio signs it). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

/** What a retried dial knows when it asks the provider for the call an earlier try placed. */
export interface PlacedCallSearch {
  /** When the dial was scheduled (before its first try began): a call placed before it is not this dial's. */
  since: Date;
  /** Whether a candidate is known not to be this dial's call. */
  setAside(providerCallId: string): Promise<boolean>;
}

export interface TelephonyProvider {
  readonly name: ProviderName;
  /** Places the call. Throws ProviderRejectedError when the provider refuses it for good. */
  placeCall(request: PlaceCallRequest): Promise<PlacedCall>;
  /**
   * The call an earlier try of this dial placed for `request.callId`, if any (asked before a retried
   * dial): the newest the provider has, placed since `search.since`, that `search.setAside` does not
   * claim (a call of an earlier redial attempt, or another of our calls between the same numbers).
   */
  findPlacedCall(request: PlaceCallRequest, search: PlacedCallSearch): Promise<PlacedCall | null>;
  /** Ends the call; a call that has already ended is not an error. */
  hangUp(providerCallId: string): Promise<void>;
  /**
   * Asks the provider how the call stands and answers with the events its callbacks would have
   * brought (polled-state.ts): none while it rings, `answered` while live, its ending once over.
   */
  pollCallEvents(request: { callId: string; providerCallId: string }): Promise<ProviderEvent[]>;
  /**
   * Speaks `message` on the answered call (a machine's greeting is over) and ends the call after it;
   * where the provider cannot end it by itself it reports `message-left` and the workflow hangs up.
   * A call that has already ended is not an error (the machine hung up first).
   */
  leaveMessage(request: { callId: string; providerCallId: string; message: string }): Promise<void>;
  /** The recording as WAV bytes, or null when there is none. */
  fetchRecording(providerCallId: string): Promise<Buffer | null>;
  /** What was said, in spoken order. */
  fetchTranscript(providerCallId: string): Promise<Utterance[]>;
  /** Verifies a callback's signature (rejects with CallbackSignatureError) and maps it to our events. */
  parseCallback(callback: InboundCallback): Promise<ProviderEvent[]>;
}

/** The provider refused the call for good (e.g. an invalid number): retrying cannot help. */
export class ProviderRejectedError extends Error {
  override readonly name = 'ProviderRejectedError';
  constructor(
    message: string,
    readonly code: 'invalid-number' | 'provider-error' = 'provider-error',
  ) {
    super(message);
  }
}

/**
 * The call's recording exists but is not ready yet (Twilio's `processing`): unlike a recording not
 * listed at all, one worth asking for again past the capture's wait, on the capture's next attempt.
 */
export class RecordingNotReadyError extends Error {
  override readonly name = 'RecordingNotReadyError';
}

/** The provider refused the dial for its account's rate (HTTP 429): dial again after `retryAfterMs`. */
export class ProviderRateLimitedError extends Error {
  override readonly name = 'ProviderRateLimitedError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

export class CallbackSignatureError extends Error {
  override readonly name = 'CallbackSignatureError';
}

/**
 * Why a provider would refuse to speak `text`, over `max` characters in one `action`, or null (Vonage's
 * talk action, Telnyx's speak command; Twilio counts its TwiML instead, twilioSpeechProblem).
 */
export function spokenLengthProblem(provider: ProviderName, text: string, max: number, action: string): string | null {
  const length = [...text].length;
  return length > max ? `is ${length} characters, and ${provider} speaks at most ${max} in one ${action}` : null;
}

// The phone call status machine (decisions.md "Statuses"). Plain data: safe inside workflows. How
// the status relates to status codes, workflow phases and provider events: GLOSSARY.md beside this file.

export const CALL_STATUSES = [
  'queued',
  'ringing',
  'inProgress',
  'completed',
  'busy',
  'noAnswer',
  'failed',
  'cancelled',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<CallStatus> = new Set<CallStatus>([
  'completed',
  'busy',
  'noAnswer',
  'failed',
  'cancelled',
]);

const ALLOWED_TRANSITIONS: Record<CallStatus, readonly CallStatus[]> = {
  // queued -> queued and ringing -> queued: an attempt ended unanswered (a dial the provider refused
  // never left queued) and the template's redial policy dials again.
  queued: ['ringing', 'failed', 'cancelled', 'queued'],
  ringing: ['inProgress', 'busy', 'noAnswer', 'failed', 'cancelled', 'queued'],
  // inProgress -> noAnswer: machine detection hung up on an answering machine (`answering-machine`);
  // inProgress -> queued: and the redial policy dials that call again.
  inProgress: ['completed', 'noAnswer', 'failed', 'cancelled', 'queued'],
  completed: [],
  busy: [],
  noAnswer: [],
  failed: [],
  cancelled: [],
};

export function isTerminal(status: CallStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

export function canTransition(from: CallStatus, to: CallStatus): boolean {
  return ALLOWED_TRANSITIONS[from].includes(to);
}

/** The statuses a call may be in just before moving to `to` (`to` itself for a self-transition). */
export function predecessorsOf(to: CallStatus): CallStatus[] {
  return CALL_STATUSES.filter((from) => ALLOWED_TRANSITIONS[from].includes(to));
}

/** The list filter accepts the American spelling too (decisions.md). */
export function parseStatusFilter(value: string): CallStatus | undefined {
  if (value === 'canceled') return 'cancelled';
  return (CALL_STATUSES as readonly string[]).includes(value) ? (value as CallStatus) : undefined;
}

/** Short stable codes for `statusExtraInfo.statusCode`. */
export const STATUS_CODES = {
  queued: 'queued',
  scheduled: 'scheduled',
  /** Queued, due, and outside the template's calling hours in the callee's time zone. */
  waitingForCallingWindow: 'waiting-for-calling-window',
  /** Queued, due, and waiting for the team's pacer (concurrency cap or dial rate). */
  waitingForSlot: 'waiting-for-slot',
  /** Queued, and its batch is paused. */
  paused: 'paused',
  /** Queued again: the last attempt ended unanswered and the redial policy dials again after its spacing. */
  waitingToRedial: 'waiting-to-redial',
  dialling: 'dialling',
  answered: 'answered',
  completed: 'completed',
  busy: 'busy',
  /** The callee refused the call (SIP 603 and the providers' words for it): never redialled. */
  declined: 'declined',
  noAnswer: 'no-answer',
  /** An answering machine (or a fax) answered and the template's machine detection hung up. */
  answeringMachine: 'answering-machine',
  /** An answering machine answered and the template's voicemail message was left on it. */
  voicemailLeft: 'voicemail-left',
  providerError: 'provider-error',
  invalidNumber: 'invalid-number',
  /** The team's credentials for the call's provider were removed after the call was created. */
  providerNotConfigured: 'provider-not-configured',
  maxDuration: 'max-duration',
  /** The calling hours can never be open in all of the callee's zones at once (a safety net: create refuses these). */
  outsideCallingHours: 'outside-calling-hours',
  cancelledByOperator: 'cancelled-by-operator',
  /** The number went on the team's do-not-call list after the call was created: never dialled. */
  doNotCall: 'do-not-call',
} as const;
export type StatusCode = (typeof STATUS_CODES)[keyof typeof STATUS_CODES];

/** What each status means, for API clients (the OpenAPI document). */
export const STATUS_MEANINGS: Record<CallStatus, string> = {
  queued:
    'created, waiting to be placed or scheduled for `callDelayedUntil`, or waiting to be dialled again ' +
    "under the template's redial policy",
  ringing: 'the provider is dialling',
  inProgress: 'answered, the conversation is under way',
  completed:
    'terminal: the conversation ended; results and transcript are stored (or, with `voicemail-left`, a message ' +
    'was left on an answering machine)',
  busy: 'terminal: the line was busy',
  noAnswer: 'terminal: nobody answered (or, with `answering-machine`, only a machine did)',
  failed: 'terminal: the provider refused or dropped the call, or it ran too long',
  cancelled: 'terminal: an operator cancelled the call',
};

/** What each status code means, with the status it comes with, for API clients (the OpenAPI document). */
export const STATUS_CODE_MEANINGS: Record<StatusCode, string> = {
  [STATUS_CODES.queued]: '`queued`: waiting to be placed at once.',
  [STATUS_CODES.scheduled]: '`queued`: waiting for `callDelayedUntil`.',
  [STATUS_CODES.waitingForCallingWindow]:
    "`queued`: due, waiting for the call template's calling hours to open in the callee's time zone.",
  [STATUS_CODES.waitingForSlot]:
    "`queued`: due, waiting for a dial slot (the team's live-call cap or its provider account's dials per second).",
  [STATUS_CODES.paused]: "`queued`: the call's batch is paused.",
  [STATUS_CODES.waitingToRedial]:
    "`queued`: the last attempt ended unanswered and the template's redial policy dials again after its spacing " +
    '(see `attempts`).',
  [STATUS_CODES.dialling]: '`ringing`: the provider accepted the dial.',
  [STATUS_CODES.answered]: '`inProgress`: the call was answered.',
  [STATUS_CODES.completed]: '`completed`: the conversation ended.',
  [STATUS_CODES.busy]: '`busy`: the line was busy.',
  [STATUS_CODES.declined]: '`busy`: the callee refused the call (SIP 603 Decline); never redialled.',
  [STATUS_CODES.noAnswer]: '`noAnswer`: nobody answered.',
  [STATUS_CODES.answeringMachine]:
    "`noAnswer`: an answering machine or a fax answered and the template's machine detection hung up " +
    '(`answeredBy` says which); counts as `noAnswer` for the redial policy.',
  [STATUS_CODES.voicemailLeft]:
    "`completed`: an answering machine answered and the template's voicemail message was left after its greeting.",
  [STATUS_CODES.providerError]:
    '`failed`: the provider could not place the call, or the call dropped with a provider error.',
  [STATUS_CODES.invalidNumber]: '`failed`: the provider refused the number.',
  [STATUS_CODES.providerNotConfigured]:
    "`failed`: the team's credentials for the call's provider were removed, or are unusable, before the dial.",
  [STATUS_CODES.maxDuration]: "`failed`: the call ran past the template's maximum duration.",
  [STATUS_CODES.outsideCallingHours]:
    "`failed`: the template's calling hours are never open in all of the callee's time zones at once.",
  [STATUS_CODES.cancelledByOperator]: '`cancelled`: an operator cancelled the call (e.g. from the workflow UI).',
  [STATUS_CODES.doNotCall]:
    "`failed`: the number was put on the team's do-not-call list after the call was created; it was never dialled.",
};

// Failure types of ApplicationFailures (non-retryable unless one says otherwise): thrown by activities and workflow validators,
// read by the workflow and the API. Plain data: safe inside workflows.
export const FAILURES = {
  /** The call's record is gone (deleted, or never written): nothing left to act on. */
  callRecordMissing: 'CALL_RECORD_MISSING',
  /** A delete arrived after dialling began (the update validator, or the record's own status). */
  callNotQueued: 'CALL_NOT_QUEUED',
  /** The provider refused the dial for good (e.g. an invalid number); details[0] is our status code. */
  providerRejected: 'PROVIDER_REJECTED',
  /** The team has no credentials for the call's provider (removed after the call was created). */
  providerNotConfigured: 'PROVIDER_NOT_CONFIGURED',
  /** The provider refused the dial for its account's rate limit (HTTP 429); details[0] is the wait in ms. */
  providerRateLimited: 'PROVIDER_RATE_LIMITED',
  /**
   * The team's own dial rate for the provider account has no turn for this dial within the dial's
   * wait (src/calls/dial-spacer.ts): not placed; details[0] is the wait in ms.
   */
  accountDialRateReached: 'ACCOUNT_DIAL_RATE_REACHED',
  /** The number is on the team's do-not-call list (listed after the call was created): never dialled. */
  doNotCall: 'DO_NOT_CALL',
  /**
   * The calling hours the workflow found open closed before the dial try could place the call (the
   * try started late: workers busy or down, or a retry): not placed; details[0] is the try's number.
   */
  callingHoursClosed: 'CALLING_HOURS_CLOSED',
  /**
   * A dial retried past its placing window (activities/dial.ts) found no call placed by its earlier
   * tries: not placed, and not placed now, so late.
   */
  dialWindowPassed: 'DIAL_WINDOW_PASSED',
  /**
   * Retryable: a dial try whose lookup left too little of its time for the provider request to end
   * within it. Not placed; the next try looks for a call first, as every retry does.
   */
  dialTryOutOfTime: 'DIAL_TRY_OUT_OF_TIME',
  /**
   * A webhook attempt's request went out and no try could record it (the store down throughout);
   * details[0] is what came of the request (AttemptResult): it is noted as made, not sent again.
   */
  webhookAttemptUnrecorded: 'WEBHOOK_ATTEMPT_UNRECORDED',
  /**
   * The team already has as many webhook attempts under way in the worker as it may
   * (WEBHOOK_MAX_ATTEMPTS_PER_TEAM): nothing was sent; the stream waits and makes the same attempt.
   */
  webhookTeamBusy: 'WEBHOOK_TEAM_BUSY',
} as const;
export type FailureType = (typeof FAILURES)[keyof typeof FAILURES];

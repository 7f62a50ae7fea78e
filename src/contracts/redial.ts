// A call template's redial policy: which unanswered outcomes are dialled again, how many more times
// and how far apart. Plain data: safe inside workflows.
import { STATUS_CODES, type CallStatus, type StatusCode } from './call-status';

/** Outcomes a policy may redial on; `providerError` is a failed dial or a call dropped before answer. */
export const REDIAL_OUTCOMES = ['busy', 'noAnswer', 'providerError'] as const;
export type RedialOutcome = (typeof REDIAL_OUTCOMES)[number];

export interface RedialPolicy {
  on: RedialOutcome[];
  /** Attempts after the first: 1-10. */
  maxRedials: number;
  /** From the end of one attempt to the next dial (which still waits for the calling hours and a slot). */
  spacingSeconds: number;
}

export const MAX_REDIALS = 10;
export const MAX_REDIAL_SPACING_SECONDS = 7 * 86_400;

/** The policy outcome an attempt's result counts as, if any. A declined call counts as none. */
export function redialOutcomeOf(result: { status: CallStatus; code: StatusCode }): RedialOutcome | null {
  if (result.status === 'busy' && result.code === STATUS_CODES.busy) return 'busy';
  if (result.status === 'noAnswer') return 'noAnswer';
  if (result.status === 'failed' && result.code === STATUS_CODES.providerError) return 'providerError';
  return null;
}

/** Whether an unanswered attempt that ended with `result` is dialled again (`attempt` counts from 1). */
export function shouldRedial(
  policy: RedialPolicy | null | undefined,
  attempt: number,
  result: { status: CallStatus; code: StatusCode },
): boolean {
  if (!policy || attempt > policy.maxRedials) return false;
  const outcome = redialOutcomeOf(result);
  return outcome !== null && policy.on.includes(outcome);
}

/** `busy,noAnswer x2 every 1h`-style summary for operators. */
export function describeRedialPolicy(policy: RedialPolicy): string {
  return `${policy.on.join(', ')}: up to ${policy.maxRedials} more, ${policy.spacingSeconds} s apart`;
}

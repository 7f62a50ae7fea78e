// The call workflow's activities, one set of options per retry profile, each call named for the
// Temporal UI's timeline (`step`, `localStep`).
import {
  ActivityCancellationType,
  type ActivityOptions,
  type LocalActivityOptions,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { FAILURES } from '../src/contracts/failures';

// Timeouts are short where the work is: Temporal learns that a killed worker's activity is lost only
// when its timeout passes, and the call waits that long before the retry.
export const RECORD_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
};
export const DIAL_OPTIONS: ActivityOptions = {
  // Room for the lookup a retry makes first (a provider's search may take several requests), a turn's
  // wait (3 s) and one provider request (15 s), which a try begins only with that much of its time
  // left (activities/dial.ts). A try whose worker died is retried after it: no heartbeat timeout, as
  // the server would then give up on a try between throttled heartbeats while it still placed a call.
  startToCloseTimeout: '45 seconds',
  // Tries go on while our store or the provider fails (see retry), but not for ever: a dial whose
  // every lookup fails for an hour ends failed, its call unknown.
  scheduleToCloseTimeout: '1 hour',
  // A cancel arriving mid-dial waits for the dial to settle, so that a call it placed is hung up.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // No cap on attempts (the hour above caps them): a call an early try placed must be found,
    // however long our store or the provider stays down (capped at 8, the dial ended "never placed"
    // while the person's phone rang). Tries past the placing window only look (activities/dial.ts).
    nonRetryableErrorTypes: [
      FAILURES.providerRejected,
      FAILURES.dialWindowPassed,
      FAILURES.callRecordMissing,
      FAILURES.providerNotConfigured,
      FAILURES.providerRateLimited,
      FAILURES.accountDialRateReached,
      FAILURES.doNotCall,
    ],
  },
};
// Which endpoints an event goes to: a short read, run as a local activity (no task queue round trip),
// which matters when a batch of thousands of calls starts at once.
const LOCAL_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
};
// Hanging up is urgent and may be impossible (the provider no longer knows the call): retry briefly.
// Room for two provider requests (15 s each): a search for the call a cut-short dial placed, then the
// hang-up.
export const HANG_UP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '35 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
};
// Asking the provider how a silent call stands: an answer that does not come is no news. Kept short
// though Telnyx's poll makes two requests: the poll at a deadline comes before the hang-up, and three
// longer tries would hold that hang-up for up to two minutes while a provider hangs.
export const POLL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '4 seconds', maximumAttempts: 3 },
};
// A voicemail message is worth leaving only while the machine still records: a few quick tries.
export const VOICEMAIL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '4 seconds', maximumAttempts: 3 },
};
// The capture heartbeats every 5 s while it runs (activities/heartbeats.ts): an attempt that hangs, or
// whose task never reached a worker, is retried after 20 s, not after the 2-minute start-to-close.
export const CAPTURE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
};

/** The activities with `options`, each call shown in the Temporal UI's timeline as `summary`. */
export function step(options: ActivityOptions, summary: string) {
  return proxyActivities<Activities>({ ...options, summary });
}
export function localStep(summary: string) {
  return proxyLocalActivities<Activities>({ ...LOCAL_OPTIONS, summary });
}

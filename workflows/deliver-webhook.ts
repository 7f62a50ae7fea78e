// Delivers one call's events to one endpoint, in the order they happened: a later event waits until
// the earlier one was delivered or given up on. Each attempt is an activity; the waits between
// attempts are durable timers following the retry schedule (decisions.md), so a worker restart
// loses nothing.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  sleep,
  TimeoutFailure,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { MadeAttempt } from '../activities/webhooks';
import { FAILURES } from '../src/contracts/failures';
import { isFinalCallEvent } from '../src/contracts/events';
import { enqueueEventSignal, noMoreEventsSignal } from './messages';
import type { WebhookEvent, DeliveryWorkflowInput } from './types';

const ATTEMPT_OPTIONS: ActivityOptions = {
  // One HTTP attempt has a 15 s budget; the rest covers recording it in MongoDB.
  startToCloseTimeout: '45 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
};
// Noting an attempt that could not be made: best effort, the store may be down still.
const NOT_MADE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
};

/** A stream whose call never says it has ended stops waiting after this long. */
const IDLE_LIMIT_MS = 24 * 60 * 60 * 1000;

export async function deliverWebhookEventsWorkflow(
  input: DeliveryWorkflowInput,
): Promise<{ delivered: number; failed: number }> {
  const queue: WebhookEvent[] = [];
  // A redelivery carries one event and no stream follows it.
  let noMoreEvents = input.redelivery !== undefined;
  // Events handed over by a call's local activity may come twice (a retried activity sends again):
  // each event id is taken once.
  const taken = new Set<string>();
  const enqueue = (event: WebhookEvent) => {
    if (taken.has(event.eventId)) return;
    taken.add(event.eventId);
    queue.push(event);
    // Nothing follows a call's final event: the stream ends once the queue is delivered.
    if (input.endsWithFinalEvent && isFinalCallEvent(event.type)) noMoreEvents = true;
  };
  enqueue(input.firstEvent);
  setHandler(enqueueEventSignal, enqueue);
  setHandler(noMoreEventsSignal, () => {
    noMoreEvents = true;
  });

  // Attempts on a queue of their own (streams since it): a receiver that hangs holds no call's activities.
  const onAttemptQueue: Pick<ActivityOptions, 'taskQueue'> = input.attemptTaskQueue
    ? { taskQueue: input.attemptTaskQueue }
    : {};
  let delivered = 0;
  let failed = 0;
  for (;;) {
    if (queue.length === 0) {
      const more = await condition(() => queue.length > 0 || noMoreEvents, IDLE_LIMIT_MS);
      if (!more || queue.length === 0) break;
    }
    const event = queue.shift()!;
    if (await deliverWithRetries(event)) delivered += 1;
    else failed += 1;
  }
  return { delivered, failed };

  async function deliverWithRetries(event: WebhookEvent): Promise<boolean> {
    const delays = input.retryDelaysMs;
    // A redelivery follows the whole schedule again; its attempts are recorded after the earlier ones.
    const recordedBefore = (input.redelivery?.firstAttempt ?? 1) - 1;
    for (let tried = 1; ; tried += 1) {
      const isLast = tried > delays.length;
      const attempt = recordedBefore + tried;
      // Named for the timeline: which event, which attempt of the schedule.
      const summary = `${input.target.method} ${event.type}, ${input.redelivery ? 'redelivery ' : ''}attempt ${tried} of ${delays.length + 1}`;
      const attemptInput = {
        callId: input.callId,
        teamId: input.teamId,
        target: input.target,
        event,
        attempt,
        isLastAttempt: isLast,
        waitsWhileTeamBusy: true,
      };
      const result = await attemptOnceTeamHasRoom(attemptInput, summary, onAttemptQueue).catch((err: unknown) =>
        attemptNotMade(attemptInput, err, onAttemptQueue),
      );
      if (result.ok) return true;
      if (result.gone) {
        // A 410 from the receiver, or the team's webhook deleted since (nothing was sent).
        log.info('delivery stopped: the receiver answered 410 Gone, or the webhook was deleted', {
          eventId: event.eventId,
        });
        return false;
      }
      if (isLast) return false;
      const delay = delays[tried - 1]!;
      await sleep(delay, { summary: `retry ${event.type} in ${formatDelay(delay)}` });
    }
  }
}

/** How long one attempt waits for its team's room before it counts as not made (and the schedule goes on). */
const TEAM_BUSY_WAIT_LIMIT_MS = 10 * 60 * 1000;

/**
 * Makes the attempt once the team has room for it: refused while the team has its cap of attempts
 * under way in the worker (WEBHOOK_MAX_ATTEMPTS_PER_TEAM; nothing was sent), the stream waits, 1 s
 * and doubling up to a minute with a little jitter, and makes the same attempt again. The wait is not
 * a step of the retry schedule: its receiver has not been tried. After TEAM_BUSY_WAIT_LIMIT_MS the
 * refusal stands (attemptNotMade notes it), so that a stream whose team stays at its cap for hours
 * goes on with its schedule rather than waiting, its history growing, for ever.
 */
async function attemptOnceTeamHasRoom(
  attemptInput: Parameters<Activities['attemptWebhookDelivery']>[0],
  summary: string,
  onAttemptQueue: Pick<ActivityOptions, 'taskQueue'>,
): Promise<{ ok: boolean; gone: boolean }> {
  let waited = 0;
  for (let waits = 0; ; waits += 1) {
    try {
      return await proxyActivities<Activities>({
        ...ATTEMPT_OPTIONS,
        ...onAttemptQueue,
        summary,
      }).attemptWebhookDelivery(attemptInput);
    } catch (err) {
      const busy =
        err instanceof ActivityFailure &&
        err.cause instanceof ApplicationFailure &&
        err.cause.type === FAILURES.webhookTeamBusy;
      if (!busy || waited >= TEAM_BUSY_WAIT_LIMIT_MS) throw err;
      // Math.random is seeded per workflow: the same on replay.
      const delay = Math.round(Math.min(1_000 * 2 ** waits, 60_000) * (1 + Math.random() / 4));
      waited += delay;
      await sleep(delay, {
        summary: `the team's webhook attempts at their cap: ${attemptInput.event.type} waits`,
      });
    }
  }
}

/**
 * An attempt whose every try failed (its HTTP request may have gone out or not; the store that records
 * it or the key that opens the secret was out for minutes) counts as a failed attempt of the schedule:
 * the stream goes on, and the events behind it are not lost with it. It is noted on the delivery when
 * the store takes it. One whose request went out and whose every try failed to record it (the store
 * down throughout: the failure carries the request's outcome) counts as that outcome, noted as made.
 */
async function attemptNotMade(
  attemptInput: Parameters<Activities['attemptWebhookDelivery']>[0],
  err: unknown,
  onAttemptQueue: Pick<ActivityOptions, 'taskQueue'>,
): Promise<{ ok: boolean; gone: boolean }> {
  if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
  const error = String(err.cause?.message ?? err.message);
  // Its request went out and no try could record it: noted as made, and it counts as what came of it
  // (not sent again).
  // (Handed over by its last try, or left as that try's heartbeat when its time ran out first.)
  const { cause } = err;
  const handedOver =
    cause instanceof ApplicationFailure && cause.type === FAILURES.webhookAttemptUnrecorded
      ? cause.details?.[0]
      : cause instanceof TimeoutFailure
        ? cause.lastHeartbeatDetails
        : undefined;
  const made = (handedOver as Partial<MadeAttempt> | undefined)?.result ? (handedOver as MadeAttempt) : undefined;
  // Refused for its team's cap for longer than an attempt waits (attemptOnceTeamHasRoom).
  const teamBusy = cause instanceof ApplicationFailure && cause.type === FAILURES.webhookTeamBusy;
  if (made) log.warn('webhook attempt made, its record lost', { eventId: attemptInput.event.eventId, error });
  else log.warn('webhook attempt could not be made; counted as failed', { eventId: attemptInput.event.eventId, error });
  try {
    await proxyActivities<Activities>({
      ...NOT_MADE_OPTIONS,
      ...onAttemptQueue,
      summary: made ? 'note the attempt made (its record lost)' : 'note the attempt not made',
    }).recordAttemptNotMade({
      ...attemptInput,
      error,
      ...(made ? { made } : {}),
      ...(teamBusy ? { teamBusy } : {}),
    });
  } catch (noteErr) {
    if (isCancellation(noteErr) || !(noteErr instanceof ActivityFailure)) throw noteErr;
    log.warn('could not note the attempt not made', { eventId: attemptInput.event.eventId });
  }
  return made ? { ok: made.result.ok, gone: made.result.gone } : { ok: false, gone: false };
}

/** 5 s, 30 min, 2 h: as the retry schedule is written. */
function formatDelay(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 100) / 10} s`;
}

// One phone call's life: wait until its time (durably), dial, follow the provider's events, capture
// recording, transcript and results, and record every status change. Deterministic code only. The
// pieces it runs live beside it: its activities (call-steps), following a dialled call to its end
// (call-follow), and its events on their way to the webhooks (call-webhook-streams).
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  patched,
  setHandler,
  sleep,
  TimeoutFailure,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { StatusWritten } from '../activities/call-record';
import type { CaptureInput } from '../activities/capture';
import type { Dialled } from '../activities/dial';
import { STATUS_CODES, isTerminal, type CallStatus, type StatusCode } from '../src/contracts/call-status';
import { statusEventName } from '../src/contracts/events';
import { FAILURES } from '../src/contracts/failures';
import { pacerWorkflowId } from '../src/contracts/ids';
import type { ProviderEvent } from '../src/contracts/providers';
import { shouldRedial } from '../src/contracts/redial';
import { SA_STATUS } from '../src/contracts/search-attributes';
import { CAPTURE_OPTIONS, DIAL_OPTIONS, HANG_UP_OPTIONS, RECORD_OPTIONS, localStep, step } from './call-steps';
import { followCall, type AttemptOutcome } from './call-follow';
import { CallWebhookStreams } from './call-webhook-streams';
import {
  callStateQuery,
  deleteQueuedCallUpdate,
  cancelCallUpdate,
  dialSlotGrantedSignal,
  providerEventSignal,
  releaseDialSlotSignal,
  setPausedUpdate,
} from './messages';
import type { CallWorkflowState, CallWorkflowInput, DeleteOutcome } from './types';

/** A final status change, as the capture writes it (or recordStatus, should the capture fail). */
type FinalChange = Omit<NonNullable<CaptureInput['final']>, 'callId'>;

/** How long a dialled call may ring when the input does not say (histories from before the field). */
const DEFAULT_RING_TIMEOUT_SECONDS = 120;
/**
 * The provider is asked to end an answered call itself this long after the maximum duration: a
 * backstop for our hang-up failing through all its retries, which left the call live up to the
 * provider's own limit (2 to 4 hours). Our deadline must still pass first, so that the call ends
 * `max-duration` as before; it counts from when the workflow hears of the answer, which can be late
 * (a lost callback, found by the status poll): the poll's interval is added to it.
 */
const PROVIDER_TIME_LIMIT_MARGIN_SECONDS = 30;
/**
 * A dial refused for closed calling hours on a later try (or on the first try of a dial looking back
 * for such a call) stays dialling this long, then looks again for a call an earlier try may have
 * placed unseen: the refused try's lookup can run before the provider lists the call or its first
 * callback arrives (both come within seconds of the placing).
 */
const HOURS_CLOSED_LOOK_AGAIN_MS = 30_000;
/**
 * A provider refusing one dial for its rate limit this many times (the team's own refusals between
 * them not counted) is then asked less and less often: its wait doubles from 2 s up to
 * PROVIDER_REFUSAL_WAIT_MAX_MS. Each refusal costs the call's history about a dozen events, and a
 * provider that refused for hours (an account's limit below the team's dial rate, an account shared
 * with others) would bring it to Temporal's 50,000, which ends the workflow with nothing recorded. The
 * team's own dial rate is kept by the pacer and is not slowed.
 */
const PROVIDER_REFUSALS_AT_FULL_PACE = 10;
const PROVIDER_REFUSAL_WAIT_MAX_MS = 5 * 60_000;
/** A call waiting this long for a slot asks its pacer again (it answers at once if the slot is there). */
const SLOT_REQUEST_REPEAT = '1 hour';
const SLOT_REQUEST_REPEAT_MS = 60 * 60 * 1000;

export async function phoneCallWorkflow(input: CallWorkflowInput): Promise<CallWorkflowState> {
  const state: CallWorkflowState = {
    callId: input.callId,
    status: 'queued',
    phase: 'waiting',
    statusCode: input.scheduledFor ? STATUS_CODES.scheduled : STATUS_CODES.queued,
    scheduledFor: input.scheduledFor,
    providerCallId: null,
    triggeredAt: null,
    answeredAt: null,
    endedAt: null,
    providerEventsSeen: 0,
    attempt: 1,
    answeredBy: null,
  };
  const inbox: ProviderEvent[] = [];
  const ringTimeoutSeconds = input.ringTimeoutSeconds ?? DEFAULT_RING_TIMEOUT_SECONDS;
  let deleteRequested = false;
  let deleted: DeleteOutcome | null = null;
  // A call of a file paused before its chunk was written starts as if it had taken that pause.
  let paused = input.startsPaused === true;
  /** The workflow is in its `finally`: an update still waiting is answered now. */
  let closing = false;
  /** Its batch was cancelled while it was being dialled: no redial. */
  let redialsCancelled = false;
  /** When the calling hours last found open close (null: the call has none): no dial places it after. */
  let dialBefore: number | null = null;
  let slotGranted = false;
  /** Whether the pacer knows this call (queued or holding a slot), so it must be told when it ends. */
  let slotRequested = false;
  /** Numbers this call's requests, so a grant for a withdrawn one is told apart. */
  let slotTicket = 0;
  /** An attempt that had ended, to be redialled, when an operator's cancel ended the call instead. */
  let attemptEndedBeforeCancel: ReturnType<typeof attemptRecord> | null = null;
  const streams = new CallWebhookStreams(input, state);

  setHandler(callStateQuery, () => state);
  setHandler(dialSlotGrantedSignal, ({ ticket }) => {
    // A grant answering a request this call has since withdrawn (paused, hours closed) is stale.
    if (slotRequested && ticket === slotTicket) slotGranted = true;
  });
  setHandler(
    setPausedUpdate,
    (value) => {
      const changed = paused !== value;
      paused = value;
      return { changed, queued: state.phase === 'waiting' };
    },
    // A call being dialled takes it too, for a redial its policy may make: a paused batch dials none.
    { validator: (_value: boolean) => refuseOnceEnded('paused or resumed') },
  );
  setHandler(
    cancelCallUpdate,
    async () => {
      if (state.phase === 'waiting') {
        deleteRequested = true;
        // Answered once the record is gone, as a delete is, so that a batch's cancel counts only calls
        // removed (one whose hours were found closed for good as the delete came ends failed instead).
        // Histories from before answered at once.
        if (!patched('cancel-answers-once-removed')) return { deleted: true };
        await CancellationScope.nonCancellable(() =>
          condition(() => deleted !== null || (state.phase === 'ended' && isTerminal(state.status)) || closing),
        );
        return { deleted: deleted !== null };
      }
      redialsCancelled = true;
      return { deleted: false };
    },
    { validator: () => refuseOnceEnded('cancelled') },
  );
  setHandler(providerEventSignal, (event) => {
    state.providerEventsSeen += 1;
    inbox.push(event);
  });
  setHandler(
    deleteQueuedCallUpdate,
    async () => {
      deleteRequested = true;
      // The call may end without taking it: its calling hours, checked as the delete came, never
      // open again. The delete is then refused as for any call no longer queued (no command changes).
      const settled = () =>
        condition(
          () =>
            deleted !== null ||
            (state.phase === 'ended' && isTerminal(state.status)) ||
            // Only for calls since the flag: a run from before that closed with the update still
            // waiting waited for ever, and answering it now would not replay.
            (closing && input.deleteOutlivesCancel === true),
        );
      // An operator's cancel meanwhile no longer fails the update: it is answered by how the call ended.
      await (input.deleteOutlivesCancel ? CancellationScope.nonCancellable(settled) : settled());
      if (deleted === null) {
        // The workflow is closing without the removal (it found the record no longer queued): refused
        // as such, rather than failed with the workflow.
        if (closing) {
          throw ApplicationFailure.create({
            type: FAILURES.callNotQueued,
            message: `the call could not be deleted; status is ${state.status}`,
            details: [state.status],
            nonRetryable: true,
          });
        }
        refuseUnlessQueued('deleted');
      }
      return deleted!;
    },
    {
      // Runs before the update is accepted: once dialling has begun, deletion is refused, so a
      // call is never both deleted and rung.
      validator: () => refuseUnlessQueued('deleted'),
    },
  );

  /**
   * The attempt a write of the record names, so that landing after the attempt ended (a late try) it
   * changes nothing (calls since `writesNameAttempt`).
   */
  function namedAttempt(attempt: number): { attempt?: number } {
    return input.writesNameAttempt ? { attempt } : {};
  }

  /** Pausing and a batch's cancel reach a call until it has ended (or is being deleted). */
  function refuseOnceEnded(what: string): void {
    if (state.phase === 'ended' || state.phase === 'deleting' || state.phase === 'deleted') {
      throw ApplicationFailure.create({
        type: FAILURES.callNotQueued,
        message: `only calls that have not ended can be ${what}; status is ${state.status}`,
        details: [state.status],
        nonRetryable: true,
      });
    }
  }

  function refuseUnlessQueued(what: string): void {
    if (state.phase !== 'waiting' && state.phase !== 'deleting') {
      throw ApplicationFailure.create({
        type: FAILURES.callNotQueued,
        message: `only queued calls can be ${what}; status is ${state.status === 'queued' ? 'ringing' : state.status}`,
        details: [state.status],
        nonRetryable: true,
      });
    }
  }

  async function moveTo(
    status: CallStatus,
    statusCode: StatusCode,
    fields: Parameters<Activities['recordStatus']>[0]['fields'] = {},
    endedAttempt?: Parameters<Activities['recordStatus']>[0]['endedAttempt'],
    at = new Date().toISOString(),
    outputsLost = false,
  ) {
    const change = {
      callId: input.callId,
      status,
      statusCode,
      at,
      fields,
      endedAttempt,
      // A field of the activity's input only: histories replay with or without it.
      ...(outputsLost ? { emptyResults: true as const } : {}),
      // A redial's `queued` ends the attempt before it (`state.attempt` already names the next).
      ...namedAttempt(endedAttempt?.attempt ?? state.attempt),
    };
    const before = streams.snapshot();
    const route = streams.writeRoute(statusEventName(status), at);
    const record = step(RECORD_OPTIONS, `record ${status} (${statusCode})`);
    const write = async () => {
      // Histories from before `routeWithWrites` scheduled the write with its change alone.
      const result = await (route ? record.recordStatus(change, route) : record.recordStatus(change));
      await movedTo(status, statusCode, result, at, before);
    };
    await outlivingCancel(write);
  }

  /**
   * Runs a status change's write and its telling to the end, though an operator cancels meanwhile (calls
   * since `statusWritesOutliveCancel`): the cancel takes effect at the next wait, after it.
   */
  function outlivingCancel(work: () => Promise<void>): Promise<void> {
    return input.statusWritesOutliveCancel ? CancellationScope.nonCancellable(work) : work();
  }

  /**
   * A status change has been written (by recordStatus, the dial for `ringing`, or the capture): show and
   * tell it. A write that routed its event (`routeWithWrites`) leaves only its new streams to start.
   */
  async function movedTo(
    status: CallStatus,
    statusCode: StatusCode,
    result: StatusWritten,
    at: string,
    before: ReadonlyMap<string, unknown>,
  ) {
    state.status = status;
    state.statusCode = statusCode;
    upsertSearchAttributes([{ key: SA_STATUS, value: status }]);
    upsertMemo({ summary: `${status} (${statusCode}) · ${input.toPhoneNumber} via ${input.provider}` });
    if (!result.applied || !result.call) return;
    if (result.routed) await streams.handOn(statusEventName(status), result.routed, before);
    else await streams.emit(statusEventName(status), result.call, at);
  }

  try {
    // Looked up unless the API found no endpoint for it at create: a local activity less per call.
    if (!input.queuedEventUnsubscribed)
      await streams.emit('phoneCall.queued', null, workflowInfo().startTime.toISOString());

    // 1. Wait until the scheduled time (a durable timer), or until a delete arrives.
    const waitMs = input.scheduledFor ? Date.parse(input.scheduledFor) - Date.now() : 0;
    if (waitMs > 0 && input.pauseShownWhileScheduled) await waitUntilScheduled(Date.parse(input.scheduledFor!));
    else if (waitMs > 0)
      await condition(() => deleteRequested, waitMs, { summary: `scheduled for ${input.scheduledFor}` });

    // 1b-4, once per dial attempt: a redial policy may dial an unanswered call again.
    for (;;) {
      const ended = await attemptOnce();
      if (ended) return state;
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // An operator cancelled the workflow (e.g. from the Temporal UI): hang up if live, record it.
    await CancellationScope.nonCancellable(async () => {
      // `dialling` too: a dial cut short by the cancel may still have placed the call.
      const live =
        state.phase === 'dialling' ||
        state.phase === 'ringing' ||
        state.phase === 'inProgress' ||
        state.phase === 'capturing';
      // A dial cut short with no call id known (a try that placed the call lost its answer, and the
      // cancel came before the retry that would have found it): the hang-up looks for the call first.
      const dialledSince = state.phase === 'dialling' && !state.providerCallId ? state.triggeredAt : null;
      const hungUp = live && !isTerminal(state.status) ? await hangUp(dialledSince) : null;
      if (!isTerminal(state.status) && state.phase !== 'deleted') {
        state.phase = 'ended';
        const endedAt = attemptEndedBeforeCancel?.callEndedAt ?? new Date().toISOString();
        const providerCallId = hungUp && !state.providerCallId ? { providerCallId: hungUp } : {};
        // An attempt that was dialled goes into `attempts`, as every other ending's does (one that had
        // ended before the cancel, as it ended).
        const attempt =
          attemptEndedBeforeCancel ??
          (state.triggeredAt
            ? {
                ...attemptRecord({ status: 'cancelled', code: STATUS_CODES.cancelledByOperator }, endedAt),
                ...providerCallId,
              }
            : undefined);
        // The attempt leaves its call's length and who answered, as its own ending would: one that had
        // ended as it ended, one answered and hung up now from its answer to this end (before
        // 2026-12-02, an answered call cancelled live had no `callDuration`).
        const endedFields = attempt && {
          ...(attempt.callStartedAt
            ? { callDuration: secondsBetween(attempt.callStartedAt, attempt.callEndedAt) }
            : {}),
          ...(attempt.answeredBy ? { answeredBy: attempt.answeredBy } : {}),
        };
        await moveTo(
          'cancelled',
          STATUS_CODES.cancelledByOperator,
          { callEndedAt: endedAt, ...providerCallId, ...endedFields },
          attempt,
        );
      }
    });
    throw err;
  } finally {
    closing = true;
    // Tell every delivery stream that no more events will come, so each can finish (one handed the
    // final event knows).
    await CancellationScope.nonCancellable(async () => {
      if (slotRequested) await releaseSlot();
      await streams.endAll();
      // A delete update still running gets its answer before the workflow closes.
      await condition(allHandlersFinished);
    });
  }

  /**
   * One dial attempt: wait for the calling hours and a slot, dial, follow the call, capture what it
   * left. Answers true once the call has ended for good (or was deleted), false when the redial
   * policy dials again (the call is queued again, waiting out the spacing).
   */
  async function attemptOnce(): Promise<boolean> {
    // 1b. Wait for the calling hours and a dial slot, until both hold at once (or a delete arrives).
    const ready = await waitUntilDialAllowed();
    if (ready !== 'ready') return await endWithoutDial(ready);

    // 2. Dial. From here on the call can no longer be deleted (until a redial queues it again).
    state.phase = 'dialling';
    const triggeredAt = new Date().toISOString();
    state.triggeredAt = triggeredAt;
    let dialled: Awaited<ReturnType<typeof dialThroughRateLimits>>;
    try {
      dialled = await dialThroughRateLimits(triggeredAt);
    } catch (err) {
      if (isCancellation(err)) throw err;
      // A try that failed after the operator's cancel came is not retried (the server retries no
      // activity once its cancel is asked), and reaches here as a failure, not a cancel: it is the
      // cancel, whose path looks for a call an earlier try may have placed and hangs it up. Before,
      // the call ended `failed` and such a call rang on (histories from before replay so).
      if (cutShortByCancel(err) && patched('dial-failed-under-cancel-is-cancel'))
        await CancellationScope.current().cancelRequested;
      const outcome: AttemptOutcome = { status: 'failed', code: rejectionCode(err) };
      state.endedAt = new Date().toISOString();
      // Tries that never learnt whether the call was placed (none found it through the placing
      // window, or the dial's hour ran out) end the call here: the person may have been rung by a call
      // no lookup found, and a redial would ring them again. Histories from before redialled it.
      const unknown = dialOutcomeUnknown(err) && patched('unknown-dial-outcome-not-redialled');
      return await endAttempt(outcome, unknown ? finalChange(outcome) : null);
    }
    // Deleted, or its hours closed for good, while it waited out a rate limit (nothing was placed).
    if (dialled === 'deleted' || dialled === 'never') return await endWithoutDial(dialled);
    state.providerCallId = dialled.providerCallId;
    state.phase = 'ringing';
    if (dialled.ringing) {
      const { ringing, ringingAt, before } = dialled;
      await outlivingCancel(() => movedTo('ringing', STATUS_CODES.dialling, ringing, ringingAt, before));
    } else
      await moveTo('ringing', STATUS_CODES.dialling, {
        callTriggeredAt: triggeredAt,
        providerCallId: dialled.providerCallId,
      });

    // 3. Follow the provider's events until the call ends (or our timers end it).
    const outcome = await followCall({
      input,
      state,
      inbox,
      ringTimeoutSeconds,
      recordAnswered: (at) => moveTo('inProgress', STATUS_CODES.answered, { callStartedAt: at }),
      hangUp: () => hangUp(),
    });
    // The call is no longer live: its slot goes to the next call while this one's outputs are captured.
    // 4. Capture what an answered call left behind, then record the final status (step 4 of "What
    // runs where"). For calls since `captureOutlivesCancel`, an operator's cancel arriving now no
    // longer cuts this short: the call has ended, its outputs are kept and its true ending recorded,
    // and a cancelled write could not race the capture's final one; since `endOutlivesCancel`, nor
    // does one arriving while the slot goes back.
    const release = async () => {
      if (slotRequested) await releaseSlot();
    };
    const ending = () => captureAndEnd(outcome);
    let ended: boolean | null;
    if (input.endOutlivesCancel) {
      ended = await CancellationScope.nonCancellable(async () => {
        await release();
        return await ending();
      });
    } else {
      await release();
      ended = input.captureOutlivesCancel ? await CancellationScope.nonCancellable(ending) : await ending();
    }
    if (ended !== null) return ended;
    return await endAttempt(outcome, null);
  }

  /**
   * Captures an answered call's outputs and writes its final status, with them or after; answers
   * null when the attempt is to be dialled again (endAttempt waits out the spacing, cancellably).
   */
  async function captureAndEnd(outcome: AttemptOutcome): Promise<boolean | null> {
    let final: FinalChange | null = null;
    /** The capture failed for good: the final write gives each result column an empty value. */
    let outputsLost = false;
    if (state.answeredAt) {
      state.phase = 'capturing';
      final = input.finalWithCapture && !redials(outcome) ? finalChange(outcome) : null;
      const what = input.record ? 'capture recording, transcript and results' : 'capture transcript and results';
      const before = streams.snapshot();
      const transcriptRoute = streams.writeRoute('transcript.created', state.endedAt!);
      const finalRoute = final ? streams.writeRoute(statusEventName(final.status), final.at) : undefined;
      try {
        // Named for the timeline with all it does, as the dial that records ringing.
        const captured = await step(
          CAPTURE_OPTIONS,
          final ? `${what}, record ${final.status} (${final.statusCode})` : what,
        ).captureCallOutputs({
          callId: input.callId,
          providerCallId: state.providerCallId!,
          record: input.record,
          answeredAt: state.answeredAt,
          endedAt: state.endedAt!,
          answeredBy: state.answeredBy,
          // A field of the activity's input only: histories replay with or without it.
          ...namedAttempt(state.attempt),
          ...(final ? { final: { callId: input.callId, ...final } } : {}),
          ...(transcriptRoute
            ? { route: { transcript: transcriptRoute, ...(finalRoute ? { final: finalRoute } : {}) } }
            : {}),
        });
        if (captured.transcriptRouted) await streams.handOn('transcript.created', captured.transcriptRouted, before);
        else if (captured.transcriptEvent)
          await streams.emit('transcript.created', captured.transcriptEvent, state.endedAt!);
        if (final && captured.final) {
          state.phase = 'ended';
          await movedTo(final.status, final.statusCode as StatusCode, captured.final, final.at, before);
          return true;
        }
      } catch (err) {
        // The call has ended whatever became of its recording or transcript: record how it ended
        // (the same change the capture was to write, so that one that landed is known as such).
        if (isCancellation(err)) throw err;
        log.error('capturing the call outputs failed; the call ends without them', { error: String(err) });
        outputsLost = true;
      }
    }
    if (redials(outcome)) return null;
    return await endAttempt(outcome, final, outputsLost);
  }

  /** Whether the redial policy dials this attempt again (answered only by a machine counts as unanswered). */
  function redials(outcome: AttemptOutcome): boolean {
    const unanswered = !state.answeredAt || outcome.code === STATUS_CODES.answeringMachine;
    return unanswered && !redialsCancelled && shouldRedial(input.redialPolicy, state.attempt, outcome);
  }

  /** The attempt as it goes into the call's `attempts`. */
  function attemptRecord(outcome: AttemptOutcome, endedAt: string) {
    return {
      attempt: state.attempt,
      providerCallId: state.providerCallId,
      callTriggeredAt: state.triggeredAt ?? endedAt,
      callStartedAt: state.answeredAt,
      callEndedAt: endedAt,
      status: outcome.status,
      statusCode: outcome.code,
      answeredBy: state.answeredBy,
    };
  }

  /** The call's final status change for an attempt that ends it, its time fixed now. */
  function finalChange(outcome: AttemptOutcome): FinalChange {
    const endedAt = state.endedAt ?? new Date().toISOString();
    const record = attemptRecord(outcome, endedAt);
    const dialFailed = state.providerCallId === null;
    return {
      status: outcome.status,
      statusCode: outcome.code,
      at: new Date().toISOString(),
      fields: dialFailed
        ? { callTriggeredAt: record.callTriggeredAt, callEndedAt: endedAt }
        : {
            callEndedAt: endedAt,
            callDuration: state.answeredAt ? secondsBetween(state.answeredAt, endedAt) : undefined,
            answeredBy: state.answeredBy ?? undefined,
          },
      endedAttempt: record,
    };
  }

  /**
   * Records how the attempt ended: as the call's final status (`planned`, when the capture was to
   * write it), or, when the redial policy dials an unanswered attempt again, by queueing the call
   * again and waiting out the spacing. True: ended.
   */
  async function endAttempt(
    outcome: AttemptOutcome,
    planned: FinalChange | null = null,
    outputsLost = false,
  ): Promise<boolean> {
    const policy = input.redialPolicy;
    if (!planned && redials(outcome)) {
      const record = attemptRecord(outcome, state.endedAt ?? new Date().toISOString());
      // An operator's cancel taken meanwhile (it came while the attempt's outputs were captured) ends
      // the call before any redial: the cancel's write records this attempt as it ended, with no
      // `queued` (and its `phoneCall.queued`) between the attempt and `cancelled`.
      if (input.cancelBeforeRedialQueues && CancellationScope.current().consideredCancelled) {
        state.phase = 'ended';
        attemptEndedBeforeCancel = record;
        await CancellationScope.current().cancelRequested;
      }
      // An operator's cancel taken while the slot goes back records this attempt as it ended, not as
      // cut short while dialling. Only the cancel's write changes (the record's `attempts`), no command.
      attemptEndedBeforeCancel = record;
      // Waiting from here, before the slot goes back: a batch's cancel taken meanwhile deletes the
      // call (it was told "no redial" and the redial came anyway, the release being a local activity).
      // Histories from before replay the old order: an update taken there was answered by it.
      if (patched('waiting-before-slot-release')) {
        state.phase = 'waiting';
        if (slotRequested) await releaseSlot();
      } else {
        if (slotRequested) await releaseSlot();
        state.phase = 'waiting';
      }
      // From the `queued` write on, a cancel's write names the next attempt, as before: whether that
      // write landed (and recorded this attempt) is not known if the cancel cuts it short.
      attemptEndedBeforeCancel = null;
      // The next attempt begins here: its phoneCall.queued event is its own.
      state.attempt += 1;
      await moveTo('queued', STATUS_CODES.waitingToRedial, {}, record);
      const redialAt = Date.now() + policy!.spacingSeconds * 1000;
      state.providerCallId = null;
      state.triggeredAt = null;
      state.answeredAt = null;
      state.endedAt = null;
      state.answeredBy = null;
      inbox.length = 0;
      const summary = `redial ${state.attempt - 1} of ${policy!.maxRedials} at ${new Date(redialAt).toISOString()}`;
      if (input.pauseShownWhileRedialWaits) await waitOutRedialSpacing(redialAt, summary);
      else await condition(() => deleteRequested, redialAt - Date.now(), { summary });
      // A delete during the spacing is handled where every attempt begins.
      return false;
    }
    state.phase = 'ended';
    const change = planned ?? finalChange(outcome);
    await moveTo(
      change.status,
      change.statusCode as StatusCode,
      change.fields,
      change.endedAttempt,
      change.at,
      outputsLost,
    );
    return true;
  }

  /**
   * Waits until the call is due, or a delete arrives. A batch paused or resumed meanwhile shows in the
   * call's status code at once (`paused`, then `scheduled` again), not only once the call falls due.
   */
  async function waitUntilScheduled(dueAt: number): Promise<void> {
    for (;;) {
      // A pause may have come before this first ran (an Update starts a call held until due).
      const shown = paused;
      await waitingBecause(shown ? STATUS_CODES.paused : STATUS_CODES.scheduled);
      const woken = await condition(() => deleteRequested || paused !== shown, dueAt - Date.now(), {
        summary: `scheduled for ${input.scheduledFor}`,
      });
      if (!woken || deleteRequested) return;
    }
  }

  /**
   * Waits out a redial's spacing, or until a delete arrives. A pause taken meanwhile (or while the
   * attempt rang) shows in the call's status code at once (`paused`, `waiting-to-redial` again on
   * resume), not only once the spacing ends; the spacing runs on either way.
   */
  async function waitOutRedialSpacing(redialAt: number, summary: string): Promise<void> {
    for (;;) {
      const shown = paused;
      await waitingBecause(shown ? STATUS_CODES.paused : STATUS_CODES.waitingToRedial);
      const left = redialAt - Date.now();
      if (left <= 0) return;
      const woken = await condition(() => deleteRequested || paused !== shown, left, { summary });
      if (!woken || deleteRequested) return;
    }
  }

  /** Ends a call that waited and is not to be dialled: deleted meanwhile, or its hours never open. */
  async function endWithoutDial(why: 'deleted' | 'never'): Promise<true> {
    if (why === 'deleted') {
      await deleteWhileQueued();
      return true;
    }
    state.phase = 'ended';
    await moveTo('failed', STATUS_CODES.outsideCallingHours, { callEndedAt: new Date().toISOString() });
    return true;
  }

  /**
   * Removes the queued call and tells its webhooks. Since `deleteOutlivesCancel` an operator's cancel
   * arriving meanwhile waits for both (it stopped waiting for the removal, wrote `cancelled` on a record
   * being removed, and `phoneCall.deleted` was never sent).
   */
  async function deleteWhileQueued(): Promise<CallWorkflowState> {
    return input.deleteOutlivesCancel ? CancellationScope.nonCancellable(removeQueued) : removeQueued();
  }

  async function removeQueued(): Promise<CallWorkflowState> {
    state.phase = 'deleting';
    const at = new Date().toISOString();
    // Not a local activity, though that would answer a file's cancel a quarter sooner: a local activity
    // runs before the update's acceptance is stored, and when that workflow task fails (a signal
    // arriving as it completes the workflow is enough: UnhandledCommand), the record is gone but the
    // delete never happened, and the call goes on to a dial that finds no record. Tried 2026-11-27;
    // the race in phone-calls.test.ts caught it.
    const answer = await step(RECORD_OPTIONS, 'delete the queued call').deleteCallRecord({ callId: input.callId });
    // Histories from before the answer carried the call's own endpoints hold the call alone.
    const removed =
      answer && 'deletedCall' in answer ? answer : answer && { deletedCall: answer, ownTargets: undefined };
    state.phase = 'deleted';
    upsertMemo({ summary: `deleted while queued · ${input.toPhoneNumber}` });
    // The Web UI's `CallStatus` says so too: before, it stayed `queued` for ever, and a filter on
    // queued calls listed every deleted one (histories from before replay without it).
    if (patched('deleted-call-status-attribute')) upsertSearchAttributes([{ key: SA_STATUS, value: 'deleted' }]);
    deleted = { deleted: true, call: removed?.deletedCall ?? null };
    // The call's own endpoints come with the answer: the record that named them is gone.
    if (removed) await streams.emit('phoneCall.deleted', removed.deletedCall, at, removed.ownTargets);
    return state;
  }

  /** Says why the queued call waits, once per reason (no status change, so no event). */
  async function waitingBecause(statusCode: StatusCode, options: { recorded?: boolean } = {}): Promise<void> {
    if (state.statusCode === statusCode) return;
    state.statusCode = statusCode;
    upsertMemo({ summary: `queued (${statusCode}) · ${input.toPhoneNumber} via ${input.provider}` });
    if (!options.recorded)
      await step(RECORD_OPTIONS, `record why it waits: ${statusCode}`).recordQueuedStatusCode({
        callId: input.callId,
        statusCode,
        at: new Date().toISOString(),
        ...namedAttempt(state.attempt),
      });
  }

  async function releaseSlot(): Promise<void> {
    slotRequested = false;
    slotGranted = false;
    // A local activity signals from the client: a signal command would be a server-side task that
    // also writes to the pacer's history, which takes writes one at a time (see the pacer's grants).
    if (input.slotsByLocalActivity || patched('release-slot-by-activity')) {
      await localStep('give the dial slot back').releaseDialSlot({ teamId: input.teamId, callId: input.callId });
      return;
    }
    try {
      await getExternalWorkflowHandle(pacerWorkflowId(input.teamId)).signal(releaseDialSlotSignal, {
        callId: input.callId,
      });
    } catch (err) {
      // The pacer ended (it does when idle): it holds nothing of this call any more.
      log.info('pacer not running; nothing to release', { error: String(err) });
    }
  }

  /**
   * Waits while the batch is paused, outside the calling hours, or without a dial slot. Calling hours
   * are checked again once the slot is there, as the wait for it may have outlasted them.
   */
  async function waitUntilDialAllowed(): Promise<'ready' | 'deleted' | 'never'> {
    for (;;) {
      /** When the calling hours found open close. */
      let closesAt: number | null = null;
      if (paused) {
        if (slotRequested) await releaseSlot();
        await waitingBecause(STATUS_CODES.paused);
        await condition(() => !paused || deleteRequested);
      }
      if (deleteRequested) return 'deleted';
      if (input.callingWindow) {
        const check = await localStep('check the calling hours').checkCallingHours({
          window: input.callingWindow,
          timeZones: input.calleeTimeZones ?? [],
          at: new Date().toISOString(),
        });
        if (check.open) closesAt = dialBefore = check.closesAt;
        else {
          if (check.opensAt === null) return 'never';
          if (slotRequested) await releaseSlot();
          await waitingBecause(STATUS_CODES.waitingForCallingWindow);
          await condition(() => deleteRequested || paused, check.opensAt - Date.now(), {
            summary: `calling hours open at ${new Date(check.opensAt).toISOString()}`,
          });
          continue;
        }
        // A delete or pause may have arrived while the hours were checked: the loop's top handles both.
        if (deleteRequested || paused) continue;
        if (slotGranted) return 'ready';
      }
      if (!input.paced) return 'ready';
      if (!slotGranted) {
        if (!slotRequested) slotTicket += 1;
        slotRequested = true;
        // One activity both queues the call at the pacer and records why it waits.
        const recordWhy = state.statusCode !== STATUS_CODES.waitingForSlot;
        await waitingBecause(STATUS_CODES.waitingForSlot, { recorded: true });
        // A local activity: no round trip through the task queue between the timer and the request,
        // which counts when thousands of calls fall due at once. Histories from before ran it as an
        // activity, and replay it so (behind the patch when the input predates `slotsByLocalActivity`).
        const ask =
          input.slotsByLocalActivity || patched('local-slot-request')
            ? localStep('ask the team pacer for a dial slot')
            : step(RECORD_OPTIONS, 'ask the team pacer for a dial slot');
        await ask.requestDialSlot({
          teamId: input.teamId,
          request: { callId: input.callId, provider: input.provider, ticket: slotTicket },
          statusCodeAt: recordWhy ? new Date().toISOString() : undefined,
          ...namedAttempt(state.attempt),
        });
        // Since `slotWaitEndsAtClose` the wait ends when the hours close: the loop's top then finds them
        // closed and gives the place back, so that the call takes no dial turn it could not use.
        const untilClose =
          input.slotWaitEndsAtClose && closesAt !== null ? Math.max(closesAt - Date.now(), 1) : Infinity;
        await condition(
          () => slotGranted || deleteRequested || paused,
          untilClose < SLOT_REQUEST_REPEAT_MS ? untilClose : SLOT_REQUEST_REPEAT,
          { summary: 'waiting for a dial slot' },
        );
        // A delete or pause that arrived with the grant wins: the call must not dial after either.
        if (deleteRequested || paused || !slotGranted) continue;
        if (input.callingWindow) continue; // check the hours again with the slot in hand
      }
      return 'ready';
    }
  }

  /**
   * A provider's 429 is its account's dial rate, not a failure of the call: wait as long as it says
   * (a named timer, with a little jitter so refused calls do not return together) and dial again.
   * A 429 says the call was not placed, so the next dial needs no lookup first (a retried attempt
   * before it already made one). The team's own dial rate, kept by the dial itself, refuses alike.
   */
  async function dialThroughRateLimits(
    triggeredAt: string,
  ): Promise<(Dialled & { ringingAt: string; before: ReadonlyMap<string, unknown> }) | 'deleted' | 'never'> {
    /** Set once a later try was refused: an earlier one may have placed the call since this time. */
    let lookFirstSince: string | undefined;
    /** Set once the call stayed dialling after a refusal at the close to look again (once a dial). */
    let lookedAgainAtClose = false;
    /** Set once the calling hours closed on a dial and opened again: its placing window starts then. */
    let placingWindowFrom: string | undefined;
    /** The provider's own refusals of this dial (the team's dial rate's aside). */
    let providerRefusals = 0;
    for (let refusals = 0; ; refusals++) {
      // Fixed here, before the activity: its retries write the same change, and know it as theirs.
      const ringingAt = new Date().toISOString();
      const before = streams.snapshot();
      const route = streams.writeRoute(statusEventName('ringing'), ringingAt);
      try {
        const what = `dial ${input.toPhoneNumber} via ${input.provider}`;
        // Named for the timeline with all it does: the dial stands where `record ringing` stood.
        const dialled = await step(DIAL_OPTIONS, input.ringingWithDial ? `${what}, record ringing` : what).dialCall({
          callId: input.callId,
          machineDetection: input.machineDetection,
          ...(input.ringTimeoutAtProvider ? { ringTimeoutSeconds } : {}),
          // Fields of the activity's input only: histories replay with or without them.
          timeLimitSeconds:
            input.maxDurationSeconds + PROVIDER_TIME_LIMIT_MARGIN_SECONDS + (input.statusPollSeconds ?? 0),
          ...(dialBefore !== null ? { placeBefore: new Date(dialBefore).toISOString() } : {}),
          // Histories from before the field wrote `ringing` with an activity of its own, and replay so.
          ...(input.ringingWithDial
            ? {
                ringing: {
                  at: ringingAt,
                  callTriggeredAt: triggeredAt,
                  ...namedAttempt(state.attempt),
                  ...(route ? { route } : {}),
                },
              }
            : {}),
          // The provider request itself waits for its turn on the account (src/calls/dial-spacer.ts).
          ...(input.paced ? { paced: true } : {}),
          ...(lookFirstSince ? { placedSince: lookFirstSince } : {}),
          ...(placingWindowFrom ? { placingWindowFrom } : {}),
        });
        return { ...dialled, ringingAt, before };
      } catch (err) {
        const closed = hoursClosedAtDial(err);
        if (closed) {
          log.info('the calling hours closed before the dial could place the call', closed);
          // Refused on a later try, an earlier one may have placed the call unseen: it stays dialling
          // (no delete or pause taken while it may ring; a cancel hangs up what it finds), and the
          // next dial looks for that call first. Refused again on its first try, nothing was placed.
          // So too a dial looking back for such a call (after a later try's 429) refused on its first
          // try: its lookup came a second after the 429, maybe before the provider listed the call.
          // Each looks again once, 30 s later; refused then, the call waits for its hours.
          const looksAgain = closed.firstTry
            ? lookFirstSince !== undefined && !lookedAgainAtClose && patched('hours-closed-looking-dial-looks-again')
            : patched('hours-closed-later-try-looks-again');
          if (looksAgain) {
            lookFirstSince ??= triggeredAt;
            lookedAgainAtClose = true;
            await sleep(HOURS_CLOSED_LOOK_AGAIN_MS, {
              summary: closed.firstTry
                ? 'calling hours closed on a dial looking back: look again for a call placed unseen'
                : 'calling hours closed on a later dial try: look again for a call placed unseen',
            });
            continue;
          }
          // The call waits for its hours as a queued one does: its slot goes back, and a delete, pause
          // or batch cancel is taken. Refused on a later try, an earlier one may have placed the call
          // unseen (the refused try's lookup found none): the next dial looks for it first. Such a call
          // would long have rung out by the time the hours open again.
          if (!closed.firstTry) lookFirstSince ??= triggeredAt;
          if (redialsCancelled) deleteRequested = true;
          state.phase = 'waiting';
          const ready = await waitUntilDialAllowed();
          if (ready !== 'ready') return ready;
          state.phase = 'dialling';
          triggeredAt = new Date().toISOString();
          state.triggeredAt = triggeredAt;
          // Its placing window counts from this dial, not from the one the lookup goes back to.
          placingWindowFrom = triggeredAt;
          continue;
        }
        const limited = rateLimitDelay(err);
        if (limited === undefined) throw err;
        const { retryAfterMs, byTeam, firstTry } = limited;
        if (!byTeam) providerRefusals += 1;
        const backOffMs =
          !byTeam && providerRefusals > PROVIDER_REFUSALS_AT_FULL_PACE && patched('provider-refusals-back-off')
            ? Math.min(PROVIDER_REFUSAL_WAIT_MAX_MS, 1_000 * 2 ** (providerRefusals - PROVIDER_REFUSALS_AT_FULL_PACE))
            : 0;
        const baseMs = Math.max(retryAfterMs, backOffMs);
        const waitMs = baseMs + Math.floor(Math.random() * Math.min(baseMs, 1_000));
        log.info(
          byTeam
            ? "the team's dial rate for the account has no turn for the dial yet"
            : 'the provider refused the dial for its rate limit',
          { retryAfterMs, refusals: refusals + 1 },
        );
        const whose = byTeam ? `team's ${input.provider} dial rate` : 'provider rate limit';
        const summary = `${whose}: dial again in ${Math.ceil(waitMs / 1000)} s`;
        // After a later try's refusal an earlier try may have placed the call unseen: the call stays
        // dialling (no delete or pause taken) and the next dial looks for that call first.
        if (!input.rateLimitWaitsAsQueued || !firstTry || lookFirstSince) {
          if (input.rateLimitWaitsAsQueued) lookFirstSince ??= triggeredAt;
          await sleep(waitMs, { summary });
          continue;
        }
        // Nothing was placed: the call waits as a queued one does. A delete or a pause is taken, and
        // the hours are checked again before the next dial (the wait may outlast them). A cancel of its
        // batch that came while it was dialled deletes it now, as it would have then.
        if (redialsCancelled && patched('rate-limit-wait-takes-batch-cancel')) deleteRequested = true;
        state.phase = 'waiting';
        await condition(() => deleteRequested || paused, waitMs, { summary });
        const ready = await waitUntilDialAllowed();
        if (ready !== 'ready') return ready;
        state.phase = 'dialling';
        triggeredAt = new Date().toISOString();
        state.triggeredAt = triggeredAt;
        // A dial anew, with nothing to look back for: its window is its own.
        placingWindowFrom = undefined;
      }
    }
  }

  /**
   * Asks the provider to end the call. If it cannot (it no longer knows the call, or stays down
   * through every retry), the call is still ended on our side: no call stays live forever. Answers the
   * provider call id hung up (histories from before the answer: undefined), or null.
   */
  async function hangUp(dialledSince: string | null = null): Promise<string | null | undefined> {
    try {
      return await step(HANG_UP_OPTIONS, `hang up ${input.toPhoneNumber}`).hangUpCall({
        callId: input.callId,
        providerCallId: state.providerCallId ?? undefined,
        ...(dialledSince ? { dialledSince } : {}),
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('the provider could not hang up the call; ending it here', { error: String(err) });
      return null;
    }
  }
}

/**
 * The wait a provider asked for with a 429, or the team's own dial rate set (`byTeam`); undefined
 * when the dial failed otherwise.
 */
function rateLimitDelay(err: unknown): { retryAfterMs: number; byTeam: boolean; firstTry: boolean } | undefined {
  const cause = (err as { cause?: unknown }).cause;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const byTeam = cause.type === FAILURES.accountDialRateReached;
  if (!byTeam && cause.type !== FAILURES.providerRateLimited) return undefined;
  const asked = Number(cause.details?.[0]);
  // Refused on the dial's first try: nothing was placed. A later try's own lookup found nothing, but
  // a provider's search may lag behind a call an earlier try placed. (Refusals recorded before the
  // try's number was given count as first tries, as they were then taken.)
  const attempt = cause.details?.[1];
  const firstTry = attempt === undefined || Number(attempt) === 1;
  return { retryAfterMs: Number.isFinite(asked) && asked > 0 ? asked : 1_000, byTeam, firstTry };
}

/**
 * A dial whose tries could not tell whether the call was placed: past the placing window, or out of
 * its time (timed out, or its last failure left no time for another try).
 */
function dialOutcomeUnknown(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.cause instanceof TimeoutFailure || err.retryState === 'TIMEOUT') return true;
  return err.cause instanceof ApplicationFailure && err.cause.type === FAILURES.dialWindowPassed;
}

/** A dial refused because the calling hours had closed, on its first try or a later one; undefined otherwise. */
function hoursClosedAtDial(err: unknown): { firstTry: boolean } | undefined {
  const cause = (err as { cause?: unknown }).cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== FAILURES.callingHoursClosed) return undefined;
  return { firstTry: Number(cause.details?.[0] ?? 1) === 1 };
}

/** A call's length from answer to end (ISO times), as `callDuration` holds it. */
function secondsBetween(from: string, to: string): number {
  return (Date.parse(to) - Date.parse(from)) / 1000;
}

/** A failed activity the server did not retry because its cancel had been asked. */
function cutShortByCancel(err: unknown): boolean {
  return err instanceof ActivityFailure && err.retryState === 'CANCEL_REQUESTED';
}

function rejectionCode(err: unknown): StatusCode {
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof ApplicationFailure && cause.type === FAILURES.providerNotConfigured)
    return STATUS_CODES.providerNotConfigured;
  if (cause instanceof ApplicationFailure && cause.type === FAILURES.doNotCall) return STATUS_CODES.doNotCall;
  if (cause instanceof ApplicationFailure && cause.type === FAILURES.providerRejected) {
    const code = cause.details?.[0];
    return code === STATUS_CODES.invalidNumber ? STATUS_CODES.invalidNumber : STATUS_CODES.providerError;
  }
  return STATUS_CODES.providerError;
}

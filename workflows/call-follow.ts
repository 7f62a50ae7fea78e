// A dialled call followed to its end: the provider's events (its callbacks, as signals, or what a poll
// of a silent call finds), the answer, a machine's verdict and the voicemail message, and our own
// deadlines (ring timeout, maximum duration), which hang up rather than leave a call live for ever.
// Deterministic code only: it runs inside the call's workflow.
import { condition, isCancellation, log, patched } from '@temporalio/workflow';
import { STATUS_CODES, type CallStatus, type StatusCode } from '../src/contracts/call-status';
import { isMachine } from '../src/contracts/machine-detection';
import type { ProviderEvent } from '../src/contracts/providers';
import { POLL_OPTIONS, VOICEMAIL_OPTIONS, step } from './call-steps';
import type { CallWorkflowInput, CallWorkflowState } from './types';

/** How an attempt came out. */
export interface AttemptOutcome {
  status: CallStatus;
  code: StatusCode;
}

/** What following a call needs of its workflow. */
export interface FollowedCall {
  input: CallWorkflowInput;
  state: CallWorkflowState;
  /** The provider's events not yet taken, in arrival order (the workflow's signal handler adds to it). */
  inbox: ProviderEvent[];
  ringTimeoutSeconds: number;
  /** Records the answer (the call's move to `inProgress`). */
  recordAnswered(at: string): Promise<void>;
  /** Asks the provider to end the call; never throws but for a cancellation. */
  hangUp(): Promise<unknown>;
}

/**
 * With the ring timeout at the provider (`ringTimeoutAtProvider`), the provider ends an unanswered
 * call at the timeout and says so; the workflow hangs up this much later only if it has not.
 */
const RING_TIMEOUT_GRACE_SECONDS = 10;
/** A machine whose greeting's end is never reported gets the message this long after it was detected. */
const GREETING_END_TIMEOUT_MS = 60_000;

export async function followCall(call: FollowedCall): Promise<AttemptOutcome> {
  const { input, state, inbox, ringTimeoutSeconds, hangUp } = call;
  const ringDeadline =
    Date.now() + (ringTimeoutSeconds + (input.ringTimeoutAtProvider ? RING_TIMEOUT_GRACE_SECONDS : 0)) * 1000;
  let answerDeadline = 0;
  /** Set while a detected machine's greeting plays and a message is to be left after it. */
  let greetingDeadline: number | null = null;
  let messageLeft = false;

  async function answer(at: string): Promise<void> {
    if (state.answeredAt) return;
    state.answeredAt = at;
    answerDeadline = Date.now() + input.maxDurationSeconds * 1000;
    state.phase = 'inProgress';
    await call.recordAnswered(at);
  }

  /** Hangs up on a machine, or a machine has hung up: it is the attempt's outcome. */
  function answeredOnlyByMachine(): AttemptOutcome {
    return messageLeft
      ? { status: 'completed', code: STATUS_CODES.voicemailLeft }
      : { status: 'noAnswer', code: STATUS_CODES.answeringMachine };
  }

  /** How an answered call that has just ended comes out. */
  function endedAfterAnswer(): AttemptOutcome {
    return isMachine(state.answeredBy) && input.machineDetection
      ? answeredOnlyByMachine()
      : { status: 'completed', code: STATUS_CODES.completed };
  }

  async function leaveMessage(): Promise<void> {
    greetingDeadline = null;
    messageLeft = true;
    try {
      await step(VOICEMAIL_OPTIONS, 'leave the voicemail message').leaveVoicemail({
        callId: input.callId,
        providerCallId: state.providerCallId!,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      // The machine may have hung up meanwhile; its end (or our deadline) still ends the call.
      messageLeft = false;
      log.warn('the voicemail message could not be left', { error: String(err) });
    }
  }

  /**
   * The provider's events for the call as it stands, when they tell something new: its callbacks
   * may have been lost (our API, database or Temporal was down while the provider sent them).
   */
  async function pollProvider(): Promise<ProviderEvent[]> {
    try {
      const events = await step(POLL_OPTIONS, `ask the provider how ${input.toPhoneNumber} stands`).pollCallEvents({
        callId: input.callId,
        providerCallId: state.providerCallId!,
      });
      return events.filter((e) => e.kind !== 'answered' || !state.answeredAt);
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('the provider could not say how the call stands', { error: String(err) });
      return [];
    }
  }

  const pollEveryMs = (input.statusPollSeconds ?? 0) * 1000;
  let lastHeardAt = Date.now();
  for (;;) {
    // A greeting's wait ends by the maximum duration too: a template's limit below a minute is kept.
    // Histories from before waited the greeting's minute out.
    const greetingBounded = greetingDeadline !== null && patched('greeting-wait-bounded-by-max-duration');
    const deadline = !state.answeredAt
      ? ringDeadline
      : greetingDeadline !== null
        ? greetingBounded
          ? Math.min(greetingDeadline, answerDeadline)
          : greetingDeadline
        : answerDeadline;
    // Histories from before polling have no statusPollSeconds and so no poll timer: they replay.
    const pollAt = pollEveryMs > 0 ? lastHeardAt + pollEveryMs : Infinity;
    const arrived = await condition(() => inbox.length > 0, Math.max(Math.min(deadline, pollAt) - Date.now(), 1), {
      summary: !state.answeredAt
        ? `ring timeout at ${new Date(ringDeadline).toISOString()}`
        : greetingDeadline !== null
          ? "a machine's greeting: leave the message by " + new Date(greetingDeadline).toISOString()
          : `max duration at ${new Date(answerDeadline).toISOString()}`,
    });
    if (!arrived && pollEveryMs > 0) {
      // Quiet for a while, or out of time: the provider may have ended (or answered) the call already.
      lastHeardAt = Date.now();
      const news = await pollProvider();
      if (news.length > 0) {
        inbox.push(...news);
        continue;
      }
      if (Date.now() < deadline) continue;
      // Callbacks that came while the poll ran (it may take tens of seconds) say how the call stands:
      // not hung up on as if nothing came. Histories from before replay the hang-up they made.
      if (inbox.length > 0 && patched('deadline-poll-keeps-callbacks')) continue;
    }
    if (!arrived) {
      if (greetingDeadline !== null && !(greetingBounded && Date.now() >= answerDeadline)) {
        // The provider never said the greeting was over: leave the message now rather than never.
        await leaveMessage();
        continue;
      }
      // Nothing ended the call in time: hang up ourselves so that no call stays live forever (a
      // machine's greeting outlasting the maximum duration too: no message, `failed` as decisions.md
      // has an answered call that runs past it).
      await hangUp();
      state.endedAt = new Date().toISOString();
      return state.answeredAt
        ? { status: 'failed', code: STATUS_CODES.maxDuration }
        : { status: 'noAnswer', code: STATUS_CODES.noAnswer };
    }
    const event = inbox.shift()!;
    lastHeardAt = Date.now();
    // Provider clocks can be coarser than ours (Twilio stamps whole seconds): keep the call's
    // times in the order they happened.
    const at = latest(event.occurredAt, state.answeredAt ?? state.triggeredAt!);
    if (event.providerCallId !== state.providerCallId) {
      log.warn('event for another provider call ignored', { providerCallId: event.providerCallId });
      continue;
    }
    switch (event.kind) {
      case 'ringing':
        break; // already ringing since the dial was accepted
      case 'answered':
        await answer(at);
        break;
      case 'machine-detected':
        // A verdict means an answer, even if the answered callback is lost or still on its way.
        await answer(at);
        state.answeredBy = event.answeredBy ?? 'unknown';
        if (!input.machineDetection || !isMachine(state.answeredBy)) break;
        if (input.machineDetection === 'hangUp' || state.answeredBy === 'fax') {
          await hangUp();
          state.endedAt = new Date().toISOString();
          return answeredOnlyByMachine();
        }
        if (!messageLeft) greetingDeadline = Date.now() + GREETING_END_TIMEOUT_MS;
        break;
      case 'greeting-ended':
        await answer(at);
        state.answeredBy = 'machine';
        if (input.machineDetection === 'leaveMessage' && !messageLeft) await leaveMessage();
        // Only a machine's greeting ends (Vonage's asynchronous detection reports it in `hangUp` mode
        // too): hung up on, should its verdict have been lost or still be on its way.
        if (input.machineDetection === 'hangUp' && input.hangsUpOnGreetingEnd) {
          await hangUp();
          state.endedAt = new Date().toISOString();
          return answeredOnlyByMachine();
        }
        break;
      case 'message-left':
        // The provider spoke the message and leaves the hang-up to us. Left, even if every try of the
        // request that asked for it failed (its answers lost): the provider says so. Histories from
        // before replay the outcome they recorded.
        if (!messageLeft && patched('message-left-counts-as-left')) messageLeft = true;
        await hangUp();
        state.endedAt = new Date().toISOString();
        return answeredOnlyByMachine();
      case 'completed':
        // A completed call was answered even if that callback was lost or is still on its way: then
        // from when the provider's ending says it was (its length and transcript times kept), else at
        // the end.
        await answer(answerTimeOf(event.answeredAt, at, state.triggeredAt!));
        state.endedAt = at;
        return endedAfterAnswer();
      case 'busy':
        state.endedAt = at;
        return state.answeredAt ? endedAfterAnswer() : { status: 'busy', code: STATUS_CODES.busy };
      case 'declined':
        state.endedAt = at;
        return state.answeredAt ? endedAfterAnswer() : { status: 'busy', code: STATUS_CODES.declined };
      case 'no-answer':
        state.endedAt = at;
        return state.answeredAt ? endedAfterAnswer() : { status: 'noAnswer', code: STATUS_CODES.noAnswer };
      case 'failed':
        state.endedAt = at;
        return { status: 'failed', code: STATUS_CODES.providerError };
    }
  }
}

/**
 * The answer time an ending gives, when it has one by the end (not before the dial: a provider's clock
 * is coarser than ours, and may run behind it); else `end`.
 */
function answerTimeOf(answeredAt: string | undefined, end: string, dialledAt: string): string {
  const ms = answeredAt === undefined ? NaN : Date.parse(answeredAt);
  if (Number.isNaN(ms) || ms > Date.parse(end)) return end;
  return new Date(Math.max(ms, Date.parse(dialledAt))).toISOString();
}

function latest(a: string, b: string): string {
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

// One emulated call's life on a scaled clock: dialling, ringing, answer, the planned
// conversation, hang-up. Provider modules observe the phases and turn them into their own
// callbacks; this module knows nothing of any provider's wire format.
import { renderConversationWav, type SpeechOptions } from '../audio';
import type { ProviderName } from '../contracts/providers';
import {
  speakingSeconds,
  type CallPlan,
  type MachineDetectionResult,
  type PlannedDetection,
  type PlannedGreetingEnd,
  type PlannedUtterance,
} from './scenarios';

export type EmulatedCallState = 'queued' | 'ringing' | 'answered' | 'ended';
export type CallEndOutcome = 'completed' | 'busy' | 'declined' | 'no-answer' | 'failed' | 'canceled';
export type CallEnder = 'callee' | 'caller' | 'network' | 'time-limit';

export interface SpokenUtterance {
  speaker: 'agent' | 'human';
  text: string;
  /** Seconds from answer on the emulated clock. */
  offsetSeconds: number;
  /** Wall-clock time it was said. */
  at: Date;
}

export interface CallRecording {
  durationSeconds: number;
  sizeBytes: number;
  startedAt: Date;
  endedAt: Date;
  /** The WAV, rendered when first fetched: a busy emulator keeps text, not hours of audio. */
  wav(): Promise<Buffer>;
}

export interface EmulatedCall {
  readonly provider: ProviderName;
  /** The provider's id for the call (CallSid, uuid, call_control_id). */
  readonly id: string;
  /** The account that placed it (Twilio Account SID, Vonage application, Telnyx API key). */
  readonly account: string;
  readonly to: string;
  readonly from: string;
  readonly record: boolean;
  readonly plan: CallPlan;
  /**
   * How long the provider lets the call last from answer before it ends the call itself: the dial's
   * time limit, else the provider's own. Emulated seconds, like the plan's.
   */
  readonly timeLimitSeconds: number;
  /** The answering-machine detection the dial asked for, in the provider's own words (null: none). */
  readonly machineDetection: string | null;
  /** Where the dial asked for the call's status callbacks (null: nowhere). */
  readonly callbackUrl: string | null;
  readonly createdAt: Date;
  /** When the provider placed it: after the account's dial queue, if any. */
  placedAt?: Date;
  state: EmulatedCallState;
  ringingAt?: Date;
  answeredAt?: Date;
  endedAt?: Date;
  /** `time-limit`: the provider ended it, still connected at its time limit. */
  end?: { outcome: CallEndOutcome; hungUpBy: CallEnder };
  /** Answer to hang-up, in emulated seconds (what a provider bills). */
  talkSeconds?: number;
  /** What the answering-machine detector concluded (with detection only). */
  answeredBy?: MachineDetectionResult;
  spoken: SpokenUtterance[];
  recording?: CallRecording;
}

/**
 * The phases a provider module turns into callbacks: initiated, ringing, answered, then the
 * answered call's events in time order, and ended last.
 */
export interface CallObserver {
  initiated(call: EmulatedCall): void;
  ringing(call: EmulatedCall): void;
  answered(call: EmulatedCall): void;
  spoke(call: EmulatedCall, utterance: SpokenUtterance): void;
  /** The answering-machine detector's verdict (only when the dial asked for detection). */
  machineDetected(call: EmulatedCall, detection: PlannedDetection): void;
  /** A machine's greeting is over: its beep, or the silence after it (with detection only). */
  greetingEnded(call: EmulatedCall, end: PlannedGreetingEnd): void;
  /** What `speakAndThen(…, 'notify')` was given has been said in full. */
  spoken(call: EmulatedCall, utterance: SpokenUtterance): void;
  /** What `speakAndThen(…, 'notify')` was given was cut short: the call ended first (a hang-up, the time limit). */
  spokenCut?(call: EmulatedCall, utterance: SpokenUtterance): void;
  /** The call is over; its recording (if any) can be fetched from now on. */
  ended(call: EmulatedCall): void;
}

/** What the caller does once its words are said: end the call, or tell the observer and wait. */
export type AfterSpeaking = 'hang-up' | 'notify';

export interface EmulatorLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const DIAL_SECONDS = 0.2;
const INITIATED_TO_RINGING_SECONDS = 0.6;
const AGENT_VOICE: SpeechOptions = { voice: 'en-us+f3', pitch: 55 };
/** Telephone audio: what provider recordings are. */
const RECORDING_SAMPLE_RATE = 8000;
const WAV_HEADER_BYTES = 44;
/** Recently fetched recordings kept rendered. */
const RENDER_CACHE_SIZE = 32;
const HUMAN_VOICE: SpeechOptions = { voice: 'en-gb', pitch: 40 };
/** A machine that has heard the caller's message out hangs up this long after it, if the caller does not. */
const MACHINE_HANGUP_AFTER_MESSAGE_SECONDS = 10;

class Aborted extends Error {}

/** Something that happens on an answered call, at its offset from answer on the emulated clock. */
type Step = { atSeconds: number } & (
  | { kind: 'say'; utterance: PlannedUtterance }
  | { kind: 'detect'; detection: PlannedDetection }
  | { kind: 'greeting-end'; end: PlannedGreetingEnd }
  | { kind: 'spoken'; utterance: SpokenUtterance }
  | { kind: 'end'; hungUpBy: 'caller' | 'callee' | 'network' }
);

interface RunningCall {
  observer: CallObserver;
  /** Aborted by the caller's hang-up. */
  hangUp: AbortController;
  /** What is left to happen once answered, in time order; it always ends with an `end` step. */
  steps: Step[];
  /** Aborted when `steps` is replaced, to wake the run from its wait for the old next step. */
  replanned: AbortController;
}

/** The answered call's steps as planned, in time order (ties keep this order: the end comes last). */
function stepsOf(plan: CallPlan): Step[] {
  const steps: Step[] = plan.utterances.map((utterance) => ({
    atSeconds: utterance.startSeconds,
    kind: 'say',
    utterance,
  }));
  if (plan.detection) steps.push({ atSeconds: plan.detection.atSeconds, kind: 'detect', detection: plan.detection });
  if (plan.greetingEnd)
    steps.push({ atSeconds: plan.greetingEnd.atSeconds, kind: 'greeting-end', end: plan.greetingEnd });
  steps.push({ atSeconds: plan.hangupSeconds, kind: 'end', hungUpBy: plan.hungUpBy });
  return steps.sort((a, b) => a.atSeconds - b.atSeconds);
}

/**
 * How long after a recorded call ends its recording is processed before Vonage and Telnyx list it (and
 * send its webhook), as theirs are: the capture that runs at the hang-up must wait for it.
 */
export const RECORDING_PROCESSING_SECONDS = 3;

export class CallSimulator {
  private readonly running = new Map<EmulatedCall, RunningCall>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Work due after calls have ended (`afterCall`), cut short by `stop`. */
  private readonly pendingAfterCalls = new Set<() => void>();
  private readonly rendered = new Map<EmulatedCall, Promise<Buffer>>();
  private stopped = false;

  constructor(
    private readonly speedFactor: number,
    private readonly logger: EmulatorLogger,
  ) {}

  /** Wall-clock milliseconds for an emulated duration. */
  scaledMs(seconds: number): number {
    return Math.max(0, seconds * 1000 * this.speedFactor);
  }

  /** `queuedMs`: wall-clock time the account's dial queue holds the call before placing it. */
  start(call: EmulatedCall, observer: CallObserver, queuedMs = 0): void {
    const running: RunningCall = {
      observer,
      hangUp: new AbortController(),
      steps: stepsOf(call.plan),
      replanned: new AbortController(),
    };
    this.running.set(call, running);
    const run = this.run(call, running, queuedMs)
      .catch((err: unknown) => this.logger.error({ err, callId: call.id }, 'emulated call crashed'))
      .finally(() => {
        this.running.delete(call);
        this.inFlight.delete(run);
      });
    this.inFlight.add(run);
  }

  /** The caller hangs up (the provider's hang-up API). False when the call had already ended. */
  hangUp(call: EmulatedCall): boolean {
    const running = this.running.get(call);
    if (!running || call.state === 'ended') return false;
    running.hangUp.abort();
    return true;
  }

  /**
   * The caller says `text` now (a message for a machine), over whatever the callee had left to
   * say and instead of the planned hang-up; the detector's events still come as planned. Once it
   * is said, `hang-up` ends the call; `notify` tells the observer (`spoken`) and leaves the
   * hang-up to the caller, or to the machine 10 s later. False when the call is not answered (or
   * is being hung up).
   */
  speakAndThen(call: EmulatedCall, text: string, then: AfterSpeaking): boolean {
    const running = this.running.get(call);
    if (!running || call.state !== 'answered' || running.hangUp.signal.aborted) return false;
    const now = Math.round(this.elapsedSinceAnswer(call) * 100) / 100;
    const durationSeconds = speakingSeconds(text);
    const spoken = this.say(call, running.observer, { speaker: 'agent', text, startSeconds: now, durationSeconds });
    const saidAt = now + durationSeconds;
    // The detector still listens: its verdict and the greeting's end come as planned.
    const detector = running.steps.filter((step) => step.kind === 'detect' || step.kind === 'greeting-end');
    const after: Step[] =
      then === 'hang-up'
        ? [{ atSeconds: saidAt, kind: 'end', hungUpBy: 'caller' }]
        : [
            { atSeconds: saidAt, kind: 'spoken', utterance: spoken },
            { atSeconds: saidAt + MACHINE_HANGUP_AFTER_MESSAGE_SECONDS, kind: 'end', hungUpBy: 'callee' },
          ];
    this.replan(running, [...detector, ...after]);
    return true;
  }

  /**
   * Runs `work` an emulated `seconds` from now: what a provider does after a call, such as
   * processing its recording. `idle` waits for it; `stop` drops it.
   */
  afterCall(seconds: number, work: () => void): void {
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.pendingAfterCalls.delete(cancel);
        try {
          if (!this.stopped) work();
        } finally {
          resolve();
        }
      }, this.scaledMs(seconds));
      const cancel = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.pendingAfterCalls.add(cancel);
    });
    this.inFlight.add(done);
    void done.then(() => this.inFlight.delete(done));
  }

  /** Resolves once every running call has ended and notified its observer, and `afterCall` work is done. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Ends every simulation without further callbacks (the emulator is shutting down). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const cancel of this.pendingAfterCalls) cancel();
    this.pendingAfterCalls.clear();
    for (const running of this.running.values()) running.hangUp.abort();
    await this.idle();
  }

  private sleep(seconds: number, signal: AbortSignal): Promise<void> {
    return this.wait(this.scaledMs(seconds), signal);
  }

  /** Wall-clock milliseconds, cut short by the signal. */
  private wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new Aborted());
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new Aborted());
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Sleeps until `offsetSeconds` after answer, however late the timers ran so far. */
  private sleepUntil(call: EmulatedCall, offsetSeconds: number, signal: AbortSignal): Promise<void> {
    const answeredMs = call.answeredAt?.getTime() ?? Date.now();
    const remainingMs = answeredMs + this.scaledMs(offsetSeconds) - Date.now();
    return this.sleep(remainingMs / 1000 / this.speedFactor, signal);
  }

  private elapsedSinceAnswer(call: EmulatedCall): number {
    if (!call.answeredAt) return 0;
    return (Date.now() - call.answeredAt.getTime()) / 1000 / this.speedFactor;
  }

  private async run(call: EmulatedCall, running: RunningCall, queuedMs: number): Promise<void> {
    const { plan } = call;
    const { observer } = running;
    const signal = running.hangUp.signal;
    try {
      if (queuedMs > 0) await this.wait(queuedMs, signal);
      call.placedAt = new Date();
      await this.sleep(DIAL_SECONDS, signal);
      observer.initiated(call);
      await this.sleep(INITIATED_TO_RINGING_SECONDS, signal);
      call.state = 'ringing';
      call.ringingAt = new Date();
      observer.ringing(call);
      await this.sleep(plan.ringSeconds, signal);
      if (plan.outcome === 'busy') return this.finish(call, observer, 'busy', 'callee');
      if (plan.outcome === 'declined') return this.finish(call, observer, 'declined', 'callee');
      if (plan.outcome === 'no-answer') return this.finish(call, observer, 'no-answer', 'network');

      call.state = 'answered';
      call.answeredAt = new Date();
      observer.answered(call);
      await this.converse(call, running);
    } catch (err) {
      if (!(err instanceof Aborted)) throw err;
      if (this.stopped) return;
      call.talkSeconds = call.answeredAt ? Math.round(this.elapsedSinceAnswer(call) * 100) / 100 : undefined;
      this.finish(call, observer, call.answeredAt ? 'completed' : 'canceled', 'caller');
    }
  }

  /**
   * The answered call: each step at its time, until an `end` step, the caller's hang-up, or the
   * provider's time limit, whichever comes first.
   */
  private async converse(call: EmulatedCall, running: RunningCall): Promise<void> {
    const { observer } = running;
    for (;;) {
      const step = running.steps[0];
      const limited = step.atSeconds > call.timeLimitSeconds;
      try {
        await this.sleepUntil(
          call,
          limited ? call.timeLimitSeconds : step.atSeconds,
          AbortSignal.any([running.hangUp.signal, running.replanned.signal]),
        );
      } catch (err) {
        // Replanned while waiting: wait for the new next step instead.
        if (err instanceof Aborted && !running.hangUp.signal.aborted) continue;
        throw err;
      }
      if (limited) {
        call.talkSeconds = call.timeLimitSeconds;
        return this.finish(call, observer, 'completed', 'time-limit');
      }
      running.steps.shift();
      switch (step.kind) {
        case 'say':
          this.say(call, observer, step.utterance);
          break;
        case 'detect':
          call.answeredBy = step.detection.result;
          observer.machineDetected(call, step.detection);
          break;
        case 'greeting-end':
          observer.greetingEnded(call, step.end);
          break;
        case 'spoken':
          observer.spoken(call, step.utterance);
          break;
        case 'end':
          call.talkSeconds = step.atSeconds;
          if (step.hungUpBy === 'network') return this.finish(call, observer, 'failed', 'network');
          return this.finish(call, observer, 'completed', step.hungUpBy);
      }
    }
  }

  /** Replaces what is left of the answered call with `steps` (ending with an `end`). */
  private replan(running: RunningCall, steps: Step[]): void {
    const previous = running.replanned;
    running.steps = steps.sort((a, b) => a.atSeconds - b.atSeconds);
    running.replanned = new AbortController();
    previous.abort();
  }

  private say(call: EmulatedCall, observer: CallObserver, planned: PlannedUtterance): SpokenUtterance {
    const spoken: SpokenUtterance = {
      speaker: planned.speaker,
      text: planned.text,
      offsetSeconds: planned.startSeconds,
      at: new Date(),
    };
    call.spoken.push(spoken);
    observer.spoke(call, spoken);
    return spoken;
  }

  private finish(call: EmulatedCall, observer: CallObserver, outcome: CallEndOutcome, hungUpBy: CallEnder): void {
    // Speech still to be said in full when the call ends was cut short: told before the end.
    const cut = this.running.get(call)?.steps.find((step) => step.kind === 'spoken');
    if (cut?.kind === 'spoken' && !this.stopped) observer.spokenCut?.(call, cut.utterance);
    call.state = 'ended';
    call.endedAt = new Date();
    call.end = { outcome, hungUpBy };
    if (call.record && call.answeredAt) call.recording = this.recordingOf(call);
    if (!this.stopped) observer.ended(call);
  }

  private recordingOf(call: EmulatedCall): CallRecording {
    // Exactly the talk time: the renderer pads with silence or cuts at the hang-up.
    const durationSeconds = Math.max(call.talkSeconds ?? 0, 0.5);
    const samples = Math.round(durationSeconds * RECORDING_SAMPLE_RATE);
    return {
      durationSeconds: samples / RECORDING_SAMPLE_RATE,
      sizeBytes: WAV_HEADER_BYTES + samples * 2,
      startedAt: call.answeredAt ?? call.createdAt,
      endedAt: call.endedAt ?? new Date(),
      wav: () => this.render(call, durationSeconds),
    };
  }

  private render(call: EmulatedCall, durationSeconds: number): Promise<Buffer> {
    let wav = this.rendered.get(call);
    if (wav) {
      this.rendered.delete(call);
    } else {
      wav = renderConversationWav(
        call.spoken.map((u) => ({
          text: u.text,
          startSeconds: u.offsetSeconds,
          speech: u.speaker === 'agent' ? AGENT_VOICE : HUMAN_VOICE,
        })),
        { sampleRate: RECORDING_SAMPLE_RATE, minDurationSeconds: durationSeconds, maxDurationSeconds: durationSeconds },
      );
      wav.catch(() => this.rendered.delete(call));
    }
    this.rendered.set(call, wav);
    const oldest = this.rendered.keys().next().value;
    if (this.rendered.size > RENDER_CACHE_SIZE && oldest !== undefined) this.rendered.delete(oldest);
    return wav;
  }
}

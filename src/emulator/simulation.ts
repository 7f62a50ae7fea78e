// One emulated call's life on a scaled clock: dialling, ringing, answer, the planned
// conversation, hang-up. Provider modules observe the phases and turn them into their own
// callbacks; this module knows nothing of any provider's wire format.
import { renderConversationWav, type SpeechOptions } from '../audio';
import type { ProviderName } from '../contracts/providers';
import type { CallPlan, PlannedUtterance } from './scenarios';

export type EmulatedCallState = 'queued' | 'ringing' | 'answered' | 'ended';
export type CallEndOutcome = 'completed' | 'busy' | 'declined' | 'no-answer' | 'failed' | 'canceled';

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
  readonly createdAt: Date;
  /** When the provider placed it: after the account's dial queue, if any. */
  placedAt?: Date;
  state: EmulatedCallState;
  ringingAt?: Date;
  answeredAt?: Date;
  endedAt?: Date;
  end?: { outcome: CallEndOutcome; hungUpBy: 'callee' | 'caller' | 'network' };
  /** Answer to hang-up, in emulated seconds (what a provider bills). */
  talkSeconds?: number;
  spoken: SpokenUtterance[];
  recording?: CallRecording;
}

/** The phases a provider module turns into callbacks, always in this order. */
export interface CallObserver {
  initiated(call: EmulatedCall): void;
  ringing(call: EmulatedCall): void;
  answered(call: EmulatedCall): void;
  spoke(call: EmulatedCall, utterance: SpokenUtterance): void;
  /** The call is over; its recording (if any) can be fetched from now on. */
  ended(call: EmulatedCall): void;
}

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

class Aborted extends Error {}

export class CallSimulator {
  private readonly running = new Map<EmulatedCall, AbortController>();
  private readonly inFlight = new Set<Promise<void>>();
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
    const controller = new AbortController();
    this.running.set(call, controller);
    const run = this.run(call, observer, controller.signal, queuedMs)
      .catch((err: unknown) => this.logger.error({ err, callId: call.id }, 'emulated call crashed'))
      .finally(() => {
        this.running.delete(call);
        this.inFlight.delete(run);
      });
    this.inFlight.add(run);
  }

  /** The caller hangs up (the provider's hang-up API). False when the call had already ended. */
  hangUp(call: EmulatedCall): boolean {
    const controller = this.running.get(call);
    if (!controller || call.state === 'ended') return false;
    controller.abort();
    return true;
  }

  /** Resolves once every running call has ended and notified its observer. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Ends every simulation without further callbacks (the emulator is shutting down). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const controller of this.running.values()) controller.abort();
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

  private async run(call: EmulatedCall, observer: CallObserver, signal: AbortSignal, queuedMs: number): Promise<void> {
    const { plan } = call;
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
      for (const utterance of plan.utterances) {
        await this.sleepUntil(call, utterance.startSeconds, signal);
        this.say(call, observer, utterance);
      }
      await this.sleepUntil(call, plan.hangupSeconds, signal);
      call.talkSeconds = plan.hangupSeconds;
      if (plan.outcome === 'drop-after-answer') return this.finish(call, observer, 'failed', 'network');
      const lastSpeaker = plan.utterances[plan.utterances.length - 1]?.speaker;
      return this.finish(call, observer, 'completed', lastSpeaker === 'agent' ? 'caller' : 'callee');
    } catch (err) {
      if (!(err instanceof Aborted)) throw err;
      if (this.stopped) return;
      call.talkSeconds = call.answeredAt ? Math.round(this.elapsedSinceAnswer(call) * 100) / 100 : undefined;
      this.finish(call, observer, call.answeredAt ? 'completed' : 'canceled', 'caller');
    }
  }

  private say(call: EmulatedCall, observer: CallObserver, planned: PlannedUtterance): void {
    const spoken: SpokenUtterance = {
      speaker: planned.speaker,
      text: planned.text,
      offsetSeconds: planned.startSeconds,
      at: new Date(),
    };
    call.spoken.push(spoken);
    observer.spoke(call, spoken);
  }

  private finish(
    call: EmulatedCall,
    observer: CallObserver,
    outcome: CallEndOutcome,
    hungUpBy: 'callee' | 'caller' | 'network',
  ): void {
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

// Callbacks to the service, as a provider sends them: one call's callbacks strictly in order,
// each signed afresh per attempt and retried a few times when the receiver fails. Injected faults
// hold a callback back (out of the order: later ones overtake it) or send it twice.
import type { CallbackFault } from './faults';
import type { EmulatorLogger } from './simulation';

export interface OutboundCallback {
  /** For logs: the event this callback reports. */
  event: string;
  url: string;
  method?: 'POST';
  /** Built per attempt: signatures and timestamps are fresh on every retry. */
  build(attempt: number): { headers: Record<string, string>; body: string };
  /** Told of every attempt (Twilio's Call Events keep them). */
  onAttempt?(attempt: { url: string; body: string; status: number | null; durationMs: number }): void;
}

export interface DeliveryOptions {
  /** Retries after the first attempt. */
  retries: number;
  /** Wall-clock delay before retry n (1-based). */
  retryDelayMs(retry: number): number;
  logger: EmulatorLogger;
  /** Aborted once the emulator is stopping: queued and held callbacks are dropped, waits cut short. */
  stopped: AbortSignal;
  /** The fault injected into each callback as it is pushed (none when absent). */
  faultFor?(callback: OutboundCallback): CallbackFault;
}

const ATTEMPT_TIMEOUT_MS = 10_000;
const NO_FAULT: CallbackFault = { lost: false, delayMs: null, duplicate: false };

/** Waits `ms`, or less if `signal` aborts first (never rejects). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export class CallbackQueue {
  private tail: Promise<void> = Promise.resolve();
  /** Callbacks held back out of the order; drained() still waits for them. */
  private readonly held = new Set<Promise<void>>();

  constructor(private readonly options: DeliveryOptions) {}

  push(callback: OutboundCallback): void {
    const { lost, delayMs, duplicate } = this.options.faultFor?.(callback) ?? NO_FAULT;
    if (lost) {
      this.options.logger.info({ event: callback.event, url: callback.url }, 'callback fault: never sent');
      return;
    }
    const send = (): Promise<void> => this.send(callback, duplicate);
    if (delayMs === null) {
      this.tail = this.tail.then(send);
      return;
    }
    const late: Promise<void> = pause(delayMs, this.options.stopped)
      .then(send)
      .catch((err: unknown) => this.options.logger.error({ event: callback.event, err }, 'held callback failed'))
      .finally(() => this.held.delete(late));
    this.held.add(late);
  }

  /** Resolves when everything pushed so far, held callbacks included, has been delivered or given up on. */
  async drained(): Promise<void> {
    for (;;) {
      const tail = this.tail;
      await Promise.all([tail, ...this.held]);
      if (tail === this.tail && this.held.size === 0) return;
    }
  }

  /** Delivers the callback; a duplicate is built and sent again once the first was accepted. */
  private async send(callback: OutboundCallback, duplicate: boolean): Promise<void> {
    const accepted = await this.deliver(callback);
    if (accepted && duplicate) await this.deliver(callback);
  }

  /** True when the receiver accepted it (2xx). */
  private async deliver(callback: OutboundCallback): Promise<boolean> {
    const { retries, retryDelayMs, logger, stopped } = this.options;
    for (let attempt = 1; attempt <= retries + 1; attempt += 1) {
      if (attempt > 1) await pause(retryDelayMs(attempt - 1), stopped);
      if (stopped.aborted) return false;
      const { headers, body } = callback.build(attempt);
      const started = Date.now();
      let status: number | null = null;
      try {
        const res = await fetch(callback.url, {
          method: callback.method ?? 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.any([AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), stopped]),
        });
        status = res.status;
        await res.arrayBuffer();
      } catch (err) {
        logger.warn({ event: callback.event, url: callback.url, attempt, err: String(err) }, 'callback attempt failed');
      }
      callback.onAttempt?.({ url: callback.url, body, status, durationMs: Date.now() - started });
      if (status !== null && status >= 200 && status < 300) return true;
      if (status !== null) {
        logger.warn({ event: callback.event, url: callback.url, attempt, status }, 'callback refused by receiver');
      }
    }
    logger.error({ event: callback.event, url: callback.url }, 'callback given up after retries');
    return false;
  }
}

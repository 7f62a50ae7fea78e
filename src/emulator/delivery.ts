// Callbacks to the service, as a provider sends them: one call's callbacks strictly in order,
// each signed afresh per attempt and retried a few times when the receiver fails.
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
  /** True once the emulator is stopping: queued callbacks are dropped. */
  isStopped(): boolean;
}

const ATTEMPT_TIMEOUT_MS = 10_000;

export class CallbackQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly options: DeliveryOptions) {}

  push(callback: OutboundCallback): void {
    this.tail = this.tail.then(() => this.deliver(callback));
  }

  /** Resolves when everything pushed so far has been delivered or given up on. */
  drained(): Promise<void> {
    return this.tail;
  }

  private async deliver(callback: OutboundCallback): Promise<void> {
    const { retries, retryDelayMs, logger, isStopped } = this.options;
    for (let attempt = 1; attempt <= retries + 1; attempt += 1) {
      if (isStopped()) return;
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt - 1)));
      const { headers, body } = callback.build(attempt);
      const started = Date.now();
      let status: number | null = null;
      try {
        const res = await fetch(callback.url, {
          method: callback.method ?? 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        });
        status = res.status;
        await res.arrayBuffer();
      } catch (err) {
        logger.warn({ event: callback.event, url: callback.url, attempt, err: String(err) }, 'callback attempt failed');
      }
      callback.onAttempt?.({ url: callback.url, body, status, durationMs: Date.now() - started });
      if (status !== null && status >= 200 && status < 300) return;
      if (status !== null) {
        logger.warn({ event: callback.event, url: callback.url, attempt, status }, 'callback refused by receiver');
      }
    }
    logger.error({ event: callback.event, url: callback.url }, 'callback given up after retries');
  }
}

// Runs reconcilePendingCalls periodically in the worker process.
import type { Logger } from '../logger';
import { reconcilePendingCalls, type Dispatcher } from './dispatch';

export function startReconciler(deps: { dispatcher: Dispatcher; logger: Logger; afterSeconds: number }): () => void {
  const everyMs = Math.min(30_000, Math.max(2_000, (deps.afterSeconds * 1000) / 4));
  let running = false;
  const timer = setInterval(() => {
    if (running) return; // a slow pass is never overlapped by the next one
    running = true;
    reconcilePendingCalls({ dispatcher: deps.dispatcher, logger: deps.logger, olderThanMs: deps.afterSeconds * 1000 })
      .catch((err: unknown) => deps.logger.error({ err }, 'reconciler pass failed'))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  return () => clearInterval(timer);
}

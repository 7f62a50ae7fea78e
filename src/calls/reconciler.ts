// Runs reconcilePendingCalls periodically in the worker process, and once an hour (and at the first
// pass) the sweeps of started batches no retry will ask for and of old provider call sightings.
import { sweepProviderCallSightings } from '../data/models/provider-call-sighting';
import type { Logger } from '../logger';
import { reconcilePendingCalls, sweepStartedBatches, type Dispatcher } from './dispatch';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

export function startReconciler(deps: { dispatcher: Dispatcher; logger: Logger; afterSeconds: number }): () => void {
  const everyMs = Math.min(30_000, Math.max(2_000, (deps.afterSeconds * 1000) / 4));
  let running = false;
  let sweptAt = 0;
  const sweep = async () => {
    if (Date.now() - sweptAt < SWEEP_EVERY_MS) return;
    const removed = await sweepStartedBatches();
    const sightings = await sweepProviderCallSightings();
    sweptAt = Date.now();
    if (removed) deps.logger.info({ removed }, 'reconciler removed started dispatch batches past the retry window');
    if (sightings)
      deps.logger.info({ removed: sightings }, "reconciler removed provider call sightings past a dial's retries");
  };
  const timer = setInterval(() => {
    if (running) return; // a slow pass is never overlapped by the next one
    running = true;
    reconcilePendingCalls({ dispatcher: deps.dispatcher, logger: deps.logger, olderThanMs: deps.afterSeconds * 1000 })
      .then(sweep)
      .catch((err: unknown) => deps.logger.error({ err }, 'reconciler pass failed'))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  return () => clearInterval(timer);
}

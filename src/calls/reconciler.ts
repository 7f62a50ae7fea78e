// Runs reconcilePendingCalls periodically in the worker process, and once an hour (and at the first
// pass) the sweeps of started batches no retry will ask for, of old provider call sightings, of old
// notes of deleted calls, of Idempotency-Key records past their window and of old list blocks (the
// last again at every pass while it has more left than one pass takes).
import { sweepListBlocks } from '../data/call-list-block-sweep';
import { sweepBatchCallDeletions } from '../data/models/batch-call-deletion';
import { sweepIdempotencyRecords } from '../data/models/idempotency-record';
import { sweepProviderCallSightings } from '../data/models/provider-call-sighting';
import type { Logger } from '../logger';
import { reconcilePendingCalls, sweepStartedBatches, type Dispatcher } from './dispatch';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

export function startReconciler(deps: {
  dispatcher: Dispatcher;
  logger: Logger;
  afterSeconds: number;
}): () => Promise<void> {
  const everyMs = Math.min(30_000, Math.max(2_000, (deps.afterSeconds * 1000) / 4));
  let pass: Promise<void> | null = null;
  let sweptAt = 0;
  let listBlocksLeft = false;
  const sweep = async () => {
    if (Date.now() - sweptAt >= SWEEP_EVERY_MS) {
      const removed = await sweepStartedBatches();
      const sightings = await sweepProviderCallSightings();
      const deletions = await sweepBatchCallDeletions();
      const keys = await sweepIdempotencyRecords();
      sweptAt = Date.now();
      listBlocksLeft = true;
      if (removed) deps.logger.info({ removed }, 'reconciler removed started dispatch batches past the retry window');
      if (sightings)
        deps.logger.info({ removed: sightings }, "reconciler removed provider call sightings past a dial's retries");
      if (deletions)
        deps.logger.info({ removed: deletions }, 'reconciler removed notes of deleted calls no batch counts any more');
      if (keys) deps.logger.info({ removed: keys }, 'reconciler removed Idempotency-Key records past their window');
    }
    if (!listBlocksLeft) return;
    const blocks = await sweepListBlocks();
    listBlocksLeft = blocks.more;
    if (blocks.removed)
      deps.logger.info({ removed: blocks.removed, more: blocks.more }, 'reconciler removed list blocks no list reads');
  };
  const timer = setInterval(() => {
    if (pass) return; // a slow pass is never overlapped by the next one
    pass = reconcilePendingCalls({
      dispatcher: deps.dispatcher,
      logger: deps.logger,
      olderThanMs: deps.afterSeconds * 1000,
    })
      .then(sweep)
      .catch((err: unknown) => deps.logger.error({ err }, 'reconciler pass failed'))
      .finally(() => {
        pass = null;
      });
  }, everyMs);
  // Stops the passes, and resolves once a pass under way has ended (before its connections close).
  return async () => {
    clearInterval(timer);
    await pass;
  };
}

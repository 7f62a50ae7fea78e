// Pause, resume or cancel every queued call of a batch (by its id) or of a file (by `fileId`, across
// the batches that gave it). Each call's workflow decides for itself (queued-call-control.ts), so a
// call that has begun dialling goes on. Used by the API (routes/phone-call-batches.ts) and the CLI.
import type { z } from 'zod';
import { PhoneCall, type PhoneCallDoc } from '../data/models/phone-call';
import type { batchControlResultSchema } from '../schemas/responses';
import type { QueuedCallControl } from './queued-call-control';
import { mapBounded } from '../concurrency/run-bounded';

export const BATCH_ACTIONS = ['pause', 'resume', 'cancel'] as const;
export type BatchAction = (typeof BATCH_ACTIONS)[number];
export type BatchSelector = { batchId: string } | { fileId: string };

/** The counts, as the API answers them (each field is described in the schema). */
export type BatchControlResult = z.output<typeof batchControlResultSchema>;

/** The counts, or null when the team has no call in that batch or file. */
export async function controlBatch(
  deps: { control: QueuedCallControl; concurrency: number },
  teamId: string,
  selector: BatchSelector,
  action: BatchAction,
): Promise<BatchControlResult | null> {
  const filter =
    'batchId' in selector ? { teamId, dispatchBatchId: selector.batchId } : { teamId, fileId: selector.fileId };
  const docs = await PhoneCall.find(filter).lean<PhoneCallDoc[]>();
  if (docs.length === 0) return null;
  const queued = docs.filter((doc) => doc.status === 'queued');
  const outcomes = await mapBounded(queued, deps.concurrency, async (doc) => {
    if (action === 'cancel')
      return (await deps.control.deleteQueued(doc)).outcome === 'deleted' ? 'changed' : 'not-queued';
    return (await deps.control.setPaused(doc, action === 'pause')).outcome;
  });
  const count = (outcome: string) => outcomes.filter((o) => o === outcome).length;
  return {
    action,
    ...selector,
    calls: docs.length,
    changed: count('changed'),
    unchanged: count('unchanged'),
    notQueued: docs.length - queued.length + count('not-queued'),
  };
}

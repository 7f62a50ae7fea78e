// Pause, resume or cancel every call of a batch (by its id) or of a file (by `fileId`, across the
// batches that gave it) that has not ended. Each call's workflow decides for itself
// (queued-call-control.ts): a queued call is paused or deleted, one that has begun dialling goes on,
// and its redial policy dials it again only once resumed, never once cancelled. Used by the API
// (routes/phone-call-batches.ts) and the CLI.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { z } from 'zod';
import type { BatchAction } from '../contracts/batches';
import { isTerminal, type CallStatus } from '../contracts/call-status';
import { fileControlled, setFileState, type FileState } from '../data/models/file-control';
import { PhoneCall, type PhoneCallDoc } from '../data/models/phone-call';
import type { batchControlResultSchema } from '../schemas/responses';
import type { QueuedCallControl } from './queued-call-control';
import { mapBounded } from '../concurrency/run-bounded';

const FILE_STATE_OF: Record<BatchAction, FileState> = { pause: 'paused', resume: 'resumed', cancel: 'cancelled' };
export type BatchSelector = { batchId: string } | { fileId: string };

/** The counts, as the API answers them (each field is described in the schema). */
export type BatchControlResult = z.output<typeof batchControlResultSchema>;

/**
 * Tells a call the control. One read as dialling is only told for a redial it may make: a worker
 * older than the updates that reach it refuses them, and the control goes on without it.
 */
async function reachDialling<T>(doc: PhoneCallDoc, tell: () => Promise<T>): Promise<T | { outcome: 'not-queued' }> {
  try {
    return await tell();
  } catch (err) {
    if (doc.status === 'queued' || !(err instanceof WorkflowUpdateFailedError)) throw err;
    return { outcome: 'not-queued' };
  }
}

/** The counts, or null when the team has no call in that batch or file. */
export async function controlBatch(
  deps: { control: QueuedCallControl; concurrency: number },
  teamId: string,
  selector: BatchSelector,
  action: BatchAction,
): Promise<BatchControlResult | null> {
  const filter =
    'batchId' in selector ? { teamId, dispatchBatchId: selector.batchId } : { teamId, fileId: selector.fileId };
  if ('fileId' in selector) {
    // Kept before the calls are read: a chunk of the file written after this reads it and starts its
    // calls paused, or is refused once cancelled (routes/phone-calls.ts); one written before is read
    // below. A file with no call is unknown (404, as always), but to a resume that lifts a control
    // kept with it: every call of a cancelled file is gone, and its next chunks wait for that resume.
    const hasCalls = (await PhoneCall.exists({ teamId, fileId: selector.fileId })) !== null;
    if (!hasCalls && (action !== 'resume' || !(await fileControlled(teamId, selector.fileId)))) return null;
    await setFileState(teamId, selector.fileId, FILE_STATE_OF[action]);
  }
  const docs = await PhoneCall.find(filter).lean<PhoneCallDoc[]>();
  if (docs.length === 0 && 'batchId' in selector) return null;
  // Calls being dialled are told too: their current attempt goes on (counted `notQueued`), but a redial
  // their policy may make waits while the batch is paused, and never comes once it is cancelled.
  const live = docs.filter((doc) => !isTerminal(doc.status as CallStatus));
  const outcomes = await mapBounded(live, deps.concurrency, async (doc) => {
    if (action !== 'cancel') {
      const paused = await reachDialling(doc, () => deps.control.setPaused(doc, action === 'pause'));
      if (paused.outcome === 'not-queued') return 'not-queued';
      // Counted as the call was when it took the pause, not as it was read.
      return (paused.queued ?? doc.status === 'queued') ? paused.outcome : 'not-queued';
    }
    // A queued call is deleted as DELETE deletes it (gone once the answer comes); one that began
    // dialling meanwhile, or was already, is kept from being dialled again.
    if (doc.status === 'queued' && (await deps.control.deleteQueued(doc)).outcome === 'deleted') return 'changed';
    return (await reachDialling(doc, () => deps.control.cancel(doc))).outcome === 'deleted' ? 'changed' : 'not-queued';
  });
  const count = (outcome: string) => outcomes.filter((o) => o === outcome).length;
  return {
    action,
    ...selector,
    calls: docs.length,
    changed: count('changed'),
    unchanged: count('unchanged'),
    notQueued: docs.length - live.length + count('not-queued'),
  };
}

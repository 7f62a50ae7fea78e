// Deleting, pausing and resuming a queued call: the call's workflow decides (a delete it accepts only
// before dialling begins), so a call is never both rung and deleted, nor dialled while paused. Used
// by DELETE /v1/phoneCalls/{id} and by the batch controls (pause, resume, cancel).
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import { FAILURES } from '../contracts/failures';
import { callWorkflowId } from '../contracts/ids';
import type { PhoneCallDoc } from '../data/models/phone-call';
import { cancelCallUpdate, deleteQueuedCallUpdate, setPausedUpdate } from '../../workflows/messages';
import { rememberedValues } from '../data/remembered-values';
import { batchStartOf, dialPlanFor, type BatchStart, type Dispatcher } from './dispatch';

export type DeleteResult = { outcome: 'deleted'; call: Record<string, unknown> | null } | NotQueued;
/** `queued`: whether the call was waiting when it took the pause (absent from workers before the field). */
export type PauseResult = { outcome: 'changed' | 'unchanged'; queued?: boolean } | NotQueued;
export type CancelResult = { outcome: 'deleted' | 'no-redial' } | NotQueued;
type NotQueued = { outcome: 'not-queued'; message: string };

const CREATE_NOT_FINISHED =
  'the request that created the call did not finish: the call is not dialled unless that request is retried';
const CREATE_UNDER_WAY = 'the request creating the call is still writing its batch: try again in a moment';

export interface QueuedCallControl {
  deleteQueued(doc: PhoneCallDoc): Promise<DeleteResult>;
  /** Pauses or resumes a call that has not ended: a queued one waits, one being dialled is not redialled meanwhile. */
  setPaused(doc: PhoneCallDoc, paused: boolean): Promise<PauseResult>;
  /** A batch's cancel: deletes a queued call, or keeps one being dialled from being dialled again. */
  cancel(doc: PhoneCallDoc): Promise<CancelResult>;
}

export function createQueuedCallControl(deps: { client: Client; dispatcher: Dispatcher }): QueuedCallControl {
  const handleOf = (doc: PhoneCallDoc) => deps.client.workflow.getHandle(callWorkflowId(doc._id.toHexString()));
  // A control of a whole batch asks about once per batch, not once per call: the calls it works on
  // at once share one read.
  const batchStarts = rememberedValues<Promise<BatchStart>>({ trustedMs: 2_000, maxEntries: 1_000 });
  const batchStartOfCall = (doc: PhoneCallDoc): Promise<BatchStart> => {
    const key = doc.dispatchBatchId.toHexString();
    const known = batchStarts.get(key);
    if (known) return known;
    const asked = batchStartOf(doc.dispatchBatchId);
    batchStarts.set(key, asked);
    asked.catch(() => {
      if (batchStarts.get(key) === asked) batchStarts.forget(key);
    });
    return asked;
  };

  /**
   * Runs an update on the call's workflow. One whose batch is still to start it (dispatch.ts: the
   * create under way, or died with every call written, for the reconciler) is started with the update,
   * which it takes in its first task: a call due now is not dialled before a pause or delete that
   * reached it queued.
   */
  async function onWorkflow<Ret, Args extends unknown[]>(
    doc: PhoneCallDoc,
    run: () => Promise<Ret>,
    update: UpdateDefinition<Ret, Args>,
    args: Args,
  ): Promise<Ret | NotQueued> {
    try {
      try {
        return await run();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        // Only a call still queued is started: a record that says otherwise whose workflow is gone
        // (ended past the namespace's retention) must never be dialled again.
        if (doc.status !== 'queued') throw err;
        const batch = await batchStartOfCall(doc);
        // Its workflow was started (since the first try, or it ended past retention, or was
        // terminated): never started again, which would dial it.
        if (batch === 'started') return await run();
        // Not all of its batch was written: the batch is discarded, and a retry of its request writes
        // every call again; started now, this one would be rung twice. Or its request is writing it
        // still, and starts it once written.
        if (batch === 'cut-short') return { outcome: 'not-queued', message: CREATE_NOT_FINISHED };
        if (batch === 'writing') return { outcome: 'not-queued', message: CREATE_UNDER_WAY };
        return await deps.dispatcher.updateWithStart(doc, await dialPlanFor(doc.callTemplateId), update, args);
      }
    } catch (err) {
      if (
        err instanceof WorkflowUpdateFailedError &&
        err.cause instanceof ApplicationFailure &&
        err.cause.type === FAILURES.callNotQueued
      ) {
        return { outcome: 'not-queued', message: err.cause.message };
      }
      // Not found, or found ended when started with the update (its id is never used again).
      if (err instanceof WorkflowNotFoundError || err instanceof WorkflowExecutionAlreadyStartedError)
        return { outcome: 'not-queued', message: 'the call has ended' };
      throw err;
    }
  }

  return {
    async deleteQueued(doc) {
      const remove = () => handleOf(doc).executeUpdate(deleteQueuedCallUpdate);
      const result = await onWorkflow(doc, remove, deleteQueuedCallUpdate, []);
      return 'outcome' in result ? result : { outcome: 'deleted', call: result.call };
    },
    async setPaused(doc, paused) {
      const set = () => handleOf(doc).executeUpdate(setPausedUpdate, { args: [paused] });
      const result = await onWorkflow(doc, set, setPausedUpdate, [paused]);
      if ('outcome' in result) return result;
      return { outcome: result.changed ? 'changed' : 'unchanged', queued: result.queued };
    },
    async cancel(doc) {
      const cancel = () => handleOf(doc).executeUpdate(cancelCallUpdate);
      const result = await onWorkflow(doc, cancel, cancelCallUpdate, []);
      return 'outcome' in result ? result : { outcome: result.deleted ? 'deleted' : 'no-redial' };
    },
  };
}

// Deleting, pausing and resuming a queued call: the call's workflow decides (a delete it accepts only
// before dialling begins), so a call is never both rung and deleted, nor dialled while paused. Used
// by DELETE /v1/phoneCalls/{id} and by the batch controls (pause, resume, cancel).
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES } from '../contracts/failures';
import { callWorkflowId } from '../contracts/ids';
import type { PhoneCallDoc } from '../data/models/phone-call';
import { cancelCallUpdate, deleteQueuedCallUpdate, setPausedUpdate } from '../../workflows/messages';
import { dialPlanFor, type Dispatcher } from './dispatch';

export type DeleteResult = { outcome: 'deleted'; call: Record<string, unknown> | null } | NotQueued;
/** `queued`: whether the call was waiting when it took the pause (absent from workers before the field). */
export type PauseResult = { outcome: 'changed' | 'unchanged'; queued?: boolean } | NotQueued;
export type CancelResult = { outcome: 'deleted' | 'no-redial' } | NotQueued;
type NotQueued = { outcome: 'not-queued'; message: string };

export interface QueuedCallControl {
  deleteQueued(doc: PhoneCallDoc): Promise<DeleteResult>;
  /** Pauses or resumes a call that has not ended: a queued one waits, one being dialled is not redialled meanwhile. */
  setPaused(doc: PhoneCallDoc, paused: boolean): Promise<PauseResult>;
  /** A batch's cancel: deletes a queued call, or keeps one being dialled from being dialled again. */
  cancel(doc: PhoneCallDoc): Promise<CancelResult>;
}

export function createQueuedCallControl(deps: { client: Client; dispatcher: Dispatcher }): QueuedCallControl {
  /** Runs an update on the call's workflow; starts a workflow its batch has not started yet (dispatch.ts). */
  async function onWorkflow<T>(doc: PhoneCallDoc, run: () => Promise<T>): Promise<T | NotQueued> {
    try {
      try {
        return await run();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        // Starting is idempotent (an ended workflow is never started again), so the update then
        // either reaches the new workflow or finds the ended one.
        // Started as it was, unpaused: the update that follows pauses or deletes it (and counts it).
        await deps.dispatcher.start(doc, await dialPlanFor(doc.callTemplateId), undefined, { fileState: 'resumed' });
        return await run();
      }
    } catch (err) {
      if (
        err instanceof WorkflowUpdateFailedError &&
        err.cause instanceof ApplicationFailure &&
        err.cause.type === FAILURES.callNotQueued
      ) {
        return { outcome: 'not-queued', message: err.cause.message };
      }
      if (err instanceof WorkflowNotFoundError) return { outcome: 'not-queued', message: 'the call has ended' };
      throw err;
    }
  }

  const handleOf = (doc: PhoneCallDoc) => deps.client.workflow.getHandle(callWorkflowId(doc._id.toHexString()));

  return {
    async deleteQueued(doc) {
      const result = await onWorkflow(doc, () => handleOf(doc).executeUpdate(deleteQueuedCallUpdate));
      return 'outcome' in result ? result : { outcome: 'deleted', call: result.call };
    },
    async setPaused(doc, paused) {
      const result = await onWorkflow(doc, () => handleOf(doc).executeUpdate(setPausedUpdate, { args: [paused] }));
      if ('outcome' in result) return result;
      return { outcome: result.changed ? 'changed' : 'unchanged', queued: result.queued };
    },
    async cancel(doc) {
      const result = await onWorkflow(doc, () => handleOf(doc).executeUpdate(cancelCallUpdate));
      return 'outcome' in result ? result : { outcome: result.deleted ? 'deleted' : 'no-redial' };
    },
  };
}

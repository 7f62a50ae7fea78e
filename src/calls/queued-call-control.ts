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
  /**
   * Runs an update on the call's workflow; starts a workflow its batch has not started yet
   * (dispatch.ts), paused unless `startPaused` is false. `startedPaused`: this control started it so.
   */
  async function onWorkflow<T>(
    doc: PhoneCallDoc,
    startPaused: boolean,
    run: () => Promise<T>,
  ): Promise<{ answer: T; startedPaused: boolean } | NotQueued> {
    try {
      try {
        return { answer: await run(), startedPaused: false };
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        // Starting is idempotent (an ended workflow is never started again), so the update then
        // either reaches the new workflow or finds the ended one. Started paused, a call due now
        // cannot be dialled before the update that follows (its first task may run before the update
        // reaches it): the pause or delete it asks for holds from the start.
        const plan = await dialPlanFor(doc.callTemplateId);
        const started = await deps.dispatcher.start(doc, plan, undefined, { paused: startPaused });
        return { answer: await run(), startedPaused: started && startPaused };
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
      const result = await onWorkflow(doc, true, () => handleOf(doc).executeUpdate(deleteQueuedCallUpdate));
      return 'outcome' in result ? result : { outcome: 'deleted', call: result.answer.call };
    },
    async setPaused(doc, paused) {
      const result = await onWorkflow(doc, paused, () =>
        handleOf(doc).executeUpdate(setPausedUpdate, { args: [paused] }),
      );
      if ('outcome' in result) return result;
      // Started paused by this pause: the pause changed it, though its update found it paused.
      const changed = result.answer.changed || result.startedPaused;
      return { outcome: changed ? 'changed' : 'unchanged', queued: result.answer.queued };
    },
    async cancel(doc) {
      const result = await onWorkflow(doc, true, () => handleOf(doc).executeUpdate(cancelCallUpdate));
      return 'outcome' in result ? result : { outcome: result.answer.deleted ? 'deleted' : 'no-redial' };
    },
  };
}

// Signals, queries and updates: defined once, used by the workflows and by the API's client.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ProviderEvent } from '../src/contracts/providers';
import type { WebhookEvent, CallWorkflowState, DeleteOutcome } from './types';

/** A provider status callback, verified and mapped by the API. */
export const providerEventSignal = defineSignal<[ProviderEvent]>('providerEvent');

/** The call's current state, for the API and the Temporal UI's query tab. */
export const callStateQuery = defineQuery<CallWorkflowState>('callState');

/**
 * Deletes a queued call. Accepted only while the call has not started dialling, so a call is never
 * both deleted and rung; the answer comes once the record is gone.
 */
export const deleteQueuedCallUpdate = defineUpdate<DeleteOutcome>('deleteQueuedCall');

/** A later event of the same call for the same endpoint (delivery workflows queue them). */
export const enqueueEventSignal = defineSignal<[WebhookEvent]>('enqueueEvent');

/** The call's workflow has ended: a delivery workflow may finish once its queue is empty. */
export const noMoreEventsSignal = defineSignal('noMoreEvents');

// Signals, queries and updates: defined once, used by the workflows and by the API's client.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DialSlotRequest, PacingState } from '../src/contracts/pacing';
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

// Pacing (workflows/team-pacer.ts): a call asks its team's pacer for a dial slot, the pacer grants it
// when the team's cap and dial rate allow, and the call gives it back when it ends.

/** To the pacer: queue this call for a slot (sent with signal-with-start by an activity). */
export const requestDialSlotSignal = defineSignal<[DialSlotRequest]>('requestDialSlot');

/** To the pacer: the call ended, or no longer wants its place in the queue. */
export const releaseDialSlotSignal = defineSignal<[{ callId: string }]>('releaseDialSlot');

// The same two, for many calls in one signal: a worker sends the requests (and releases) of its calls
// that arrive while its previous signal to the pacer is under way together, since one workflow's
// history takes its writes one at a time. Each entry is handled as its own signal would be, in order.

/** To the pacer: queue these calls for slots, in this order. */
export const requestDialSlotsSignal = defineSignal<[{ requests: DialSlotRequest[] }]>('requestDialSlots');

/** To the pacer: these calls ended, or no longer want their places in the queue. */
export const releaseDialSlotsSignal = defineSignal<[{ callIds: string[] }]>('releaseDialSlots');

/** The pacer's counters, for the Temporal UI's query tab. */
export const pacingStateQuery = defineQuery<PacingState>('pacingState');

/** To a call: a dial slot is yours. */
export const dialSlotGrantedSignal = defineSignal<[{ ticket: number }]>('dialSlotGranted');

/**
 * Pauses (true) or resumes (false) a call, for its batch. A queued call waits while paused; one being
 * dialled goes on, and waits paused should its redial policy dial it again. Refused once the call has
 * ended; answers whether the call's pause state changed, and whether it was waiting (`queued`; absent
 * from workers before the field).
 */
export const setPausedUpdate = defineUpdate<{ changed: boolean; queued?: boolean }, [boolean]>('setPaused');

/**
 * A cancel of the call's batch: a queued call is deleted (as by deleteQueuedCall, without waiting for
 * it), one being dialled goes on and is never dialled again by its redial policy.
 */
export const cancelCallUpdate = defineUpdate<{ deleted: boolean }>('cancelCall');

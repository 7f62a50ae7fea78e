// Inputs and outputs of workflows and activities: plain data, safe on both sides.
import type { CallStatus, StatusCode } from '../src/contracts/call-status';
import type { CallEventName } from '../src/contracts/events';
import type { ProviderName } from '../src/contracts/providers';
import type { CallingWindow } from '../src/calling-hours/calling-window';
import type { ActiveMachineDetection, AnsweredBy } from '../src/contracts/machine-detection';
import type { RedialPolicy } from '../src/contracts/redial';

export interface CallWorkflowInput {
  callId: string;
  teamId: string;
  toPhoneNumber: string;
  provider: ProviderName;
  record: boolean;
  /** ISO 8601 UTC; null or past means "place at once". */
  scheduledFor: string | null;
  /** Hang up an answered call that never reports an end after this long. */
  maxDurationSeconds: number;
  /** Hang up a dialled call that is not answered (and not ended by the provider) after this long. */
  ringTimeoutSeconds?: number;
  /** Ask the provider how the call stands after this long without a callback; absent: never. */
  statusPollSeconds?: number;
  /** The template's calling hours; absent: any hour (and histories from before the field). */
  callingWindow?: CallingWindow;
  /** Zones the window is checked in (all of them must be open). */
  calleeTimeZones?: string[];
  /** Dial through the team's pacer (absent in histories from before pacing). */
  paced?: boolean;
  /** The template's redial policy; absent: one attempt. */
  redialPolicy?: RedialPolicy;
  /** The template's answering-machine detection; absent: off. */
  machineDetection?: ActiveMachineDetection;
  /**
   * What the call's own `phoneCallWebhooks` subscribe to (fixed at create), so that an event none of
   * them wants needs no read of the call; absent (histories from before the field): read each time.
   */
  ownWebhookEvents?: string[];
  /**
   * True when no endpoint subscribed to `phoneCall.queued` as the call was created (the API read the
   * team's webhooks then): the first queued event is not looked up. Absent (histories from before the
   * field, calls started by the reconciler): looked up as usual.
   */
  queuedEventUnsubscribed?: boolean;
  /**
   * True for calls created since 2026-11-26: the dial activity writes the move to `ringing` itself
   * (activities/dial.ts). Absent (histories from before): a recordStatus activity of its own, as then.
   */
  ringingWithDial?: boolean;
  /**
   * True for calls created since the late morning of 2026-11-26: the dial slot is asked for and given back
   * by local activities, with no `patched()` check (each check wrote a marker and a
   * `TemporalChangeVersion` search-attribute upsert, four history events per call). Absent (histories
   * from before): the patches decide, as they did.
   */
  slotsByLocalActivity?: boolean;
  /**
   * True for calls created since the late morning of 2026-11-26: an answered call's capture writes its
   * final status with the results (activities/capture.ts). Absent (histories from before): a
   * recordStatus activity of its own after the capture, as then.
   */
  finalWithCapture?: boolean;
  /**
   * True for calls created since 2026-11-29: once the call has ended, its capture and final status
   * write run to their end though an operator cancels the workflow meanwhile (the call is over; a
   * `cancelled` write would race the capture's). Absent (histories from before): cancellable, as then.
   */
  captureOutlivesCancel?: boolean;
  /**
   * True for calls created since 2026-11-29 (evening): the capture outlives a cancel that comes while
   * the ended call's dial slot goes back too, just before it (such a call ended `cancelled`, its
   * recording, transcript and results never captured). Absent (histories from before): as then.
   */
  endOutlivesCancel?: boolean;
  /**
   * True for calls created since 2026-11-29 (evening): a delete under way when an operator cancels
   * runs to its end, `phoneCall.deleted` told, and its update is answered. Absent (histories from
   * before): the cancel cut the delete short, as then.
   */
  deleteOutlivesCancel?: boolean;
  /**
   * True for calls created since 2026-11-29 (evening): a call paused while it rang or during its
   * redial spacing shows `paused` during the spacing (it showed `waiting-to-redial` until the spacing
   * ended). Absent (histories from before): as then.
   */
  pauseShownWhileRedialWaits?: boolean;
  /**
   * True for calls created since 2026-11-29 (night): a call waiting for a dial slot stops waiting when
   * its calling hours close, and gives its place back, rather than take its turn at the pacer after
   * they closed (each such grant took a dial turn from calls still in their hours). Absent
   * (histories from before): it waited for the grant, as then.
   */
  slotWaitEndsAtClose?: boolean;
  /**
   * True for calls created since 2026-11-29 (later that day): a status change under way when an
   * operator cancels is written and told to its webhooks before `cancelled` is (its event went only to
   * the streams already running, and was lost for the others). Absent (histories from before): the
   * cancel stops waiting for the write, as then.
   */
  statusWritesOutliveCancel?: boolean;
  /**
   * True for calls created since 2026-11-30: every write of the call's record names its dial attempt,
   * and lands only while the record holds the attempts ended before it (src/data/call-store.ts), so a
   * late write of an ended attempt changes nothing. Needs `statusWritesOutliveCancel`: a cancel that
   * cut a redial's `queued` write short left the workflow unsure which attempts the record holds.
   * Absent (histories from before): the writes name none, as then.
   */
  writesNameAttempt?: boolean;
  /**
   * True for calls created since 2026-11-30: an operator's cancel that came while an attempt to be
   * redialled had its outputs captured ends the call before the redial queues it, the attempt recorded
   * as it ended. Absent (histories from before): the call was queued for its redial (telling
   * `phoneCall.queued`) and then cancelled, as then.
   */
  cancelBeforeRedialQueues?: boolean;
  /**
   * True for calls created since 2026-11-29 (later that day): a dial refused for a rate limit (nothing
   * placed) waits as a queued call, taking a delete or a pause, and checks the calling hours again
   * before it dials. Absent (histories from before): a plain timer, as then.
   */
  rateLimitWaitsAsQueued?: boolean;
  /**
   * The call's file was paused (POST /v1/phoneCalls/file/{fileId}/pause) before this call's chunk of
   * it was written: the call starts paused, as if it had taken the pause, and waits for a resume.
   */
  startsPaused?: boolean;
  /**
   * True for calls created since 2026-11-29 (the afternoon): in `hangUp` mode a machine's greeting
   * reported over (Vonage's asynchronous detection sends it) is hung up on like its verdict, which may
   * have been lost. Absent (histories from before): only the verdict hangs up, as then.
   */
  hangsUpOnGreetingEnd?: boolean;
  /**
   * True for calls created since 2026-11-29 (later that day): a scheduled call paused (or resumed)
   * before it is due says so in its status code at once. Absent (histories from before): only once
   * due, as then.
   */
  pauseShownWhileScheduled?: boolean;
  /**
   * True for calls created since 2026-11-29 (the afternoon): the dial asks the provider itself to give
   * up ringing after `ringTimeoutSeconds` (each provider's default was 30 to 60 s), and the workflow's
   * own hang-up waits RING_TIMEOUT_GRACE_SECONDS longer, a backstop for a provider that never ends it.
   * Absent (histories from before): the provider's default, and the workflow's hang-up at the timeout.
   */
  ringTimeoutAtProvider?: boolean;
  /**
   * True for calls created since the night of 2026-11-26: a delivery stream handed the call's final
   * event ends once it has delivered it, so the call sends it no `noMoreEvents` signal (a signal, and a
   * workflow task on each side, fewer per endpoint). Absent (histories from before): every stream is
   * told at the end, as then.
   */
  streamsEndWithFinalEvent?: boolean;
  /**
   * True for calls created since 2026-11-27: an event for an endpoint whose delivery stream runs is
   * handed to it by the endpoint lookup's local activity, a signal from the client (routeWebhookEvent),
   * not by a signal command (two history events and a workflow task fewer per event and endpoint).
   * Absent (histories from before): the workflow signals its streams itself, as then.
   */
  streamEventsByActivity?: boolean;
  /**
   * True for calls created since the night of 2026-11-28 (with `streamEventsByActivity`): the activity
   * that writes a status change (the dial's `ringing`, recordStatus, the capture's final write) also
   * hands its event, and the capture `transcript.created`, to the endpoints' streams once the write
   * lands: a local activity, and the workflow's activation for it, fewer per event. Absent (histories
   * from before): the endpoint lookup's local activity after each write, as then.
   */
  routeWithWrites?: boolean;
}

export type CallPhase =
  'waiting' | 'deleting' | 'dialling' | 'ringing' | 'inProgress' | 'capturing' | 'ended' | 'deleted';

/** What the `callState` query answers: the call as the workflow sees it now. */
export interface CallWorkflowState {
  callId: string;
  status: CallStatus;
  phase: CallPhase;
  statusCode: StatusCode;
  scheduledFor: string | null;
  providerCallId: string | null;
  triggeredAt: string | null;
  answeredAt: string | null;
  endedAt: string | null;
  providerEventsSeen: number;
  /** The dial attempt under way or last made (1 until a redial). */
  attempt: number;
  /** What answered this attempt, once the provider's machine detection has said. */
  answeredBy: AnsweredBy | null;
}

export interface DeleteOutcome {
  deleted: true;
  /** The call as it was just before removal (read form); null if it was already gone. */
  call: Record<string, unknown> | null;
}

/** One event of one call, handed to a delivery workflow. */
export interface WebhookEvent {
  /** Stable across retries: the Standard Webhooks `webhook-id`. */
  eventId: string;
  type: CallEventName;
  /** ISO 8601 UTC time the event happened. */
  timestamp: string;
  callId: string;
  teamId: string;
  /** The PhoneCall in read form, or the transcript for transcript.created. */
  data: Record<string, unknown>;
}

export interface WebhookTarget {
  /** Stable per endpoint within a call: `wh-<webhookId>` or `call-<index>`. */
  endpointKey: string;
  url: string;
  method: 'GET' | 'POST';
  /** The signing secret, sealed with the service's key (only ciphertext enters workflow history). */
  secretSealed: string;
  webhookId: string | null;
}

export interface DeliveryWorkflowInput {
  callId: string;
  teamId: string;
  target: WebhookTarget;
  firstEvent: WebhookEvent;
  retryDelaysMs: number[];
  /** An operator's redelivery: this one event, its attempts numbered on from this one. */
  redelivery?: { firstAttempt: number };
  /** The stream ends after delivering the call's final event (isFinalCallEvent); absent: at `noMoreEvents`. */
  endsWithFinalEvent?: boolean;
  /**
   * The task queue of its attempts (webhookAttemptTaskQueue); absent (streams started before it): the
   * workflow's own, shared with the calls' activities.
   */
  attemptTaskQueue?: string;
}

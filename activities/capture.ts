// After an answered call ends: copy its recording, store its transcript (one record per utterance,
// in spoken order) and fill the conversation's results; a callee who asked not to be called again
// goes on the team's do-not-call list. Idempotent: a retry rewrites the same data.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { FAILURES } from '../src/contracts/failures';
import { isMachine, type AnsweredBy } from '../src/contracts/machine-detection';
import type { ProviderName } from '../src/contracts/providers';
import type { StatusChange } from '../src/data/call-store';
import type { Utterance } from '../src/telephony/provider';
import { computeCallResults, findCustomTagsHit, type CallResults } from '../src/results';
import { meetingTimeZone } from '../src/results/meeting-time-zone';
import { createStatusWriter, type StatusWritten } from './call-record';
import type { ActivityDeps } from './deps';
import { nonRetryableWhenUnconfigured } from './team-provider';
import { withHeartbeats } from './heartbeats';
import { createEventRouter, type EventRouteAfterWrite, type Routed } from './webhooks';

export interface CaptureInput {
  callId: string;
  providerCallId: string;
  record: boolean;
  answeredAt: string;
  endedAt: string;
  /** Machine detection's verdict (absent in histories from before it, and when detection is off). */
  answeredBy?: AnsweredBy | null;
  /** The dial attempt whose outputs these are (calls since `writesNameAttempt`): a late try's results land on no later one. */
  attempt?: number;
  /**
   * The call's final status change, written with the results in one write (calls created since the
   * late morning of 2026-11-26): a recordStatus activity, its workflow task and a database write fewer
   * per answered call. Absent: the results are written alone, and the workflow records the status.
   */
  final?: Omit<StatusChange, 'results'>;
  /**
   * The events the capture hands on itself (calls since `routeWithWrites`): `transcript.created` once
   * the transcript is stored, then the final status's once its write lands.
   */
  route?: { transcript: EventRouteAfterWrite; final?: EventRouteAfterWrite };
}

export interface Captured {
  transcriptEvent: Record<string, unknown> | null;
  /** Where `transcript.created` went, when the capture handed it on. */
  transcriptRouted?: Routed;
  /** The final write's answer, when `final` was given. */
  final?: StatusWritten;
}

/**
 * How long after a recorded call ends its recording is waited for. Providers have it ready only once
 * processed, seconds after the hang-up that starts the capture: Vonage and Telnyx list it then (their
 * `record` and `call.recording.saved` webhooks come later too), Twilio lists it `processing` until then
 * (RecordingNotReadyError: asked for again on the capture's next attempts too). A call whose recording
 * is still not listed then ends without one.
 */
export const RECORDING_WAIT_MS = 90_000;
const RECORDING_POLL_FIRST_MS = 250;
const RECORDING_POLL_MAX_MS = 5_000;

/**
 * The call's recording, asked for again while it may still be processing, and after a failed request
 * (until RECORDING_WAIT_MS). Still failing then: the error, for Temporal to retry the capture; but on
 * the capture's last attempt, null (`givenUp` told why), so that the transcript, results and opt-out
 * are stored without the recording rather than not at all.
 */
async function recordingOnceProcessed(
  provider: { fetchRecording(providerCallId: string): Promise<Buffer | null> },
  input: Pick<CaptureInput, 'providerCallId' | 'endedAt'>,
  givenUp: (err: unknown) => void,
): Promise<Buffer | null> {
  const deadline = Date.parse(input.endedAt) + RECORDING_WAIT_MS;
  for (let pause = RECORDING_POLL_FIRST_MS; ; pause = Math.min(pause * 2, RECORDING_POLL_MAX_MS)) {
    let audio: Buffer | null = null;
    let failed: { err: unknown } | undefined;
    try {
      audio = await provider.fetchRecording(input.providerCallId);
    } catch (err) {
      failed = { err };
    }
    if (audio) return audio;
    if (Date.now() + pause > deadline) {
      if (!failed) return null;
      if (!isLastAttempt()) throw failed.err;
      givenUp(failed.err);
      return null;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    stillWanted();
  }
}

/**
 * The call's transcript. Failing, the error, for Temporal to retry the capture; but on the capture's
 * last attempt, null (`givenUp` told why), so that the recording is still stored and linked, and the
 * final status written with it, rather than left without a link.
 */
async function transcriptOrNone(
  provider: { fetchTranscript(providerCallId: string): Promise<Utterance[]> },
  providerCallId: string,
  givenUp: (err: unknown) => void,
): Promise<Utterance[] | null> {
  try {
    return await provider.fetchTranscript(providerCallId);
  } catch (err) {
    if (!isLastAttempt()) throw err;
    givenUp(err);
    return null;
  }
}

/**
 * What a call says when nobody's words can be read (no transcript to be had, or a machine answered):
 * nothing, an empty value for each result column (decisions.md: one entry per column).
 */
const noResults = (resultColumns: readonly string[]): CallResults => ({
  resultValues: resultColumns.map((columnName) => ({ columnName, value: '' })),
  customTagsHitOnCall: [],
  fixedMeetingTime: null,
  optedOut: false,
});

/**
 * Throws once the server has given up on this try: its 2-minute start-to-close passed (the worker's
 * SDK tells it then), or its heartbeats stopped reaching the server for 20 s, or the server no longer
 * knows it. It may have hung on the store while the next try wrote the call's outputs, and the
 * attempt after it its own: what this try wrote now would replace theirs. A write already sent is not
 * recalled: this narrows the window to it. Other cancels are not a giving up: one as the worker
 * stops lets the try finish (there is no next try until it ends, and a last try's outputs would be
 * lost), and an operator's cancel of a call from before `captureOutlivesCancel` kept its outputs.
 */
function stillWanted(): void {
  const context = Context.current();
  const given = context.cancellationDetails;
  if (!context.cancellationSignal.aborted || !(given?.timedOut || given?.notFound || given?.reset)) return;
  const reason: unknown = context.cancellationSignal.reason;
  throw reason instanceof Error ? reason : new CancelledFailure('the server gave up on this try');
}

/** Whether this attempt is the last its retry policy allows (unknown or unlimited: never). */
function isLastAttempt(): boolean {
  const { attempt, retryPolicy } = Context.current().info;
  const maximumAttempts = retryPolicy?.maximumAttempts ?? 0;
  return maximumAttempts > 0 && attempt >= maximumAttempts;
}

export function createCaptureActivities(
  deps: Pick<
    ActivityDeps,
    | 'config'
    | 'providers'
    | 'calls'
    | 'templates'
    | 'conversations'
    | 'doNotCall'
    | 'logger'
    | 'metrics'
    | 'webhooks'
    | 'temporal'
  >,
) {
  const { config, calls, templates, conversations, doNotCall } = deps;
  const providerFor = nonRetryableWhenUnconfigured(deps.providers);
  // One router for the final write and for transcript.created.
  const router = createEventRouter(deps);
  const writeStatus = createStatusWriter(deps, router);
  const { routeAfterWrite } = router;
  return {
    // Heartbeats while it runs (the provider's media and transcript may take a while): see CAPTURE_OPTIONS.
    captureCallOutputs: (input: CaptureInput): Promise<Captured> => withHeartbeats(() => capture(input)),
  };

  async function capture(input: CaptureInput): Promise<Captured> {
    const call = await calls.findById(input.callId);
    if (!call) {
      throw ApplicationFailure.create({
        type: FAILURES.callRecordMissing,
        message: `phone call ${input.callId} no longer exists`,
        nonRetryable: true,
      });
    }
    const template = await templates.findById(call.callTemplateId);
    const provider = await providerFor(call.teamId, call.telephonyProvider as ProviderName);

    let recordingUrl: string | undefined;
    if (input.record) {
      const audio = await recordingOnceProcessed(provider, input, (err) =>
        deps.logger.warn(
          { err, callId: input.callId, providerCallId: input.providerCallId },
          "the call's recording could not be fetched: its transcript and results are stored without it",
        ),
      );
      if (audio) {
        stillWanted();
        const token = await conversations.saveRecording(call, audio, 'audio/wav');
        recordingUrl = `${config.PUBLIC_BASE_URL}/recordings/${token}.wav`;
      }
    }

    const spoken = await transcriptOrNone(provider, input.providerCallId, (err) =>
      deps.logger.warn(
        { err, callId: input.callId, providerCallId: input.providerCallId },
        "the call's transcript could not be fetched: its recording is stored without it, and no results",
      ),
    );
    // A machine's greeting is no one's words: only a message the agent left on it is kept.
    const answeredByMachine = isMachine(input.answeredBy);
    const utterances = (spoken ?? []).filter((u) => !answeredByMachine || u.speaker === 'agent');
    const answeredMs = Date.parse(input.answeredAt);
    // Strictly increasing times keep the order the provider gave, which lists are read in (by time),
    // even when two utterances share an offset or a provider's offsets run back (people talking over
    // each other: Twilio orders its sentences by index, not start time).
    let lastMs = -Infinity;
    stillWanted();
    // No transcript to be had: what an earlier try stored stays, and nothing is said of the call (its
    // results would read "did not speak" of a conversation nobody could read).
    const stored =
      spoken === null
        ? []
        : await conversations.replaceTranscript(
            call,
            utterances.map((u) => {
              lastMs = Math.max(lastMs + 1, answeredMs + Math.round(u.offsetSeconds * 1000));
              return { text: u.text, speaker: u.speaker, at: new Date(lastMs) };
            }),
          );
    // A try the server gave up on can still be writing when the call, queued again for its redial, is
    // deleted (the only time a call that was answered can be). The delete removes what it finds; what
    // a write of this try added after it is removed here, so that no recording or transcript of a
    // deleted call stays behind. (Read after the writes: a delete after this read removes them itself.)
    // A capture that writes the final status is never followed by a redial: no read for it.
    const wrote = recordingUrl !== undefined || stored.length > 0;
    if (!input.final && wrote && !(await calls.findById(input.callId))) {
      await conversations.remove(call);
      throw ApplicationFailure.create({
        type: FAILURES.callRecordMissing,
        message: `phone call ${input.callId} was deleted while its outputs were being stored`,
        nonRetryable: true,
      });
    }

    // A machine answered: nobody spoke with the agent, so no result, meeting time or opt-out can come
    // from its own message (before, the columns were filled as for a person who said nothing:
    // `callbackRequested` no, `sentiment` neutral, "did not speak"). Its custom tags do: a tag is hit
    // by a phrase anywhere in the transcript, whoever spoke it (decisions.md), the message left too.
    const results =
      spoken === null
        ? noResults(template?.resultColumns ?? [])
        : answeredByMachine
          ? {
              ...noResults(template?.resultColumns ?? []),
              customTagsHitOnCall: findCustomTagsHit(template?.customTags ?? [], utterances),
            }
          : computeCallResults(
              { customTags: template?.customTags ?? [], resultColumns: template?.resultColumns ?? [] },
              utterances,
              {
                callTime: new Date(input.answeredAt),
                // "Tuesday at 3pm" is the callee's 3pm, not the template's.
                timeZone: await meetingTimeZone({
                  calleeTimeZone: call.calleeTimeZone,
                  toPhoneNumber: call.toPhoneNumber,
                  templateTimeZone: template?.timeZone,
                }),
                nameOfHuman: call.nameOfHuman ?? undefined,
                callDurationSeconds: (Date.parse(input.endedAt) - answeredMs) / 1000,
              },
            );
    stillWanted();
    if (results.optedOut) {
      await doNotCall.add(
        call.teamId.toHexString(),
        [{ phoneNumber: call.toPhoneNumber, reason: 'the callee asked not to be called again' }],
        { source: 'callee', callId: input.callId },
      );
    }
    const outputs = {
      resultValues: results.resultValues,
      customTagsHitOnCall: results.customTagsHitOnCall,
      fixedMeetingTime: results.fixedMeetingTime ? new Date(results.fixedMeetingTime) : null,
      recordingUrl,
    };
    const transcriptEvent =
      stored.length === 0
        ? null
        : { phoneCallId: input.callId, teamId: call.teamId.toHexString(), transcripts: stored };
    // In the order the workflow tells them: the transcript's event before the final status's.
    stillWanted();
    const transcriptRouted =
      input.route && transcriptEvent ? await routeAfterWrite(input.route.transcript, transcriptEvent) : undefined;
    let final: StatusWritten | undefined;
    stillWanted();
    if (input.final) {
      // A transcript event that could not be handed on is routed by the workflow once this returns: the
      // final status's is left to it too, so that no stream gets the final status before the transcript.
      const finalRoute = transcriptEvent && input.route && !transcriptRouted ? undefined : input.route?.final;
      final = await writeStatus({ ...input.final, results: outputs }, finalRoute);
      // Refused (the call ended otherwise meanwhile): the results are still the conversation's.
      if (!final.applied) {
        stillWanted();
        await calls.saveResults(call._id, outputs, { providerCallId: input.providerCallId, attempt: input.attempt });
      }
    } else {
      await calls.saveResults(call._id, outputs, { providerCallId: input.providerCallId, attempt: input.attempt });
    }
    return { transcriptEvent, ...(transcriptRouted ? { transcriptRouted } : {}), ...(final ? { final } : {}) };
  }
}

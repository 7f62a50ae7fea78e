// Dialling and hanging up through the call's provider. A retried dial first looks for the call it may
// have placed (the provider call ids its callbacks named, then the provider's own search), so a person
// is never rung twice for one call; a number on the team's do-not-call list is never rung at all.
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createDialSpacer } from '../src/calls/dial-spacer';
import { fillPrompt, type CallTemplateDoc } from '../src/data/models/call-template';
import type { PhoneCallDoc } from '../src/data/models/phone-call';
import { STATUS_CODES } from '../src/contracts/call-status';
import { FAILURES } from '../src/contracts/failures';
import type { ActiveMachineDetection } from '../src/contracts/machine-detection';
import type { ProviderName } from '../src/contracts/providers';
import { callbackUrlFor } from '../src/telephony/callback-url';
import { REQUEST_TIMEOUT_MS } from '../src/telephony/http';
import {
  ProviderRateLimitedError,
  ProviderRejectedError,
  type PlaceCallRequest,
  type PlacedCall,
  type TelephonyProvider,
} from '../src/telephony/provider';
import { createStatusWriter, type StatusWritten } from './call-record';
import type { ActivityDeps } from './deps';
import { nonRetryableWhenUnconfigured } from './team-provider';
import type { EventRouteAfterWrite } from './webhooks';

/** A dial waits for its turn on the account at most this long in the activity; a turn further off
 * is waited for by the workflow, on a timer. */
const DIAL_TURN_WAIT_MAX_MS = 3_000;
/**
 * A try places the call only while this much more than one provider request's time (and its turn's
 * wait) is left of it.
 * The server gives up on a try at its start-to-close timeout and starts the next one, which looks for
 * a placed call before placing one; the try it gave up on is not stopped (the SDK does not end an
 * activity at its timeout). A request begun near the end of its try could still be placing its call
 * while the next try looks, finds nothing, and rings the person again.
 */
const PLACE_MARGIN_MS = 3_000;
/**
 * A dial's retries place the call only this long after the dial was scheduled (its first try's wait
 * for a worker counts too: the SDK says when the dial was scheduled, not when its first try began),
 * or after `placedSince` for a dial given one; later ones (our store or the provider down for longer)
 * only look for the call an earlier try placed.
 */
export const DIAL_PLACING_WINDOW_MS = 15 * 60 * 1000;
/**
 * The do-not-call answer read with the call is read again when a retry's lookup or the account turn's
 * wait took this long since: a number listed meanwhile is never rung.
 */
const DO_NOT_CALL_REREAD_AFTER_MS = 500;

/** Retryable: not placed, and the next try looks for a call first. */
const outOfTime = () =>
  ApplicationFailure.create({
    type: FAILURES.dialTryOutOfTime,
    message: 'too little of this try is left for the provider request: not placed; the next try looks first',
  });

/**
 * The call's move to `ringing`, written by the dial itself once the provider has the call (workflows
 * started since 2026-11-26 ask for it): an activity task and a workflow task fewer per dial than a
 * recordStatus of its own. The times are fixed by the workflow, so a retried dial's write is known as
 * its own and answers `applied` again.
 */
export interface RingingWrite {
  at: string;
  callTriggeredAt: string;
  /** The dial attempt (calls since `writesNameAttempt`): a write landing after it ended changes nothing. */
  attempt?: number;
  /** The `phoneCall.ringing` event, handed on once the write lands (calls since `routeWithWrites`). */
  route?: EventRouteAfterWrite;
}

export interface DialCallInput {
  callId: string;
  /**
   * A try of an earlier dial of this attempt was refused for a rate limit after its own first try
   * (which may have placed the call unseen): this dial looks for a call placed since then first.
   */
  placedSince?: string;
  /** The call went through its team's pacer: the request waits for its turn on the account too. */
  paced?: boolean;
  /** From the workflow's input (the template as it was at create), not the template now. */
  machineDetection?: ActiveMachineDetection;
  /** How long the provider lets the call ring unanswered (absent: the provider's default). */
  ringTimeoutSeconds?: number;
  /** How long the provider lets the answered call last before it ends it (absent: the provider's own limit). */
  timeLimitSeconds?: number;
  /**
   * When the calling hours the workflow found open close (ISO; absent: no calling hours): no try
   * places the call from then on, however late it started.
   */
  placeBefore?: string;
  /**
   * Where the placing window starts when not at `placedSince` (ISO): a dial after the calling hours
   * closed on it and opened again still looks back that far, but may place the call.
   */
  placingWindowFrom?: string;
  ringing?: RingingWrite;
}

/** What a dial asks of the provider beyond the call itself (a hang-up's search for the call asks nothing). */
type ProviderAsks = Pick<DialCallInput, 'machineDetection' | 'ringTimeoutSeconds' | 'timeLimitSeconds'>;

export interface Dialled {
  providerCallId: string;
  /** The ringing write's answer, when the dial was asked to make it. */
  ringing?: StatusWritten;
}

export function createDialActivities(
  deps: Pick<
    ActivityDeps,
    | 'config'
    | 'providers'
    | 'logger'
    | 'calls'
    | 'templates'
    | 'doNotCall'
    | 'metrics'
    | 'pacing'
    | 'pacingDefaults'
    | 'webhooks'
    | 'temporal'
  >,
) {
  const { config, providers, logger, calls, templates, doNotCall, metrics, pacing, pacingDefaults } = deps;
  const writeStatus = createStatusWriter(deps);
  const spacer = createDialSpacer((teamId) => pacing.readLimits(teamId, pacingDefaults), {
    maxWaitMs: DIAL_TURN_WAIT_MAX_MS,
  });

  /** Credentials removed after create cannot come back by retrying: the call ends at once. */
  const providerFor = nonRetryableWhenUnconfigured(providers);

  /**
   * The provider has the call: its id goes on the record, with the move to `ringing` when asked. When
   * another try of this dial placed a call too (one no lookup found: a try given up on while its
   * request or write was slow) and its `ringing` write landed first, the record names that call: this
   * try answers it, as the record and the webhooks follow it, and hangs up its own, so that the
   * person is not rung by both for long.
   */
  async function dialled(
    callId: string,
    providerCallId: string,
    ringing: RingingWrite | undefined,
    placedBy: TelephonyProvider | null,
  ): Promise<Dialled> {
    if (!ringing) {
      if (placedBy) await calls.setProviderCallId(callId, providerCallId);
      return { providerCallId };
    }
    const { recordedProviderCallId, ...written } = await writeStatus(
      {
        callId,
        status: 'ringing',
        statusCode: STATUS_CODES.dialling,
        at: ringing.at,
        ...(ringing.attempt !== undefined ? { attempt: ringing.attempt } : {}),
        fields: { callTriggeredAt: ringing.callTriggeredAt, providerCallId },
      },
      ringing.route,
    );
    if (!recordedProviderCallId || !placedBy) return { providerCallId, ringing: written };
    logger.warn(
      { callId, providerCallId, recordedProviderCallId },
      "dial: an earlier try's call is on the record: following it and hanging up this one",
    );
    // Its answer is what matters now: a hang-up that fails is logged (the call then rings out on its
    // own, its events ignored by the workflow), never retried, as a retry would follow the record alone.
    await placedBy.hangUp(providerCallId).catch((err: unknown) => {
      logger.error({ callId, providerCallId, err }, 'dial: could not hang up the second call placed');
    });
    return { providerCallId: recordedProviderCallId, ringing: written };
  }

  function placeRequest(
    call: PhoneCallDoc,
    template: CallTemplateDoc | null,
    providerName: ProviderName,
    { machineDetection, ringTimeoutSeconds, timeLimitSeconds }: ProviderAsks = {},
  ): PlaceCallRequest {
    const callId = call._id.toHexString();
    return {
      callId,
      to: call.toPhoneNumber,
      from: call.fromPhoneNumber,
      record: call.record,
      statusCallbackUrl: callbackUrlFor(config.PUBLIC_BASE_URL, providerName, callId),
      script: {
        openingLine: fillPrompt(template?.prompt ?? '', call.promptVariableValues),
        nameOfHuman: call.nameOfHuman ?? undefined,
        voiceId: template?.voiceId ?? undefined,
      },
      ...(machineDetection ? { machineDetection } : {}),
      ...(ringTimeoutSeconds ? { ringTimeoutSeconds } : {}),
      ...(timeLimitSeconds ? { timeLimitSeconds } : {}),
    };
  }

  /**
   * The call this dial attempt placed since `since`, if any: one its callbacks named (a provider's
   * search may no longer list one that has ended), else the provider's own search. A call of an
   * earlier attempt (a redial) is not this attempt's, and Twilio and Vonage list calls by their two
   * numbers only: one of another of our calls to the same person (a follow-up, a duplicate row) is set
   * aside, never taken as this dial's.
   */
  async function placedSince(
    call: PhoneCallDoc,
    provider: TelephonyProvider,
    request: PlaceCallRequest,
    since: Date,
  ): Promise<PlacedCall | null> {
    const earlierAttempts = new Set((call.attempts ?? []).map((a) => a.providerCallId));
    const setAside = async (id: string) => earlierAttempts.has(id) || (await calls.heldByAnotherCall(call, id));
    // A sighting another call's record holds is set aside: a verified callback says which provider call
    // it is about, but its URL's call id is not always under the signature (Vonage signs the body only),
    // so a replayed callback of another of our calls could have been sighted as this one's. Only the
    // record counts here: that other call's own sighting of its call would set aside this call's.
    for (const sighted of await calls.sightedProviderCallIds(request.callId)) {
      if (earlierAttempts.has(sighted)) continue;
      if (!(await calls.heldByAnotherCall(call, sighted, { recordsOnly: true }))) return { providerCallId: sighted };
    }
    return provider.findPlacedCall(request, { since, setAside });
  }

  /**
   * A try that starts late (the workers busy or down, a retry's backoff) must not ring the person
   * after the calling hours the workflow checked have closed: not placed, and the workflow waits for
   * them to open again.
   */
  function throwIfHoursClosed(placeBefore: string | undefined, providerName: ProviderName): void {
    if (!placeBefore || Date.now() < Date.parse(placeBefore)) return;
    metrics.dialled(providerName, 'hours-closed');
    throw ApplicationFailure.create({
      type: FAILURES.callingHoursClosed,
      message: `the calling hours closed at ${placeBefore}: not placed`,
      // The try's number: after a first one, an earlier try may have placed the call unseen.
      details: [activityInfo().attempt],
      nonRetryable: true,
    });
  }

  /** The number is on the team's do-not-call list: never placed. */
  function listedNow(call: PhoneCallDoc, providerName: ProviderName): ApplicationFailure {
    metrics.dialled(providerName, 'do-not-call');
    return ApplicationFailure.create({
      type: FAILURES.doNotCall,
      message: `${call.toPhoneNumber} is on the team's do-not-call list`,
      nonRetryable: true,
    });
  }

  /** One try of a dial: see dialCall. */
  async function dial(
    {
      callId,
      machineDetection,
      ringTimeoutSeconds,
      timeLimitSeconds,
      ringing,
      paced,
      placedSince: lookFirstSince,
      placeBefore,
      placingWindowFrom,
    }: DialCallInput,
    tryEndsAt: number,
  ): Promise<Dialled> {
    const call = await calls.findById(callId);
    if (!call) {
      throw ApplicationFailure.create({
        type: FAILURES.callRecordMissing,
        message: `phone call ${callId} no longer exists`,
        nonRetryable: true,
      });
    }
    // An earlier attempt of this dial placed the call and recorded it: never dialled again.
    if (call.providerCallId) return dialled(callId, call.providerCallId, ringing, null);
    // Independent reads, side by side: when a campaign's calls fall due together each one counts.
    // The do-not-call answer is read now and acted on right before the dial below (read again there
    // if the lookup or the turn took a while).
    const listedReadAt = Date.now();
    const [template, provider, listed] = await Promise.all([
      templates.findById(call.callTemplateId),
      providerFor(call.teamId, call.telephonyProvider as ProviderName),
      doNotCall.listedAmong(call.teamId.toHexString(), [call.toPhoneNumber]),
    ]);
    const request = placeRequest(call, template, provider.name, {
      machineDetection,
      ringTimeoutSeconds,
      timeLimitSeconds,
    });
    if (activityInfo().attempt > 1 || lookFirstSince) {
      const since = lookFirstSince ? new Date(lookFirstSince) : new Date(activityInfo().scheduledTimestampMs);
      const earlier = await placedSince(call, provider, request, since);
      if (earlier) {
        logger.info(
          { callId, providerCallId: earlier.providerCallId },
          'dial retried: the provider already has the call',
        );
        metrics.dialled(provider.name, 'found-placed');
        return dialled(callId, earlier.providerCallId, ringing, provider);
      }
      // Nothing found, and the calling hours have closed: not placed, and the workflow waits for them,
      // as it does when a dial's first try finds them closed. (Checked before the placing window: a
      // dial past both would otherwise end the call as one whose outcome is unknown.)
      throwIfHoursClosed(placeBefore, provider.name);
      // Tries go on for as long as our store or the provider is down, to find a call placed early;
      // one placed now, that late, could fall outside the calling hours the workflow checked.
      // A dial told an earlier one of this attempt may have placed the call counts from that dial's
      // start: each dial of a run of refusals would otherwise open a window of its own.
      const windowFrom = placingWindowFrom
        ? Date.parse(placingWindowFrom)
        : lookFirstSince
          ? Date.parse(lookFirstSince)
          : activityInfo().scheduledTimestampMs;
      if (Date.now() - windowFrom > DIAL_PLACING_WINDOW_MS) {
        metrics.dialled(provider.name, 'window-passed');
        throw ApplicationFailure.create({
          type: FAILURES.dialWindowPassed,
          message: `no earlier try placed the call, and ${DIAL_PLACING_WINDOW_MS / 60_000} minutes have passed: not placed`,
          nonRetryable: true,
        });
      }
    }
    // Checked right before every dial (create checked too): a number listed since is never rung. Read
    // again when a retry's lookup took a while; before the checks of the try's time left, as a read
    // the store is slow to answer must not leave the provider request too little of it.
    const stillListed = () => doNotCall.listedAmong(call.teamId.toHexString(), [call.toPhoneNumber]);
    if (Date.now() - listedReadAt > DO_NOT_CALL_REREAD_AFTER_MS ? (await stillListed()).size > 0 : listed.size > 0)
      throw listedNow(call, provider.name);
    throwIfHoursClosed(placeBefore, provider.name);
    // Before the turn is taken (a try that could not use it would spend the account's turn for nothing),
    // with room for its wait.
    const turnWaitMs = paced ? DIAL_TURN_WAIT_MAX_MS : 0;
    if (tryEndsAt - Date.now() < turnWaitMs + REQUEST_TIMEOUT_MS + PLACE_MARGIN_MS) {
      metrics.dialled(provider.name, 'try-out-of-time');
      throw outOfTime();
    }
    if (paced) {
      const turnFrom = Date.now();
      const turn = await spacer.takeTurn(call.teamId.toHexString(), provider.name);
      if (!turn.taken) {
        metrics.dialled(provider.name, 'turn-ahead');
        // Not placed: the workflow waits, as for the provider's own 429, and dials again.
        throw ApplicationFailure.create({
          type: FAILURES.accountDialRateReached,
          message: `the team's ${provider.name} account is at its dial rate: dial again in ${turn.waitMs} ms`,
          // The try's number: after a first one, an earlier try may have placed the call unseen.
          details: [turn.waitMs, activityInfo().attempt],
          nonRetryable: true,
        });
      }
      // The turn's wait (up to DIAL_TURN_WAIT_MAX_MS): read the list again after a long one.
      if (Date.now() - turnFrom > DO_NOT_CALL_REREAD_AFTER_MS && (await stillListed()).size > 0)
        throw listedNow(call, provider.name);
    }
    // Again once the turn is taken: its read of the team's limits and its wait may have run long.
    if (tryEndsAt - Date.now() < REQUEST_TIMEOUT_MS + PLACE_MARGIN_MS) {
      metrics.dialled(provider.name, 'try-out-of-time');
      throw outOfTime();
    }
    throwIfHoursClosed(placeBefore, provider.name);
    try {
      const placed = await provider.placeCall(request);
      metrics.dialled(provider.name, 'placed');
      return await dialled(callId, placed.providerCallId, ringing, provider);
    } catch (err) {
      if (err instanceof ProviderRateLimitedError) {
        metrics.dialled(provider.name, 'rate-limited');
        // Not a failure of this call: the workflow waits as long as the provider asked and dials again.
        throw ApplicationFailure.create({
          type: FAILURES.providerRateLimited,
          message: err.message,
          details: [err.retryAfterMs, activityInfo().attempt],
          nonRetryable: true,
        });
      }
      if (err instanceof ProviderRejectedError) {
        metrics.dialled(provider.name, 'rejected');
        throw ApplicationFailure.create({
          type: FAILURES.providerRejected,
          message: err.message,
          details: [err.code],
          nonRetryable: true,
        });
      }
      throw err;
    }
  }

  return {
    /**
     * Places the call through its provider, once: a retry looks for the call an earlier try placed
     * before it places one, and a try places one only with time left to finish the request.
     */
    async dialCall(input: DialCallInput): Promise<Dialled> {
      // The try's end as the server counts it (from about now): see PLACE_MARGIN_MS. No heartbeats: a
      // heartbeat timeout would let the server give up on a try between the SDK's throttled heartbeats
      // while its request still places the call.
      const tryEndsAt = Date.now() + activityInfo().startToCloseTimeoutMs;
      return dial(input, tryEndsAt);
    },

    /**
     * Speaks the template's voicemail message (its variables filled) on a machine whose greeting is
     * over. A template since removed, or one without a message, leaves the opening line instead.
     */
    async leaveVoicemail({ callId, providerCallId }: { callId: string; providerCallId: string }): Promise<void> {
      const call = await calls.findById(callId);
      if (!call) return;
      const template = await templates.findById(call.callTemplateId);
      const provider = await providerFor(call.teamId, call.telephonyProvider as ProviderName);
      const message = fillPrompt(template?.voicemailMessage ?? template?.prompt ?? '', call.promptVariableValues);
      try {
        await provider.leaveMessage({ callId, providerCallId, message });
      } catch (err) {
        // Refused for good (a message Twilio cannot take): no second try.
        if (err instanceof ProviderRejectedError)
          throw ApplicationFailure.nonRetryable(err.message, FAILURES.providerRejected);
        throw err;
      }
    },

    /**
     * Hangs up the call; without a provider call id, whatever the dial stored. With `dialledSince` (a
     * cancel cut the dial short: its try may have placed the call and lost its answer, its retry never
     * came), the call the dial placed since then is looked for as a retried dial does, and hung up.
     * Answers the provider call id hung up, or null when none was placed.
     */
    async hangUpCall({
      callId,
      providerCallId,
      dialledSince,
    }: {
      callId: string;
      providerCallId?: string;
      dialledSince?: string;
    }): Promise<string | null> {
      const call = await calls.findById(callId);
      if (!call) return null;
      let target = providerCallId ?? call.providerCallId ?? null;
      if (!target && !dialledSince) return null;
      const provider = await providerFor(call.teamId, call.telephonyProvider as ProviderName);
      if (!target && dialledSince) {
        const template = await templates.findById(call.callTemplateId);
        const request = placeRequest(call, template, provider.name);
        target = (await placedSince(call, provider, request, new Date(dialledSince)))?.providerCallId ?? null;
        if (target)
          logger.info({ callId, providerCallId: target }, 'cancelled mid-dial: hanging up the call it placed');
      }
      if (!target) return null;
      await provider.hangUp(target);
      return target;
    },

    /** What the provider says of the call now, as events (its callbacks may have been lost). */
    async pollCallEvents({ callId, providerCallId }: { callId: string; providerCallId: string }) {
      const call = await calls.findById(callId);
      if (!call) return [];
      const provider = await providerFor(call.teamId, call.telephonyProvider as ProviderName);
      return provider.pollCallEvents({ callId, providerCallId });
    },
  };
}

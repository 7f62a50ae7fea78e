// Telnyx as the adapter uses it: Call Control (dial with answering-machine detection, speak,
// hang up, retrieve status, a connection's active calls), Call Recordings with pre-signed
// downloads, and AI Conversations. Bearer API key auth (any key; each key sees only its own
// calls); webhooks signed with Ed25519.
import { randomUUID, type KeyObject } from 'node:crypto';
import { newCall, type ProviderContext } from './context';
import type { CallbackQueue } from './delivery';
import { bearerToken, isRecord, json, parseJsonBody, wav, type ApiRequest, type ApiResponse, type Route } from './http';
import { planCall, type MachineDetectionResult, type PlannedDetection, type PlannedGreetingEnd } from './scenarios';
import { opaqueToken, telnyxSignatureHeaders } from './signing';
import {
  RECORDING_PROCESSING_SECONDS,
  type CallEndOutcome,
  type EmulatedCall,
  type SpokenUtterance,
} from './simulation';

/** Telnyx's limit on a speak command's payload ("There is a 3,000 character limit"). */
const TELNYX_SPEAK_MAX_CHARS = 3000;

const E164 = /^\+[1-9]\d{6,14}$/;
/**
 * answering_machine_detection values the emulator runs: `detect` gives the verdict only,
 * `greeting_end` also the end of a machine's greeting, `detect_beep` that end only when it beeps.
 */
const AMD_SUPPORTED = new Set(['detect', 'greeting_end', 'detect_beep']);
const AMD_UNSUPPORTED = new Set(['detect_words', 'premium']);
const DETECTION_RESULT: Record<MachineDetectionResult, string> = {
  human: 'human',
  machine: 'machine',
  fax: 'machine',
  unknown: 'not_sure',
};

/** hangup_cause, hangup_source and SIP code for each way a call ends. */
function hangupOf(call: EmulatedCall): { cause: string; source: string; sip: string } {
  const outcome: CallEndOutcome = call.end?.outcome ?? 'completed';
  switch (outcome) {
    case 'completed':
      if (call.end?.hungUpBy === 'time-limit') return { cause: 'time_limit', source: 'unknown', sip: '200' };
      return { cause: 'normal_clearing', source: call.end?.hungUpBy === 'caller' ? 'caller' : 'callee', sip: '200' };
    case 'busy':
      return { cause: 'user_busy', source: 'callee', sip: '486' };
    case 'declined':
      return { cause: 'call_rejected', source: 'callee', sip: '603' };
    case 'no-answer':
      return { cause: 'timeout', source: 'unknown', sip: '487' };
    case 'canceled':
      return { cause: 'originator_cancel', source: 'caller', sip: '487' };
    case 'failed':
      return { cause: 'unspecified', source: 'unknown', sip: '500' };
  }
}

interface Message {
  role: 'assistant' | 'user';
  text: string;
  created_at: string;
  sent_at: string;
}

interface TelnyxCall {
  call: EmulatedCall;
  apiKey: string;
  connectionId: string;
  webhookUrl: string;
  clientState: string | null;
  callLegId: string;
  callSessionId: string;
  queue: CallbackQueue;
  recording?: { id: string; token: string; createdAt: Date };
  conversation?: { id: string; createdAt: Date; messages: Message[] };
  amd: string | null;
  /** The client_state of the speak command being said (Telnyx echoes a command's own). */
  speakClientState?: string | null;
  /** command_id values of the commands carried out on this call (a repeat is ignored). */
  commandIds: Set<string>;
  /** The webhooks sent for this call, as the Call Events debugging API lists them. */
  events: Array<{ name: string; at: string; data: Record<string, unknown> }>;
}

const OCCURRED_AT_OPERATORS = ['eq', 'gt', 'gte', 'lt', 'lte'] as const;
const OCCURRED_AT_TEST: Record<(typeof OCCURRED_AT_OPERATORS)[number], (at: number, bound: number) => boolean> = {
  eq: (at, bound) => at === bound,
  gt: (at, bound) => at > bound,
  gte: (at, bound) => at >= bound,
  lt: (at, bound) => at < bound,
  lte: (at, bound) => at <= bound,
};

function errors(status: number, code: string, title: string, detail: string, pointer?: string): ApiResponse {
  return json(status, { errors: [{ code, title, detail, ...(pointer ? { source: { pointer } } : {}) }] });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** `timeout_secs`: how long an unanswered call rings. */
const RING_TIMEOUT = { default: 30, min: 5, max: 600 };
/** `time_limit_secs`: how long the call may last from answer; its default is also its maximum. */
const TIME_LIMIT = { default: 14_400, min: 30, max: 14_400 };

/** The dial's answering_machine_detection (null: off), or the 422 refusing it. */
function machineDetectionOf(value: unknown): { mode: string | null } | ApiResponse {
  if (value === undefined || value === 'disabled') return { mode: null };
  if (typeof value === 'string' && AMD_SUPPORTED.has(value)) return { mode: value };
  const detail =
    typeof value === 'string' && AMD_UNSUPPORTED.has(value)
      ? `The emulator does not support answering_machine_detection ${value}.`
      : 'answering_machine_detection must be one of detect, greeting_end, detect_beep, detect_words, premium, disabled.';
  return errors(422, '10015', 'Invalid value', detail, '/answering_machine_detection');
}

/** The opening line our adapter carries in client_state, if it is there. */
function openingLineOf(clientState: string | null): string {
  if (!clientState) return '';
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientState, 'base64').toString('utf8'));
    return isRecord(parsed) && typeof parsed.openingLine === 'string' ? parsed.openingLine : '';
  } catch {
    return '';
  }
}

export function createTelnyxEmulator(
  ctx: ProviderContext,
  signingKey: KeyObject,
): { routes: Route[]; unavailable(): ApiResponse } {
  const calls = new Map<string, TelnyxCall>();

  const authenticated = (
    handler: (req: ApiRequest, params: Record<string, string>, apiKey: string) => ApiResponse | Promise<ApiResponse>,
  ): Route['handle'] => {
    return (req, params) => {
      const apiKey = bearerToken(req);
      if (!apiKey)
        return errors(
          401,
          '10009',
          'Authentication failed',
          'The required authentication headers were missing or malformed.',
        );
      return handler(req, params, apiKey);
    };
  };

  const owned = (apiKey: string, callControlId: string): TelnyxCall | undefined => {
    const entry = calls.get(callControlId);
    return entry?.apiKey === apiKey ? entry : undefined;
  };

  const notFound = (what: string): ApiResponse =>
    errors(404, '10005', 'Resource not found', `${what} could not be found.`);

  const callResource = (entry: TelnyxCall): Record<string, unknown> => ({
    record_type: 'call',
    call_control_id: entry.call.id,
    call_leg_id: entry.callLegId,
    call_session_id: entry.callSessionId,
    client_state: entry.clientState,
    is_alive: entry.call.state !== 'ended',
    call_duration: Math.round(entry.call.talkSeconds ?? 0),
    start_time: entry.call.answeredAt?.toISOString() ?? null,
    end_time: entry.call.endedAt?.toISOString() ?? null,
  });

  const recordingResource = (entry: TelnyxCall): Record<string, unknown> => {
    const rec = entry.call.recording;
    const meta = entry.recording;
    return {
      record_type: 'recording',
      id: meta?.id,
      call_control_id: entry.call.id,
      call_leg_id: entry.callLegId,
      call_session_id: entry.callSessionId,
      connection_id: entry.connectionId,
      channels: 'single',
      source: 'call',
      status: 'completed',
      from: entry.call.from,
      to: entry.call.to,
      duration_millis: Math.round((rec?.durationSeconds ?? 0) * 1000),
      recording_started_at: rec?.startedAt.toISOString(),
      recording_ended_at: rec?.endedAt.toISOString(),
      created_at: meta?.createdAt.toISOString(),
      updated_at: meta?.createdAt.toISOString(),
      download_urls: { wav: downloadUrl(entry) },
    };
  };

  /** A pre-signed download URL, as Telnyx hands out (no API key needed to fetch it). */
  const downloadUrl = (entry: TelnyxCall): string =>
    `${ctx.publicUrl()}/media/telnyx/${entry.recording?.id ?? ''}.wav?X-Amz-Expires=600&X-Amz-Signature=${entry.recording?.token ?? ''}`;

  const webhook = (entry: TelnyxCall, eventType: string, extra: Record<string, unknown> = {}): void => {
    const { call } = entry;
    const id = randomUUID();
    const occurredAt = new Date().toISOString();
    const payload = {
      call_control_id: call.id,
      call_leg_id: entry.callLegId,
      call_session_id: entry.callSessionId,
      connection_id: entry.connectionId,
      client_state: entry.clientState,
      from: call.from,
      to: call.to,
      direction: 'outgoing',
      ...extra,
    };
    const data = { record_type: 'event', event_type: eventType, id, occurred_at: occurredAt, payload };
    entry.events.push({ name: eventType, at: occurredAt, data });
    entry.queue.push({
      event: `telnyx ${eventType}`,
      url: entry.webhookUrl,
      build: (attempt) => {
        const body = JSON.stringify({
          data,
          meta: { attempt, delivered_to: entry.webhookUrl },
        });
        return { headers: { 'Content-Type': 'application/json', ...telnyxSignatureHeaders(signingKey, body) }, body };
      },
    });
  };

  const observer = (entry: TelnyxCall) => ({
    initiated: () => webhook(entry, 'call.initiated', { state: 'bridging' }),
    // Call Control reports no separate ringing event for an outbound call.
    ringing: () => undefined,
    answered: (call: EmulatedCall) => {
      entry.conversation = { id: randomUUID(), createdAt: new Date(), messages: [] };
      webhook(entry, 'call.answered', { state: 'answered', start_time: call.answeredAt?.toISOString() });
    },
    spoke: (_call: EmulatedCall, utterance: SpokenUtterance) => {
      const at = utterance.at.toISOString();
      entry.conversation?.messages.push({
        role: utterance.speaker === 'agent' ? 'assistant' : 'user',
        text: utterance.text,
        created_at: at,
        sent_at: at,
      });
    },
    machineDetected: (_call: EmulatedCall, { result }: PlannedDetection) =>
      webhook(entry, 'call.machine.detection.ended', { result: DETECTION_RESULT[result] }),
    greetingEnded: (_call: EmulatedCall, { beep }: PlannedGreetingEnd) => {
      if (entry.amd === 'greeting_end' || (entry.amd === 'detect_beep' && beep)) {
        webhook(entry, 'call.machine.greeting.ended', { result: beep ? 'beep_detected' : 'ended' });
      }
    },
    spoken: () => webhook(entry, 'call.speak.ended', { status: 'completed', ...speakState(entry) }),
    // Telnyx ends a speak cut short by the hang-up with `call_hangup`, before the call.hangup.
    spokenCut: () => webhook(entry, 'call.speak.ended', { status: 'call_hangup', ...speakState(entry) }),
    ended: (call: EmulatedCall) => {
      const hangup = hangupOf(call);
      webhook(entry, 'call.hangup', {
        state: 'hangup',
        hangup_cause: hangup.cause,
        hangup_source: hangup.source,
        sip_hangup_cause: hangup.sip,
        start_time: (call.answeredAt ?? call.createdAt).toISOString(),
        end_time: (call.endedAt ?? new Date()).toISOString(),
      });
      const recording = call.recording;
      if (!recording) return;
      // Processed after the hang-up: listed, and its webhook sent, seconds later.
      ctx.simulator.afterCall(RECORDING_PROCESSING_SECONDS, () => {
        entry.recording = { id: randomUUID(), token: opaqueToken(), createdAt: new Date() };
        webhook(entry, 'call.recording.saved', {
          channels: 'single',
          recording_started_at: recording.startedAt.toISOString(),
          recording_ended_at: recording.endedAt.toISOString(),
          recording_urls: { wav: downloadUrl(entry) },
          public_recording_urls: {},
        });
      });
    },
  });

  /** A command's JSON object body, or the 400 Telnyx answers to anything else. */
  const objectBody = (
    req: ApiRequest,
  ): { body: Record<string, unknown>; refusal?: never } | { body?: never; refusal: ApiResponse } => {
    let body: unknown;
    try {
      body = parseJsonBody(req);
    } catch {
      return { refusal: errors(400, '10015', 'Bad Request', 'The request body is not valid JSON.') };
    }
    if (!isRecord(body))
      return { refusal: errors(400, '10015', 'Bad Request', 'The request body must be a JSON object.') };
    return { body };
  };

  const dial: Route['handle'] = authenticated((req, _params, apiKey) => {
    const { body, refusal } = objectBody(req);
    if (!body) return refusal;
    const {
      connection_id: connectionId,
      to,
      from,
      webhook_url: webhookUrl,
      client_state: clientState,
      record,
      timeout_secs: timeoutSecs = RING_TIMEOUT.default,
      time_limit_secs: timeLimitSecs = TIME_LIMIT.default,
    } = body;
    if (typeof connectionId !== 'string' || connectionId.length === 0) {
      return errors(422, '10015', 'Invalid value', 'connection_id is required.', '/connection_id');
    }
    if (typeof from !== 'string' || !E164.test(from))
      return errors(422, '10015', 'Invalid value', 'from must be an E.164 number.', '/from');
    if (typeof webhookUrl !== 'string' || !/^https?:\/\//.test(webhookUrl)) {
      return errors(
        422,
        '10015',
        'Invalid value',
        'The emulator needs webhook_url (it has no connection-level webhook).',
        '/webhook_url',
      );
    }
    if (clientState !== undefined && (typeof clientState !== 'string' || !BASE64.test(clientState))) {
      return errors(422, '10015', 'Invalid value', 'client_state must be Base64.', '/client_state');
    }
    if (record !== undefined && record !== 'record-from-answer') {
      return errors(422, '10015', 'Invalid value', 'record must be record-from-answer.', '/record');
    }
    if (
      typeof timeoutSecs !== 'number' ||
      !Number.isInteger(timeoutSecs) ||
      timeoutSecs < RING_TIMEOUT.min ||
      timeoutSecs > RING_TIMEOUT.max
    ) {
      const range = `${RING_TIMEOUT.min} to ${RING_TIMEOUT.max}`;
      return errors(422, '10015', 'Invalid value', `timeout_secs must be an integer from ${range}.`, '/timeout_secs');
    }
    if (
      typeof timeLimitSecs !== 'number' ||
      !Number.isInteger(timeLimitSecs) ||
      timeLimitSecs < TIME_LIMIT.min ||
      timeLimitSecs > TIME_LIMIT.max
    ) {
      const range = `${TIME_LIMIT.min} to ${TIME_LIMIT.max}`;
      const detail = `time_limit_secs must be an integer from ${range}.`;
      return errors(422, '10015', 'Invalid value', detail, '/time_limit_secs');
    }
    const amd = machineDetectionOf(body.answering_machine_detection);
    if (!('mode' in amd)) return amd;
    const state = typeof clientState === 'string' ? clientState : null;
    const plan = planCall({
      to: typeof to === 'string' ? to : '',
      openingLine: openingLineOf(state),
      detectMachines: amd.mode !== null,
      ringTimeoutSeconds: timeoutSecs,
    });
    if (typeof to !== 'string' || !E164.test(to) || plan.outcome === 'refused') {
      return errors(
        422,
        '10016',
        'Invalid destination number',
        'The destination number is not a valid, reachable phone number.',
        '/to',
      );
    }
    // Over the account's dials per second, Telnyx refuses the dial (its rate-limit answer and headers).
    const refused = ctx.dialRate.refusal('telnyx', apiKey);
    if (refused) {
      const answer = errors(
        429,
        '10011',
        'Too many requests',
        'You have exceeded the maximum number of allowed requests.',
      );
      const reset = String(Math.ceil(refused.retryAfterMs / 1000));
      return { ...answer, headers: { ...answer.headers, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset } };
    }
    const call = newCall('telnyx', {
      id: `v3:${opaqueToken()}`,
      account: apiKey,
      to,
      from,
      record: record === 'record-from-answer',
      plan,
      timeLimitSeconds: timeLimitSecs,
      machineDetection: amd.mode,
      callbackUrl: webhookUrl,
    });
    const entry: TelnyxCall = {
      call,
      apiKey,
      connectionId,
      webhookUrl,
      clientState: state,
      callLegId: randomUUID(),
      callSessionId: randomUUID(),
      queue: ctx.newQueue(),
      amd: amd.mode,
      commandIds: new Set(),
      events: [],
    };
    calls.set(call.id, entry);
    ctx.dialled(call);
    ctx.simulator.start(call, observer(entry));
    return json(200, { data: callResource(entry) });
  });

  const retrieve: Route['handle'] = authenticated((_req, params, apiKey) => {
    const entry = owned(apiKey, params.id);
    return entry ? json(200, { data: callResource(entry) }) : notFound(`Call ${params.id}`);
  });

  /** A command's own client_state, when it gave one, goes on the webhooks it causes. */
  const speakState = (entry: TelnyxCall): { client_state?: string } =>
    entry.speakClientState ? { client_state: entry.speakClientState } : {};

  const callEnded = (): ApiResponse =>
    errors(422, '90018', 'Call has already ended', "This call is no longer active and can't receive commands.");

  /** Speaks the payload as the agent; call.speak.ended follows, and the hang-up is the caller's to do. */
  const speak: Route['handle'] = authenticated((req, params, apiKey) => {
    const entry = owned(apiKey, params.id);
    if (!entry) return notFound(`Call ${params.id}`);
    const { body, refusal } = objectBody(req);
    if (!body) return refusal;
    const { payload, voice, client_state: clientState, command_id: commandId } = body;
    // Telnyx ignores a command repeating an earlier one's command_id on the same call.
    if (typeof commandId === 'string' && entry.commandIds.has(commandId)) return json(200, { data: { result: 'ok' } });
    if (typeof payload !== 'string' || payload.trim().length === 0) {
      return errors(422, '10015', 'Invalid value', 'payload is required.', '/payload');
    }
    if ([...payload].length > TELNYX_SPEAK_MAX_CHARS) {
      const detail = `payload must be at most ${TELNYX_SPEAK_MAX_CHARS} characters.`;
      return errors(422, '10015', 'Invalid value', detail, '/payload');
    }
    if (typeof voice !== 'string' || voice.length === 0) {
      return errors(422, '10015', 'Invalid value', 'voice is required.', '/voice');
    }
    if (clientState !== undefined && (typeof clientState !== 'string' || !BASE64.test(clientState))) {
      return errors(422, '10015', 'Invalid value', 'client_state must be Base64.', '/client_state');
    }
    // A later command's client_state replaces the earlier one's until it is given afresh.
    const previous = entry.speakClientState;
    entry.speakClientState = typeof clientState === 'string' ? clientState : null;
    if (!ctx.simulator.speakAndThen(entry.call, payload.trim(), 'notify')) {
      entry.speakClientState = previous;
      return callEnded();
    }
    if (typeof commandId === 'string' && commandId.length > 0) entry.commandIds.add(commandId);
    webhook(entry, 'call.speak.started', speakState(entry));
    return json(200, { data: { result: 'ok' } });
  });

  const hangup: Route['handle'] = authenticated((_req, params, apiKey) => {
    const entry = owned(apiKey, params.id);
    if (!entry) return notFound(`Call ${params.id}`);
    if (!ctx.simulator.hangUp(entry.call)) return callEnded();
    return json(200, { data: { result: 'ok' } });
  });

  const activeCalls: Route['handle'] = authenticated((req, params, apiKey) => {
    const active = [...calls.values()].filter(
      (e) => e.apiKey === apiKey && e.connectionId === params.connection && e.call.state !== 'ended',
    );
    const limit = Math.min(Math.max(Number(req.query.get('page[limit]') ?? 20) || 20, 1), 250);
    const after = req.query.get('page[after]');
    const offset = after ? Number(Buffer.from(after, 'base64url').toString('utf8')) || 0 : 0;
    const items = active.slice(offset, offset + limit);
    const cursor = (at: number): string => Buffer.from(String(at)).toString('base64url');
    return json(200, {
      data: items.map((e) => ({
        record_type: 'call',
        call_control_id: e.call.id,
        call_leg_id: e.callLegId,
        call_session_id: e.callSessionId,
        call_duration: Math.round((Date.now() - e.call.createdAt.getTime()) / 1000),
        client_state: e.clientState,
      })),
      meta: {
        total_items: active.length,
        cursors: {
          after: offset + limit < active.length ? cursor(offset + limit) : null,
          before: offset > 0 ? cursor(Math.max(0, offset - limit)) : null,
        },
      },
    });
  });

  const pageOf = (req: ApiRequest, items: unknown[]): ApiResponse => {
    const size = Math.min(Math.max(Number(req.query.get('page[size]') ?? 20) || 20, 1), 250);
    const number = Math.max(Number(req.query.get('page[number]') ?? 1) || 1, 1);
    return json(200, {
      data: items.slice((number - 1) * size, number * size),
      meta: {
        page_number: number,
        page_size: size,
        total_pages: Math.max(1, Math.ceil(items.length / size)),
        total_results: items.length,
      },
    });
  };

  const recorded = (apiKey: string): TelnyxCall[] =>
    [...calls.values()].filter((e) => e.apiKey === apiKey && e.recording && e.call.recording);

  const listRecordings: Route['handle'] = authenticated((req, _params, apiKey) => {
    const q = req.query;
    const found = recorded(apiKey)
      .filter((e) => !q.get('filter[call_leg_id]') || e.callLegId === q.get('filter[call_leg_id]'))
      .filter((e) => !q.get('filter[call_session_id]') || e.callSessionId === q.get('filter[call_session_id]'))
      .filter((e) => !q.get('filter[connection_id]') || e.connectionId === q.get('filter[connection_id]'))
      .map(recordingResource)
      .reverse();
    return pageOf(req, found);
  });

  /**
   * The Call Events debugging API (GET /v2/call_events): the webhooks sent, ordered by occurred_at, each
   * with the raw event as its metadata. Filters as Telnyx documents them: filter[leg_id],
   * filter[application_session_id], filter[connection_id], filter[to], filter[from], filter[name],
   * filter[type] and one filter[occurred_at][eq|gt|gte|lt|lte]; without a leg or session filter, only
   * the last 24 hours.
   */
  const listCallEvents: Route['handle'] = authenticated((req, _params, apiKey) => {
    const q = req.query;
    const legId = q.get('filter[leg_id]');
    const sessionId = q.get('filter[application_session_id]');
    const connectionId = q.get('filter[connection_id]');
    const to = q.get('filter[to]');
    const from = q.get('filter[from]');
    const name = q.get('filter[name]');
    const type = q.get('filter[type]');
    const occurred = OCCURRED_AT_OPERATORS.flatMap((op) => {
      const value = q.get(`filter[occurred_at][${op}]`);
      return value === null ? [] : [{ op, at: Date.parse(value) }];
    });
    if (occurred.length > 1)
      return errors(422, '10015', 'Invalid value', 'Only one filter[occurred_at] can be passed.');
    if (occurred.some((o) => Number.isNaN(o.at))) {
      return errors(422, '10015', 'Invalid value', 'filter[occurred_at] must be an ISO 8601 date-time.');
    }
    const notBefore = legId || sessionId ? -Infinity : Date.now() - 24 * 60 * 60 * 1000;
    const found = [...calls.values()]
      .filter(
        (e) =>
          e.apiKey === apiKey &&
          (!legId || e.callLegId === legId) &&
          (!sessionId || e.callSessionId === sessionId) &&
          (!connectionId || e.connectionId === connectionId) &&
          (!to || e.call.to === to) &&
          (!from || e.call.from === from),
      )
      .flatMap((e) =>
        e.events.map((event) => ({
          record_type: 'call_event',
          call_leg_id: e.callLegId,
          call_session_id: e.callSessionId,
          event_timestamp: event.at,
          name: event.name,
          type: 'webhook',
          metadata: event.data,
        })),
      )
      .filter((event) => {
        const at = Date.parse(event.event_timestamp);
        return (
          (!name || event.name === name) &&
          (!type || type === 'webhook') &&
          at >= notBefore &&
          occurred.every((o) => OCCURRED_AT_TEST[o.op](at, o.at))
        );
      })
      .sort((a, b) => Date.parse(a.event_timestamp) - Date.parse(b.event_timestamp));
    return pageOf(req, found);
  });

  const getRecording: Route['handle'] = authenticated((_req, params, apiKey) => {
    const entry = recorded(apiKey).find((e) => e.recording?.id === params.id);
    return entry ? json(200, { data: recordingResource(entry) }) : notFound(`Recording ${params.id}`);
  });

  /** The pre-signed download: no API key, the signature in the query string is the credential. */
  const download: Route['handle'] = async (req, params) => {
    const entry = [...calls.values()].find((e) => e.recording?.id === params.id);
    if (!entry?.recording || !entry.call.recording || req.query.get('X-Amz-Signature') !== entry.recording.token) {
      return {
        status: 403,
        headers: { 'Content-Type': 'application/xml' },
        body: '<Error><Code>AccessDenied</Code></Error>',
      };
    }
    return wav(await entry.call.recording.wav());
  };

  const conversationResource = (entry: TelnyxCall): Record<string, unknown> => {
    const conversation = entry.conversation;
    const last = conversation?.messages[conversation.messages.length - 1];
    return {
      id: conversation?.id,
      name: '',
      created_at: conversation?.createdAt.toISOString(),
      last_message_at: last?.sent_at ?? conversation?.createdAt.toISOString(),
      metadata: {
        telnyx_call_control_id: entry.call.id,
        telnyx_conversation_channel: 'phone_call',
        telnyx_agent_target: entry.call.from,
        telnyx_end_user_target: entry.call.to,
      },
    };
  };

  /** PostgREST-style `metadata->field=eq.value` filters, the only operator the adapter uses. */
  const listConversations: Route['handle'] = authenticated((req, _params, apiKey) => {
    const filters: [string, string][] = [];
    for (const [key, value] of req.query) {
      const field = /^metadata->(.+)$/.exec(key)?.[1];
      if (!field) continue;
      if (!value.startsWith('eq.'))
        return errors(400, '10015', 'Bad Request', `The emulator supports only eq. filters (${key}).`);
      filters.push([field, value.slice(3)]);
    }
    const found = [...calls.values()]
      .filter((e) => e.apiKey === apiKey && e.conversation)
      .map(conversationResource)
      .filter((c) => filters.every(([field, value]) => (c.metadata as Record<string, string>)[field] === value))
      .reverse();
    return json(200, { data: found });
  });

  const listMessages: Route['handle'] = authenticated((req, params, apiKey) => {
    const entry = [...calls.values()].find((e) => e.apiKey === apiKey && e.conversation?.id === params.id);
    if (!entry?.conversation) return notFound(`Conversation ${params.id}`);
    // Newest first, as a chat history is usually read.
    const messages = [...entry.conversation.messages].reverse().map((m) => ({ ...m, tool_calls: [] }));
    return pageOf(req, messages);
  });

  return {
    unavailable: () => errors(503, '10007', 'Unexpected error', 'An unexpected error occurred.'),
    routes: [
      { method: 'POST', pattern: /^\/v2\/calls$/, handle: dial },
      { method: 'GET', pattern: /^\/v2\/calls\/(?<id>[^/]+)$/, handle: retrieve },
      { method: 'POST', pattern: /^\/v2\/calls\/(?<id>[^/]+)\/actions\/hangup$/, handle: hangup },
      { method: 'POST', pattern: /^\/v2\/calls\/(?<id>[^/]+)\/actions\/speak$/, handle: speak },
      { method: 'GET', pattern: /^\/v2\/connections\/(?<connection>[^/]+)\/active_calls$/, handle: activeCalls },
      { method: 'GET', pattern: /^\/v2\/call_events$/, handle: listCallEvents },
      { method: 'GET', pattern: /^\/v2\/recordings$/, handle: listRecordings },
      { method: 'GET', pattern: /^\/v2\/recordings\/(?<id>[^/]+)$/, handle: getRecording },
      { method: 'GET', pattern: /^\/media\/telnyx\/(?<id>[^/]+)\.wav$/, handle: download, media: true },
      { method: 'GET', pattern: /^\/v2\/ai\/conversations$/, handle: listConversations },
      { method: 'GET', pattern: /^\/v2\/ai\/conversations\/(?<id>[^/]+)\/messages$/, handle: listMessages },
    ],
  };
}

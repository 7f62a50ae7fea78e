// Vonage as the adapter uses it: Voice API calls (create, list, fetch, hang up, transfer to an
// inline NCCO) with advanced machine detection, the Conversation API's event log, and recording
// files. Requests authenticate with an application JWT (RS256; the emulator reads application_id
// from it, it has no registry of public keys to check the signature against); events go out as
// signed webhooks (HS256 with the signature secret).
import { randomUUID } from 'node:crypto';
import { newCall, type ProviderContext } from './context';
import type { CallbackQueue } from './delivery';
import {
  bearerToken,
  isoSeconds,
  isRecord,
  json,
  noContent,
  parseJsonBody,
  wav,
  type ApiRequest,
  type ApiResponse,
  type Route,
} from './http';
import { planCall, type PlannedDetection, type PlannedGreetingEnd } from './scenarios';
import { decodeJwt, vonageWebhookToken } from './signing';
import {
  RECORDING_PROCESSING_SECONDS,
  type CallEndOutcome,
  type EmulatedCall,
  type SpokenUtterance,
} from './simulation';

/** Vonage's limit on a talk action's text (its NCCO reference: up to 1,500 characters). */
const VONAGE_TALK_MAX_CHARS = 1500;

const END_STATUS: Record<CallEndOutcome, string> = {
  completed: 'completed',
  busy: 'busy',
  declined: 'rejected',
  'no-answer': 'timeout',
  failed: 'failed',
  canceled: 'cancelled',
};
const RATE_PER_MINUTE = 0.0127;
const NUMBER = /^[1-9]\d{6,14}$/;
const AMD_BEHAVIORS = new Set(['continue', 'hangup']);
/**
 * `default` (asynchronous) and `detect_beep` also report the end of a machine's greeting (sub_state
 * beep_start or beep_timeout); `detect` only names a person or a machine.
 */
const AMD_MODES = new Set(['default', 'detect', 'detect_beep']);
/** Seconds detect_beep listens for a beep (45 when absent; greetingEnded says why it is not waited out). */
const BEEP_TIMEOUT = { min: 45, max: 120 };
/** `ringing_timer`: how long an unanswered call rings. */
const RING_TIMEOUT = { default: 60, min: 1, max: 120 };
/** `length_timer`: how long the call may last from answer (its SDKs document up to 24 hours). */
const TIME_LIMIT = { default: 7_200, min: 1, max: 86_400 };

interface InvalidParameter {
  name: string;
  reason: string;
}

/** advanced_machine_detection: `hangup` has Vonage end the call itself when a machine answers. */
interface VonageMachineDetection {
  behavior: string;
  mode: string;
}

interface ConversationEvent {
  id: number;
  type: string;
  from: string;
  body: Record<string, unknown>;
  timestamp: string;
}

interface VonageCall {
  call: EmulatedCall;
  applicationId: string;
  eventUrl?: string;
  conversationUuid: string;
  memberId: string;
  events: ConversationEvent[];
  queue: CallbackQueue;
  recordingId?: string;
  amd?: VonageMachineDetection;
}

function problem(status: number, title: string, detail: string, extra: Record<string, unknown> = {}): ApiResponse {
  const slug = title.toLowerCase().replace(/\s+/g, '-');
  return json(status, {
    type: `https://developer.nexmo.com/api-errors#${slug}`,
    title,
    detail,
    instance: randomUUID(),
    ...extra,
  });
}

/** The dial's advanced_machine_detection; what is wrong with it joins `invalid`. */
function machineDetectionOf(value: unknown, invalid: InvalidParameter[]): VonageMachineDetection | undefined {
  const field = 'advanced_machine_detection';
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    invalid.push({ name: field, reason: 'must be an object' });
    return undefined;
  }
  const { behavior = 'continue', mode = 'detect', beep_timeout: beepTimeout } = value;
  if (typeof behavior !== 'string' || !AMD_BEHAVIORS.has(behavior)) {
    invalid.push({ name: `${field}.behavior`, reason: 'must be continue or hangup' });
  }
  if (typeof mode !== 'string' || !AMD_MODES.has(mode)) {
    invalid.push({ name: `${field}.mode`, reason: 'must be default, detect or detect_beep' });
  }
  const timeoutValid =
    beepTimeout === undefined ||
    (typeof beepTimeout === 'number' &&
      Number.isInteger(beepTimeout) &&
      beepTimeout >= BEEP_TIMEOUT.min &&
      beepTimeout <= BEEP_TIMEOUT.max);
  if (!timeoutValid) {
    invalid.push({
      name: `${field}.beep_timeout`,
      reason: `must be an integer from ${BEEP_TIMEOUT.min} to ${BEEP_TIMEOUT.max}`,
    });
  }
  return { behavior: String(behavior), mode: String(mode) };
}

/** The talk actions of an NCCO whose text is longer than Vonage speaks, as Vonage names them. */
function overlongTalks(ncco: unknown[], prefix: string): InvalidParameter[] {
  return ncco.flatMap((action, at) =>
    isRecord(action) &&
    action.action === 'talk' &&
    typeof action.text === 'string' &&
    [...action.text].length > VONAGE_TALK_MAX_CHARS
      ? [{ name: `${prefix}[${at}].text`, reason: `must be at most ${VONAGE_TALK_MAX_CHARS} characters` }]
      : [],
  );
}

/** What an NCCO's talk actions say, in order. */
function talkTextOf(ncco: unknown[]): string {
  return ncco
    .filter(isRecord)
    .filter((a) => a.action === 'talk' && typeof a.text === 'string')
    .map((a) => String(a.text))
    .join(' ');
}

export function createVonageEmulator(
  ctx: ProviderContext,
  signatureSecret: string,
): { routes: Route[]; unavailable(): ApiResponse } {
  const calls = new Map<string, VonageCall>();
  const conversations = new Map<string, VonageCall>();
  const files = new Map<string, VonageCall>();

  /** The application a request's JWT names, or the 401 to answer. */
  const application = (req: ApiRequest): string | ApiResponse => {
    const token = bearerToken(req);
    const decoded = token ? decodeJwt(token) : null;
    const applicationId = decoded?.claims.application_id;
    if (!decoded || decoded.header.alg !== 'RS256' || typeof applicationId !== 'string' || applicationId.length === 0) {
      return problem(401, 'Unauthorized', 'You did not provide correct credentials.');
    }
    const exp = decoded.claims.exp;
    if (typeof exp === 'number' && exp * 1000 < Date.now()) {
      return problem(401, 'Unauthorized', 'The JWT has expired.');
    }
    return applicationId;
  };

  const authenticated = (
    handler: (
      req: ApiRequest,
      params: Record<string, string>,
      applicationId: string,
    ) => ApiResponse | Promise<ApiResponse>,
  ): Route['handle'] => {
    return (req, params) => {
      const applicationId = application(req);
      return typeof applicationId === 'string' ? handler(req, params, applicationId) : applicationId;
    };
  };

  const owned = (applicationId: string, uuid: string): VonageCall | undefined => {
    const entry = calls.get(uuid);
    return entry?.applicationId === applicationId ? entry : undefined;
  };

  const status = (entry: VonageCall): string => {
    const { call } = entry;
    if (call.state === 'ended') return END_STATUS[call.end?.outcome ?? 'completed'];
    if (call.state === 'answered') return 'answered';
    return call.state === 'ringing' ? 'ringing' : 'started';
  };

  const callResource = (entry: VonageCall): Record<string, unknown> => {
    const { call } = entry;
    const minutes = Math.ceil((call.talkSeconds ?? 0) / 60);
    return {
      _links: { self: { href: `/v1/calls/${call.id}` } },
      uuid: call.id,
      conversation_uuid: entry.conversationUuid,
      to: { type: 'phone', number: call.to },
      from: { type: 'phone', number: call.from },
      status: status(entry),
      direction: 'outbound',
      rate: RATE_PER_MINUTE.toFixed(8),
      price: (minutes * RATE_PER_MINUTE).toFixed(8),
      duration: String(Math.round(call.talkSeconds ?? 0)),
      start_time: call.answeredAt ? isoSeconds(call.answeredAt) : null,
      end_time: call.endedAt ? isoSeconds(call.endedAt) : null,
      network: '65512',
    };
  };

  /** An entry in the conversation's event log (the Conversation API). */
  const logEvent = (entry: VonageCall, type: string, body: Record<string, unknown>): void => {
    entry.events.push({
      id: entry.events.length + 1,
      type,
      from: entry.memberId,
      body,
      timestamp: new Date().toISOString(),
    });
  };

  /** A webhook to event_url, signed as Vonage's signed webhooks are. */
  const webhook = (entry: VonageCall, label: string, payload: Record<string, unknown>): void => {
    const url = entry.eventUrl;
    if (!url) return;
    const body = JSON.stringify(payload);
    entry.queue.push({
      event: `vonage ${label}`,
      url,
      build: () => ({
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Bearer ${vonageWebhookToken(signatureSecret, body, entry.applicationId)}`,
        },
        body,
      }),
    });
  };

  /** A call event: its status word (the call's own, or a machine detection verdict). */
  const statusEvent = (entry: VonageCall, extra: Record<string, unknown> = {}, value = status(entry)): void => {
    const { call } = entry;
    webhook(entry, value, {
      from: call.from,
      to: call.to,
      uuid: call.id,
      conversation_uuid: entry.conversationUuid,
      status: value,
      direction: 'outbound',
      timestamp: new Date().toISOString(),
      ...extra,
    });
  };

  const observer = (entry: VonageCall) => ({
    initiated: () => statusEvent(entry),
    ringing: () => statusEvent(entry),
    answered: (call: EmulatedCall) => {
      statusEvent(entry, { start_time: isoSeconds(call.answeredAt ?? new Date()) });
      if (call.record) logEvent(entry, 'audio:record', { format: 'wav', channels: 1 });
    },
    spoke: (_call: EmulatedCall, utterance: SpokenUtterance) => {
      if (utterance.speaker === 'agent') {
        logEvent(entry, 'audio:say', {
          text: utterance.text,
          language: 'en-US',
          style: 0,
          level: 0,
          loop: 1,
          queue: true,
          ssml: false,
        });
      } else {
        logEvent(entry, 'audio:asr:done', { asr: { results: [{ text: utterance.text, confidence: 0.93 }] } });
      }
    },
    machineDetected: (call: EmulatedCall, { result }: PlannedDetection) => {
      // Vonage tells a person from a machine only: a fax is a machine, a silent line a person.
      const machine = result === 'machine' || result === 'fax';
      statusEvent(entry, {}, machine ? 'machine' : 'human');
      if (machine && entry.amd?.behavior === 'hangup') ctx.simulator.hangUp(call);
    },
    // A greeting followed by silence is reported as beep_timeout at once, not beep_timeout seconds
    // after the verdict: an emulated machine would have given up by then.
    greetingEnded: (_call: EmulatedCall, { beep }: PlannedGreetingEnd) => {
      if (entry.amd?.mode === 'detect') return;
      statusEvent(entry, { sub_state: beep ? 'beep_start' : 'beep_timeout' }, 'machine');
    },
    // A transfer's NCCO ends the call when it runs out: nothing to tell.
    spoken: () => undefined,
    ended: (call: EmulatedCall) => {
      const outcome = call.end?.outcome ?? 'completed';
      const times = {
        ...(call.answeredAt ? { start_time: isoSeconds(call.answeredAt) } : {}),
        end_time: isoSeconds(call.endedAt ?? new Date()),
      };
      const billing =
        outcome === 'completed'
          ? { duration: String(Math.round(call.talkSeconds ?? 0)), rate: RATE_PER_MINUTE.toFixed(8), network: '65512' }
          : {};
      statusEvent(entry, { ...times, ...billing });
      const recording = call.recording;
      if (!recording) return;
      // Processed after the hang-up: in the conversation's events, and its webhook sent, seconds later.
      ctx.simulator.afterCall(RECORDING_PROCESSING_SECONDS, () => {
        const recordingId = randomUUID();
        entry.recordingId = recordingId;
        files.set(recordingId, entry);
        logEvent(entry, 'audio:record:done', {
          destination_url: `${ctx.publicUrl()}/v1/files/${recordingId}`,
          format: 'wav',
          recording_id: recordingId,
          size: recording.sizeBytes,
          start_time: recording.startedAt.toISOString(),
          end_time: recording.endedAt.toISOString(),
        });
        webhook(entry, 'record', {
          start_time: isoSeconds(recording.startedAt),
          end_time: isoSeconds(recording.endedAt),
          recording_url: `${ctx.publicUrl()}/v1/files/${recordingId}`,
          recording_uuid: recordingId,
          size: recording.sizeBytes,
          conversation_uuid: entry.conversationUuid,
          timestamp: new Date().toISOString(),
        });
      });
    },
  });

  const createCall: Route['handle'] = authenticated((req, _params, applicationId) => {
    let body: unknown;
    try {
      body = parseJsonBody(req);
    } catch {
      return problem(400, 'Bad Request', 'The request body is not valid JSON.');
    }
    if (!isRecord(body)) return problem(400, 'Bad Request', 'The request body must be a JSON object.');
    const to = Array.isArray(body.to) && isRecord(body.to[0]) ? body.to[0] : undefined;
    const from = isRecord(body.from) ? body.from : undefined;
    const invalid: InvalidParameter[] = [];
    if (!to || to.type !== 'phone' || typeof to.number !== 'string')
      invalid.push({ name: 'to', reason: 'must be a phone endpoint' });
    if (!from || from.type !== 'phone' || typeof from.number !== 'string' || !NUMBER.test(from.number)) {
      invalid.push({ name: 'from', reason: 'must be a phone endpoint with an E.164 number (no +)' });
    }
    if (!Array.isArray(body.ncco))
      invalid.push({ name: 'ncco', reason: 'the emulator needs an inline NCCO (answer_url is not supported)' });
    else invalid.push(...overlongTalks(body.ncco, 'ncco'));
    const eventUrl =
      Array.isArray(body.event_url) && typeof body.event_url[0] === 'string' ? body.event_url[0] : undefined;
    if (body.event_url !== undefined && !eventUrl)
      invalid.push({ name: 'event_url', reason: 'must be an array of one URL' });
    if (body.event_method !== undefined && body.event_method !== 'POST') {
      invalid.push({ name: 'event_method', reason: 'the emulator sends events with POST only' });
    }
    const amd = machineDetectionOf(body.advanced_machine_detection, invalid);
    const { ringing_timer: ringingTimer = RING_TIMEOUT.default } = body;
    if (
      typeof ringingTimer !== 'number' ||
      !Number.isInteger(ringingTimer) ||
      ringingTimer < RING_TIMEOUT.min ||
      ringingTimer > RING_TIMEOUT.max
    ) {
      invalid.push({
        name: 'ringing_timer',
        reason: `must be an integer from ${RING_TIMEOUT.min} to ${RING_TIMEOUT.max}`,
      });
    }
    const { length_timer: lengthTimer = TIME_LIMIT.default } = body;
    if (
      typeof lengthTimer !== 'number' ||
      !Number.isInteger(lengthTimer) ||
      lengthTimer < TIME_LIMIT.min ||
      lengthTimer > TIME_LIMIT.max
    ) {
      invalid.push({ name: 'length_timer', reason: `must be an integer from ${TIME_LIMIT.min} to ${TIME_LIMIT.max}` });
    }
    if (invalid.length > 0)
      return problem(400, 'Bad Request', 'The request failed due to validation errors', {
        invalid_parameters: invalid,
      });

    const number = String(to?.number);
    const ncco = (body.ncco as unknown[]).filter(isRecord);
    const plan = planCall({
      to: number,
      openingLine: talkTextOf(ncco),
      detectMachines: amd !== undefined,
      // `default` runs the call plan at answer; the other modes hold it until the verdict.
      detectionHoldsCallPlan: amd !== undefined && amd.mode !== 'default',
      ringTimeoutSeconds: ringingTimer as number,
    });
    if (!NUMBER.test(number) || plan.outcome === 'refused') {
      return problem(400, 'Bad Request', 'The request failed due to validation errors', {
        invalid_parameters: [{ name: 'to[0].number', reason: 'is not a valid, reachable phone number' }],
      });
    }
    // Over the account's calls per second, Vonage refuses the dial.
    const refused = ctx.dialRate.refusal('vonage', applicationId);
    if (refused) {
      const answer = problem(429, 'Too Many Requests', 'You have exceeded the rate limit for creating calls.');
      return {
        ...answer,
        headers: { ...answer.headers, 'Retry-After': String(Math.ceil(refused.retryAfterMs / 1000)) },
      };
    }
    const call = newCall('vonage', {
      id: randomUUID(),
      account: applicationId,
      to: number,
      from: String(from?.number),
      record: ncco.some((a) => a.action === 'record'),
      plan,
      timeLimitSeconds: lengthTimer as number,
      machineDetection: amd?.mode ?? null,
      callbackUrl: eventUrl,
    });
    const entry: VonageCall = {
      call,
      applicationId,
      eventUrl,
      conversationUuid: `CON-${randomUUID()}`,
      memberId: `MEM-${randomUUID()}`,
      events: [],
      queue: ctx.newQueue(),
      amd,
    };
    calls.set(call.id, entry);
    conversations.set(entry.conversationUuid, entry);
    ctx.dialled(call);
    ctx.simulator.start(call, observer(entry));
    return json(201, {
      uuid: call.id,
      status: 'started',
      direction: 'outbound',
      conversation_uuid: entry.conversationUuid,
    });
  });

  const listCalls: Route['handle'] = authenticated((req, _params, applicationId) => {
    const q = req.query;
    const dateStart = Date.parse(q.get('date_start') ?? '');
    const dateEnd = Date.parse(q.get('date_end') ?? '');
    const pageSize = Math.min(Math.max(Number(q.get('page_size') ?? 10) || 10, 1), 100);
    const recordIndex = Math.max(Number(q.get('record_index') ?? 0) || 0, 0);
    const found = [...calls.values()]
      .filter((e) => e.applicationId === applicationId)
      .filter((e) => Number.isNaN(dateStart) || e.call.createdAt.getTime() >= dateStart)
      .filter((e) => Number.isNaN(dateEnd) || e.call.createdAt.getTime() <= dateEnd)
      .filter((e) => !q.get('conversation_uuid') || e.conversationUuid === q.get('conversation_uuid'))
      .filter((e) => !q.get('status') || status(e) === q.get('status'));
    if (q.get('order') === 'desc') found.reverse();
    const pageItems = found.slice(recordIndex, recordIndex + pageSize);
    return json(200, {
      count: found.length,
      page_size: pageSize,
      record_index: recordIndex,
      _links: { self: { href: `/v1/calls?page_size=${pageSize}&record_index=${recordIndex}` } },
      _embedded: { calls: pageItems.map(callResource) },
    });
  });

  const fetchCall: Route['handle'] = authenticated((_req, params, applicationId) => {
    const entry = owned(applicationId, params.uuid);
    return entry ? json(200, callResource(entry)) : problem(404, 'Not Found', `Call ${params.uuid} was not found.`);
  });

  /** A transfer to an inline NCCO: its talk actions are said, then the NCCO runs out and the call ends. */
  const transfer = (entry: VonageCall, destination: unknown): ApiResponse => {
    if (!isRecord(destination) || destination.type !== 'ncco' || !Array.isArray(destination.ncco)) {
      return problem(400, 'Bad Request', 'The request failed due to validation errors', {
        invalid_parameters: [{ name: 'destination', reason: 'the emulator transfers only to an inline NCCO' }],
      });
    }
    const overlong = overlongTalks(destination.ncco, 'destination.ncco');
    if (overlong.length > 0)
      return problem(400, 'Bad Request', 'The request failed due to validation errors', {
        invalid_parameters: overlong,
      });
    const text = talkTextOf(destination.ncco);
    const { call } = entry;
    const accepted =
      call.state === 'answered' &&
      (text ? ctx.simulator.speakAndThen(call, text, 'hang-up') : ctx.simulator.hangUp(call));
    if (!accepted) return problem(400, 'Bad Request', `Call ${call.id} is not answered.`);
    return noContent();
  };

  const modifyCall: Route['handle'] = authenticated((req, params, applicationId) => {
    const entry = owned(applicationId, params.uuid);
    if (!entry) return problem(404, 'Not Found', `Call ${params.uuid} was not found.`);
    let body: unknown;
    try {
      body = parseJsonBody(req);
    } catch {
      return problem(400, 'Bad Request', 'The request body is not valid JSON.');
    }
    if (isRecord(body) && body.action === 'transfer') return transfer(entry, body.destination);
    if (!isRecord(body) || body.action !== 'hangup') {
      return problem(400, 'Bad Request', 'The emulator supports only {"action":"hangup"} and transfers to an NCCO.');
    }
    if (!ctx.simulator.hangUp(entry.call)) return problem(400, 'Bad Request', `Call ${params.uuid} is not active.`);
    return noContent();
  });

  const listEvents: Route['handle'] = authenticated((req, params, applicationId) => {
    const entry = conversations.get(params.conversation);
    if (!entry || entry.applicationId !== applicationId)
      return problem(404, 'Not Found', `Conversation ${params.conversation} was not found.`);
    const pageSize = Math.min(Math.max(Number(req.query.get('page_size') ?? 10) || 10, 1), 100);
    const ordered = req.query.get('order') === 'desc' ? [...entry.events].reverse() : entry.events;
    const typed = req.query.get('event_type');
    const matching = typed ? ordered.filter((e) => e.type === typed) : ordered;
    const cursor = req.query.get('cursor');
    const offset = cursor ? Number(Buffer.from(cursor, 'base64url').toString('utf8')) || 0 : 0;
    const items = matching.slice(offset, offset + pageSize);
    const base = `${ctx.publicUrl()}/v1/conversations/${entry.conversationUuid}/events`;
    const link = (at: number): { href: string } => {
      const query = new URLSearchParams(req.query);
      query.set('cursor', Buffer.from(String(at)).toString('base64url'));
      return { href: `${base}?${query}` };
    };
    return json(200, {
      page_size: pageSize,
      _embedded: {
        events: items.map((e) => ({ ...e, _links: { self: { href: `${base}/${e.id}` } } })),
      },
      _links: {
        self: link(offset),
        ...(offset + pageSize < matching.length ? { next: link(offset + pageSize) } : {}),
        ...(offset > 0 ? { prev: link(Math.max(0, offset - pageSize)) } : {}),
      },
    });
  });

  const downloadFile: Route['handle'] = authenticated(async (_req, params, applicationId) => {
    const entry = files.get(params.file);
    if (!entry?.call.recording || entry.applicationId !== applicationId)
      return problem(404, 'Not Found', 'File not found.');
    return wav(await entry.call.recording.wav());
  });

  return {
    unavailable: () => problem(503, 'Service Unavailable', 'The service is temporarily unavailable. Try again later.'),
    routes: [
      { method: 'POST', pattern: /^\/v1\/calls\/?$/, handle: createCall },
      { method: 'GET', pattern: /^\/v1\/calls\/?$/, handle: listCalls },
      { method: 'GET', pattern: /^\/v1\/calls\/(?<uuid>[^/]+)$/, handle: fetchCall },
      { method: 'PUT', pattern: /^\/v1\/calls\/(?<uuid>[^/]+)$/, handle: modifyCall },
      { method: 'GET', pattern: /^\/v1\/conversations\/(?<conversation>[^/]+)\/events$/, handle: listEvents },
      { method: 'GET', pattern: /^\/v1\/files\/(?<file>[^/]+)$/, handle: downloadFile, media: true },
    ],
  };
}

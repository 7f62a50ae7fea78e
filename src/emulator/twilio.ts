// Twilio as the adapter uses it: Calls (create, list, fetch, update with Status or new TwiML),
// asynchronous answering-machine detection (AMD), the Call Events subresource, Recordings with
// their .wav media (twilio-intelligence.ts adds the transcripts). Callbacks are signed with the
// auth token that placed the call.
import { newCall, type ProviderContext } from './context';
import type { CallbackQueue } from './delivery';
import { json, rfc2822, wav, type ApiRequest, type ApiResponse, type Route } from './http';
import {
  digitsOf,
  planCall,
  type MachineDetectionResult,
  type PlannedDetection,
  type PlannedGreetingEnd,
} from './scenarios';
import { opaqueToken, twilioRequestSignature, twilioSid } from './signing';
import { twilioAuthenticated as authenticated, twilioError } from './twilio-auth';
import { createTwilioIntelligenceRoutes } from './twilio-intelligence';
import { RECORDING_PROCESSING_SECONDS, type CallEndOutcome, type EmulatedCall } from './simulation';

/** Twilio's limit on TwiML given in a request (error 32018). */
const TWIML_MAX_CHARS = 4000;
/** `Timeout`: how long an unanswered call rings; any positive whole number, taken up to 600 (error 21208). */
const RING_TIMEOUT = { default: 60, max: 600 };
/**
 * `TimeLimit`: how long the call may last from answer; a whole number from one minute up to the
 * account's limit, four hours unless raised (error 13216).
 */
const TIME_LIMIT = { default: 14_400, min: 60, max: 14_400 };

const API_VERSION = '2010-04-01';
const STATUS_EVENTS = new Set(['initiated', 'ringing', 'answered', 'completed']);
/**
 * MachineDetection: `Enable` reports the verdict at once; `DetectMessageEnd` reports a machine
 * only when its greeting is over (machine_end_*), when a message can be left.
 */
const AMD_MODES = new Set(['Enable', 'DetectMessageEnd']);
const ANSWERED_BY: Record<MachineDetectionResult, string> = {
  human: 'human',
  machine: 'machine_start',
  fax: 'fax',
  unknown: 'unknown',
};
const E164 = /^\+[1-9]\d{6,14}$/;
const END_STATUS: Record<CallEndOutcome, string> = {
  completed: 'completed',
  busy: 'busy',
  // Twilio reports a refused call as busy; its SipResponseCode says Decline.
  declined: 'busy',
  'no-answer': 'no-answer',
  failed: 'failed',
  canceled: 'canceled',
};
const END_SIP_CODE: Partial<Record<CallEndOutcome, string>> = {
  busy: '486',
  declined: '603',
  'no-answer': '487',
  failed: '500',
  canceled: '487',
};

interface TwilioCallEvent {
  request: { method: string; url: string; parameters: Record<string, string> };
  response: {
    response_code: number | null;
    request_duration: number;
    content_type: string | null;
    response_body: string | null;
    date_created: string;
  };
}

export interface TwilioCall {
  call: EmulatedCall;
  accountSid: string;
  authToken: string;
  statusCallback?: string;
  statusEvents: Set<string>;
  /** Asynchronous AMD: its mode, and where its verdict goes (Twilio only warns when nowhere). */
  amd?: { mode: string; callback?: string };
  /** The AnsweredBy AMD reported (the call's answered_by). */
  answeredBy: string | null;
  events: TwilioCallEvent[];
  sequence: number;
  queue: CallbackQueue;
  recordingSid?: string;
  /** Listed from the hang-up, `processing` until its media is ready (RECORDING_PROCESSING_SECONDS later). */
  recordingStatus?: 'processing' | 'completed';
  transcriptSid?: string;
  /**
   * `RecordingChannels`: `mono` (Twilio's default) mixes both sides into one channel, so a transcript
   * of the recording has every sentence on channel 1; `dual` records each side on its own. The media
   * is rendered mono either way (the service stores it as it comes).
   */
  recordingChannels: 'mono' | 'dual';
  mediaToken: string;
}

/** Twilio reports request parameters in snake_case: StatusCallbackEvent -> status_callback_event. */
function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** What the TwiML's <Say> verbs speak: the agent's opening line. */
function spokenByTwiml(twiml: string): string {
  return [...twiml.matchAll(/<Say\b[^>]*>([\s\S]*?)<\/Say>/g)].map((m) => unescapeXml(m[1]).trim()).join(' ');
}

type Checked<T> = { ok: true; value: T } | { ok: false; refusal: ApiResponse };

/** The dial's answering-machine detection; the emulator runs it asynchronously only (AsyncAmd). */
function machineDetectionOf(form: URLSearchParams): Checked<TwilioCall['amd']> {
  const mode = form.get('MachineDetection');
  if (mode === null) return { ok: true, value: undefined };
  const refuse = (message: string): Checked<TwilioCall['amd']> => ({
    ok: false,
    refusal: twilioError(400, 21234, message),
  });
  if (!AMD_MODES.has(mode)) {
    return refuse('Invalid Machine Detection configuration value: MachineDetection must be Enable or DetectMessageEnd');
  }
  if (form.get('AsyncAmd') !== 'true') {
    return refuse('The emulator supports only asynchronous machine detection: set AsyncAmd=true');
  }
  const method = form.get('AsyncAmdStatusCallbackMethod');
  if (method !== null && method !== 'POST') {
    return refuse('The emulator sends the AsyncAmdStatusCallback with POST only');
  }
  return { ok: true, value: { mode, callback: form.get('AsyncAmdStatusCallback') ?? undefined } };
}

export function createTwilioEmulator(ctx: ProviderContext): { routes: Route[]; unavailable(): ApiResponse } {
  const calls = new Map<string, TwilioCall>();
  const bySid = (accountSid: string, sid: string): TwilioCall | undefined => {
    const entry = calls.get(sid);
    return entry?.accountSid === accountSid ? entry : undefined;
  };

  const callUri = (accountSid: string, sid: string): string =>
    `/${API_VERSION}/Accounts/${accountSid}/Calls/${sid}.json`;

  const callResource = (entry: TwilioCall): Record<string, unknown> => {
    const { call, accountSid } = entry;
    const status =
      call.state === 'ended'
        ? END_STATUS[call.end?.outcome ?? 'completed']
        : call.state === 'answered'
          ? 'in-progress'
          : call.state;
    const uri = callUri(accountSid, call.id);
    return {
      sid: call.id,
      account_sid: accountSid,
      parent_call_sid: null,
      to: call.to,
      to_formatted: call.to,
      from: call.from,
      from_formatted: call.from,
      phone_number_sid: null,
      status,
      direction: 'outbound-api',
      answered_by: entry.answeredBy,
      api_version: API_VERSION,
      date_created: rfc2822(call.createdAt),
      date_updated: rfc2822(call.endedAt ?? call.answeredAt ?? call.ringingAt ?? call.createdAt),
      start_time: call.ringingAt ? rfc2822(call.ringingAt) : null,
      end_time: call.endedAt ? rfc2822(call.endedAt) : null,
      duration: call.talkSeconds !== undefined ? String(Math.round(call.talkSeconds)) : null,
      price: null,
      price_unit: 'USD',
      queue_time: '0',
      uri,
      subresource_uris: {
        events: uri.replace(/\.json$/, '/Events.json'),
        recordings: uri.replace(/\.json$/, '/Recordings.json'),
      },
    };
  };

  /** The Call Events subresource: every request about the call, ours and Twilio's callbacks. */
  const logEvent = (entry: TwilioCall, event: TwilioCallEvent): void => {
    entry.events.push(event);
  };

  /** Posts a signed, form-encoded callback; every attempt joins the call's events. */
  const postCallback = (
    entry: TwilioCall,
    label: string,
    url: string,
    idempotencyToken: string,
    params: [string, string][],
  ): void => {
    entry.queue.push({
      event: `twilio ${label}`,
      url,
      build: () => ({
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8',
          'X-Twilio-Signature': twilioRequestSignature(entry.authToken, url, params),
          'I-Twilio-Idempotency-Token': idempotencyToken,
        },
        body: new URLSearchParams(params).toString(),
      }),
      onAttempt: ({ body, status, durationMs }) =>
        logEvent(entry, {
          request: {
            method: 'POST',
            url,
            parameters: Object.fromEntries([...new URLSearchParams(body)].map(([k, v]) => [snake(k), v])),
          },
          response: {
            response_code: status,
            request_duration: durationMs,
            content_type: null,
            response_body: null,
            date_created: rfc2822(new Date()),
          },
        }),
    });
  };

  /** Posts one status callback, if the call asked for this event. */
  const statusCallback = (
    entry: TwilioCall,
    event: string,
    callStatus: string,
    extra: Record<string, string> = {},
  ): void => {
    const url = entry.statusCallback;
    if (!url || !entry.statusEvents.has(event)) return;
    const { call, accountSid } = entry;
    const sequence = String(entry.sequence++);
    postCallback(entry, callStatus, url, `${call.id}-${sequence}`, [
      ['AccountSid', accountSid],
      ['ApiVersion', API_VERSION],
      ['CallSid', call.id],
      ['CallStatus', callStatus],
      ['CallbackSource', 'call-progress-events'],
      ['Called', call.to],
      ['Caller', call.from],
      ['Direction', 'outbound-api'],
      ['From', call.from],
      ['SequenceNumber', sequence],
      ['Timestamp', rfc2822(new Date())],
      ['To', call.to],
      ...Object.entries(extra),
    ]);
  };

  /** The AsyncAmdStatusCallback: the verdict alone (no CallStatus), timed from answer. */
  const amdCallback = (entry: TwilioCall, answeredBy: string, atSeconds: number): void => {
    entry.answeredBy = answeredBy;
    const url = entry.amd?.callback;
    if (!url) return;
    const { call, accountSid } = entry;
    postCallback(entry, `AnsweredBy ${answeredBy}`, url, `${call.id}-amd-${answeredBy}`, [
      ['AccountSid', accountSid],
      ['CallSid', call.id],
      ['AnsweredBy', answeredBy],
      ['MachineDetectionDuration', String(Math.round(atSeconds * 1000))],
    ]);
  };

  const observer = (entry: TwilioCall) => ({
    initiated: () => statusCallback(entry, 'initiated', 'initiated'),
    ringing: () => statusCallback(entry, 'ringing', 'ringing'),
    answered: () => statusCallback(entry, 'answered', 'in-progress'),
    // Voice Intelligence reads what was said from the call once it is over.
    spoke: () => undefined,
    machineDetected: (_call: EmulatedCall, { result, atSeconds }: PlannedDetection) => {
      // DetectMessageEnd names a machine only once its greeting is over.
      if (entry.amd?.mode === 'DetectMessageEnd' && result === 'machine') return;
      amdCallback(entry, ANSWERED_BY[result], atSeconds);
    },
    greetingEnded: (call: EmulatedCall, { beep, atSeconds }: PlannedGreetingEnd) => {
      if (entry.amd?.mode !== 'DetectMessageEnd' || call.answeredBy !== 'machine') return;
      amdCallback(entry, beep ? 'machine_end_beep' : 'machine_end_silence', atSeconds);
    },
    // A <Hangup/> (or the end of the TwiML) ends the call after new TwiML has been said.
    spoken: () => undefined,
    ended: (call: EmulatedCall) => {
      const outcome = call.end?.outcome ?? 'completed';
      if (call.recording) {
        entry.recordingSid = twilioSid('RE');
        // Like Twilio's: listed at once, processing, and its media ready seconds later.
        entry.recordingStatus = 'processing';
        ctx.simulator.afterCall(RECORDING_PROCESSING_SECONDS, () => {
          entry.recordingStatus = 'completed';
        });
      }
      if (call.answeredAt) entry.transcriptSid = twilioSid('GT');
      const talk = call.talkSeconds ?? 0;
      const extra: Record<string, string> = {
        CallDuration: String(Math.round(talk)),
        Duration: String(Math.ceil(talk / 60)),
      };
      const sip = END_SIP_CODE[outcome];
      if (sip) extra.SipResponseCode = sip;
      statusCallback(entry, 'completed', END_STATUS[outcome], extra);
    },
  });

  /** Twilio refuses TwiML given in a request past its 4,000 characters. */
  const twimlTooLarge = () =>
    twilioError(400, 32018, `Twiml size exceeded maximum allowed value of ${TWIML_MAX_CHARS} characters`);

  const createCall: Route['handle'] = authenticated((req, _params, accountSid, authToken) => {
    const form = new URLSearchParams(req.body.toString('utf8'));
    const to = form.get('To') ?? '';
    const from = form.get('From') ?? '';
    const twiml = form.get('Twiml');
    if (!to) return twilioError(400, 21201, "No 'To' number is specified");
    if (!from) return twilioError(400, 21603, "A 'From' phone number is required.");
    if (!twiml && !form.get('Url') && !form.get('ApplicationSid')) {
      return twilioError(400, 21205, 'Url parameter is required.');
    }
    if (twiml && twiml.length > TWIML_MAX_CHARS) return twimlTooLarge();
    const events = form
      .getAll('StatusCallbackEvent')
      .flatMap((v) => v.split(/\s+/))
      .filter((v) => v.length > 0);
    if (events.some((e) => !STATUS_EVENTS.has(e))) return twilioError(400, 21626, "Invalid 'StatusCallbackEvent'");
    const amd = machineDetectionOf(form);
    if (!amd.ok) return amd.refusal;
    const timeout = form.get('Timeout');
    if (timeout !== null && !/^[1-9]\d*$/.test(timeout)) return twilioError(400, 21208, 'Invalid Timeout');
    const timeLimit = form.get('TimeLimit');
    const timeLimitSeconds = timeLimit === null ? TIME_LIMIT.default : Number(timeLimit);
    if (
      timeLimit !== null &&
      (!/^\d+$/.test(timeLimit) || timeLimitSeconds < TIME_LIMIT.min || timeLimitSeconds > TIME_LIMIT.max)
    ) {
      return twilioError(400, 13216, `Invalid TimeLimit value (${timeLimit})`);
    }
    const recordingChannels = form.get('RecordingChannels') === 'dual' ? 'dual' : 'mono';
    const plan = planCall({
      to,
      openingLine: twiml ? spokenByTwiml(twiml) : '',
      detectMachines: amd.value !== undefined,
      ringTimeoutSeconds: timeout === null ? RING_TIMEOUT.default : Math.min(RING_TIMEOUT.max, Number(timeout)),
    });
    if (!E164.test(to) || plan.outcome === 'refused') {
      return twilioError(400, 21211, `Invalid 'To' Phone Number: ${to}`);
    }
    const call = newCall('twilio', {
      id: twilioSid('CA'),
      account: accountSid,
      to,
      from,
      record: form.get('Record') === 'true',
      plan,
      timeLimitSeconds,
      machineDetection: amd.value?.mode ?? null,
      callbackUrl: form.get('StatusCallback'),
    });
    const entry: TwilioCall = {
      call,
      accountSid,
      authToken,
      statusCallback: call.callbackUrl ?? undefined,
      // Without StatusCallbackEvent Twilio reports only the end of the call.
      statusEvents: new Set(events.length > 0 ? events : ['completed']),
      amd: amd.value,
      answeredBy: null,
      events: [],
      sequence: 0,
      queue: ctx.newQueue(),
      recordingChannels,
      mediaToken: opaqueToken(),
    };
    calls.set(call.id, entry);
    ctx.dialled(call);
    const response = callResource(entry);
    // Like Twilio's, the call's Events list only the requests it sends the application (its
    // callbacks), never the API request that created the call.
    // Over the account's calls per second, Twilio queues the call and places it later.
    ctx.simulator.start(call, observer(entry), ctx.dialRate.queueDelayMs('twilio', accountSid));
    return json(201, response);
  });

  const page = <T>(req: ApiRequest, key: string, items: T[], path: string): ApiResponse => {
    const pageSize = Math.min(Math.max(Number(req.query.get('PageSize') ?? 50) || 50, 1), 1000);
    return json(200, {
      [key]: items.slice(0, pageSize),
      page: 0,
      page_size: pageSize,
      start: 0,
      end: Math.max(0, Math.min(items.length, pageSize) - 1),
      first_page_uri: `${path}?PageSize=${pageSize}&Page=0`,
      next_page_uri: null,
      previous_page_uri: null,
      uri: `${path}?PageSize=${pageSize}&Page=0`,
    });
  };

  const listCalls: Route['handle'] = authenticated((req, _params, accountSid) => {
    const to = req.query.get('To');
    const from = req.query.get('From');
    const status = req.query.get('Status');
    const found = [...calls.values()]
      .filter((e) => e.accountSid === accountSid)
      .filter((e) => !to || digitsOf(e.call.to) === digitsOf(to))
      .filter((e) => !from || digitsOf(e.call.from) === digitsOf(from))
      .map(callResource)
      .filter((c) => !status || c.status === status)
      .reverse();
    return page(req, 'calls', found, `/${API_VERSION}/Accounts/${accountSid}/Calls.json`);
  });

  const callNotFound = (accountSid: string, sid: string): ApiResponse =>
    twilioError(404, 20404, `The requested resource ${callUri(accountSid, sid)} was not found`);

  const fetchCall: Route['handle'] = authenticated((_req, params, accountSid) => {
    const entry = bySid(accountSid, params.sid);
    return entry ? json(200, callResource(entry)) : callNotFound(accountSid, params.sid);
  });

  /** New TwiML for a live call: its <Say> text is said, then <Hangup/> (or the TwiML's end) ends the call. */
  const redirect = (entry: TwilioCall, twiml: string): ApiResponse => {
    const text = spokenByTwiml(twiml);
    const { call } = entry;
    const accepted =
      call.state === 'answered' &&
      (text ? ctx.simulator.speakAndThen(call, text, 'hang-up') : ctx.simulator.hangUp(call));
    if (!accepted) return twilioError(400, 21220, 'Call is not in-progress. Cannot redirect.');
    return json(200, callResource(entry));
  };

  const updateCall: Route['handle'] = authenticated((req, params, accountSid) => {
    const entry = bySid(accountSid, params.sid);
    if (!entry) return callNotFound(accountSid, params.sid);
    const form = new URLSearchParams(req.body.toString('utf8'));
    const status = form.get('Status');
    const twiml = form.get('Twiml');
    if (twiml && twiml.length > TWIML_MAX_CHARS) return twimlTooLarge();
    if (status === null && twiml !== null) return redirect(entry, twiml);
    if (status !== 'completed' && status !== 'canceled') {
      return twilioError(400, 21220, 'The emulator supports only Status=completed, Status=canceled or Twiml updates');
    }
    // `canceled` only ends a call that nobody has answered yet; `completed` ends it whatever its state.
    if (status === 'completed' || entry.call.state !== 'answered') ctx.simulator.hangUp(entry.call);
    return json(200, callResource(entry));
  });

  const listEvents: Route['handle'] = authenticated((req, params, accountSid) => {
    const entry = bySid(accountSid, params.sid);
    if (!entry) return callNotFound(accountSid, params.sid);
    return page(req, 'events', entry.events, `/${API_VERSION}/Accounts/${accountSid}/Calls/${params.sid}/Events.json`);
  });

  const recordingResource = (entry: TwilioCall): Record<string, unknown> => {
    const rec = entry.call.recording;
    const uri = `/${API_VERSION}/Accounts/${entry.accountSid}/Recordings/${entry.recordingSid ?? ''}.json`;
    return {
      sid: entry.recordingSid,
      account_sid: entry.accountSid,
      call_sid: entry.call.id,
      conference_sid: null,
      api_version: API_VERSION,
      date_created: rfc2822(rec?.endedAt ?? entry.call.createdAt),
      date_updated: rfc2822(rec?.endedAt ?? entry.call.createdAt),
      start_time: rfc2822(rec?.startedAt ?? entry.call.createdAt),
      duration: String(Math.round(rec?.durationSeconds ?? 0)),
      channels: entry.recordingChannels === 'dual' ? 2 : 1,
      source: 'OutboundAPI',
      status: entry.recordingStatus ?? 'completed',
      track: 'both',
      price: null,
      price_unit: 'USD',
      error_code: null,
      encryption_details: null,
      uri,
      media_url: `${ctx.publicUrl()}${uri.replace(/\.json$/, '')}`,
    };
  };

  const recorded = (accountSid: string): TwilioCall[] =>
    [...calls.values()].filter((e) => e.accountSid === accountSid && e.recordingSid && e.call.recording);

  const listRecordings: Route['handle'] = authenticated((req, _params, accountSid) => {
    const callSid = req.query.get('CallSid');
    const found = recorded(accountSid)
      .filter((e) => !callSid || e.call.id === callSid)
      .map(recordingResource);
    return page(req, 'recordings', found.reverse(), `/${API_VERSION}/Accounts/${accountSid}/Recordings.json`);
  });

  const fetchRecording: Route['handle'] = authenticated(async (_req, params, accountSid) => {
    const entry = recorded(accountSid).find((e) => e.recordingSid === params.sid);
    if (!entry?.call.recording) return twilioError(404, 20404, `Recording ${params.sid} was not found`);
    if (params.ext === '.json') return json(200, recordingResource(entry));
    if (params.ext === '.mp3') return twilioError(404, 20404, 'The emulator serves recordings as WAV only');
    if (entry.recordingStatus === 'processing') return twilioError(404, 20404, `Recording ${params.sid} is processing`);
    // Like Twilio, hand the media off to a pre-signed storage URL.
    const location = `${ctx.publicUrl()}/media/twilio/${entry.recordingSid ?? ''}.wav?Expires=600&Signature=${entry.mediaToken}`;
    return { status: 302, headers: { Location: location } };
  });

  /** The pre-signed media URL: no credentials, the signature in the query string is the key. */
  const downloadMedia: Route['handle'] = async (req, params) => {
    const entry = [...calls.values()].find((e) => e.recordingSid === params.sid);
    if (!entry?.call.recording || req.query.get('Signature') !== entry.mediaToken) {
      return {
        status: 403,
        headers: { 'Content-Type': 'application/xml' },
        body: '<Error><Code>AccessDenied</Code></Error>',
      };
    }
    return wav(await entry.call.recording.wav(), 'audio/x-wav');
  };

  const account = '/2010-04-01/Accounts/(?<account>[^/]+)';
  return {
    unavailable: () => twilioError(503, 20503, 'The requested Twilio Service is temporarily unavailable.'),
    routes: [
      { method: 'POST', pattern: new RegExp(`^${account}/Calls\\.json$`), handle: createCall },
      { method: 'GET', pattern: new RegExp(`^${account}/Calls\\.json$`), handle: listCalls },
      { method: 'GET', pattern: new RegExp(`^${account}/Calls/(?<sid>[^/.]+)\\.json$`), handle: fetchCall },
      { method: 'POST', pattern: new RegExp(`^${account}/Calls/(?<sid>[^/.]+)\\.json$`), handle: updateCall },
      { method: 'GET', pattern: new RegExp(`^${account}/Calls/(?<sid>[^/.]+)/Events\\.json$`), handle: listEvents },
      { method: 'GET', pattern: new RegExp(`^${account}/Recordings\\.json$`), handle: listRecordings },
      {
        method: 'GET',
        pattern: new RegExp(`^${account}/Recordings/(?<sid>[^/.]+)(?<ext>\\.json|\\.wav|\\.mp3)?$`),
        handle: fetchRecording,
      },
      { method: 'GET', pattern: /^\/media\/twilio\/(?<sid>[^/.]+)\.wav$/, handle: downloadMedia, media: true },
      ...createTwilioIntelligenceRoutes(ctx, (accountSid) =>
        [...calls.values()].filter((e) => e.accountSid === accountSid && e.transcriptSid !== undefined),
      ),
    ],
  };
}

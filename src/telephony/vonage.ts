// Vonage Voice API (v1 calls) with the Conversation API's event log for recordings and
// transcripts. A small client over fetch (jose signs and verifies the JWTs): @vonage/server-sdk
// pulls in a dozen packages for what is a handful of requests.
import { createHash } from 'node:crypto';
import type { AnsweredBy } from '../contracts/machine-detection';
import type { ProviderEvent, ProviderEventKind } from '../contracts/providers';
import {
  callIdFromUrl,
  dialFailure,
  headerValue,
  isSuccess,
  joinUrl,
  parseJson,
  send,
  unexpected,
  withCallId,
  type ProviderResponse,
} from './http';
import { signApplicationJwt, verifyHs256 } from './jwt';
import { eventsOfPolledState, isoOrNull } from './polled-state';
import {
  CallbackSignatureError,
  ProviderRejectedError,
  spokenLengthProblem,
  type InboundCallback,
  type PlaceCallRequest,
  type PlacedCallSearch,
  type PlacedCall,
  type TelephonyProvider,
  type Utterance,
  type VonageCredentials,
  ringTimeoutFor,
  timeLimitFor,
} from './provider';

/** Vonage's call status words, mapped in this one place; null means nothing changes. */
const CALL_STATUS: Record<string, ProviderEventKind | null> = {
  started: null,
  ringing: 'ringing',
  answered: 'answered',
  // Advanced machine detection's verdicts (the call is already answered); see machineEvent.
  machine: 'machine-detected',
  human: 'machine-detected',
  completed: 'completed',
  busy: 'busy',
  timeout: 'no-answer',
  unanswered: 'no-answer',
  failed: 'failed',
  // "The call attempt was rejected by the destination": the callee refused it.
  rejected: 'declined',
  // Ended before anyone answered because the call was cancelled (by us or the console).
  cancelled: 'failed',
};
const ENDED = new Set(['completed', 'busy', 'timeout', 'unanswered', 'failed', 'rejected', 'cancelled']);
/**
 * In `detect_beep` mode a machine's verdict comes again with a sub_state when its greeting is over:
 * `beep_start` (the beep sounds) or `beep_timeout` (no beep within beep_timeout seconds).
 */
const GREETING_ENDED_SUB_STATES = new Set(['beep_start', 'beep_timeout']);
/** Seconds Vonage listens for the beep after deciding a machine answered (its range is 45-120). */
const BEEP_TIMEOUT_SECONDS = 45;

/** Signed webhooks older than this are refused, so a captured one cannot be replayed later. */
const MAX_WEBHOOK_AGE_SECONDS = 5 * 60;
/** Our clock against Vonage's, when comparing a call's start with the dial's scheduling. */
const CLOCK_SKEW_MS = 60_000;
const FIND_MAX_PAGES = 5;
const PAGE_SIZE = 100;

interface VonageEndpoint {
  type?: string;
  number?: string;
}
interface VonageCall {
  uuid: string;
  conversation_uuid: string;
  status: string;
  direction?: string;
  to?: VonageEndpoint;
  from?: VonageEndpoint;
  start_time?: string | null;
  end_time?: string | null;
}
interface VonageCallPage {
  _embedded?: { calls?: VonageCall[] };
}
interface ConversationEvent {
  id: number | string;
  type: string;
  timestamp: string;
  body?: Record<string, unknown>;
}
interface ConversationEventPage {
  _embedded?: { events?: ConversationEvent[] };
  _links?: { next?: { href?: string } };
}
interface VonageError {
  title?: string;
  detail?: string;
  invalid_parameters?: { name?: string; reason?: string }[];
}

/** Vonage takes numbers in E.164 without the leading `+`. */
function digits(number: string): string {
  return number.replace(/\D/g, '');
}

function stringField(body: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = body?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** What the human said, from an `audio:asr:done` event body: its best recognition result. */
function recognisedText(body: Record<string, unknown> | undefined): string | undefined {
  const asr = body?.asr;
  if (asr === null || typeof asr !== 'object') return undefined;
  const results = (asr as { results?: unknown }).results;
  if (!Array.isArray(results) || results.length === 0) return undefined;
  const best: unknown = results[0];
  return best !== null && typeof best === 'object' ? stringField(best as Record<string, unknown>, 'text') : undefined;
}

/** Vonage speaks at most this many characters in one `talk` action (its NCCO reference). */
export const VONAGE_TALK_MAX_CHARS = 1500;

/** Why Vonage would refuse to speak `text` in one talk action, or null. */
export function vonageSpeechProblem(text: string): string | null {
  return spokenLengthProblem('vonage', text, VONAGE_TALK_MAX_CHARS, 'talk action');
}

export function createVonageProvider(credentials: VonageCredentials, baseUrl: string): TelephonyProvider {
  const { applicationId, privateKey, signatureSecret } = credentials;
  const apiOrigin = new URL(baseUrl).origin;

  const request = async (url: string, init: RequestInit = {}): Promise<ProviderResponse> =>
    send('vonage', url, {
      ...init,
      headers: { ...init.headers, Authorization: `Bearer ${await signApplicationJwt(applicationId, privateKey)}` },
    });

  const getJson = async <T>(what: string, url: string): Promise<T> => {
    const res = await request(url, { headers: { Accept: 'application/json' } });
    if (!isSuccess(res)) throw unexpected('vonage', what, res);
    return parseJson<T>('vonage', res);
  };

  const getCall = (uuid: string): Promise<VonageCall> =>
    getJson<VonageCall>('call fetch', joinUrl(baseUrl, `/v1/calls/${encodeURIComponent(uuid)}`));

  /** PUT on a live call; a refusal (4xx) for a call that has already ended is not an error. */
  const modifyCall = async (what: string, uuid: string, body: Record<string, unknown>): Promise<void> => {
    const res = await request(joinUrl(baseUrl, `/v1/calls/${encodeURIComponent(uuid)}`), {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (isSuccess(res)) return;
    if (res.status >= 400 && res.status < 500 && ENDED.has((await getCall(uuid)).status)) return;
    throw unexpected('vonage', what, res);
  };

  /** A pagination link re-rooted on our configured base, whatever host it names. */
  const rebase = (href: string): string => {
    const link = new URL(href, baseUrl);
    return joinUrl(baseUrl, link.pathname.slice(Math.max(0, link.pathname.indexOf('/v1/'))) + link.search);
  };

  /** The conversation's whole event log, oldest first. */
  const conversationEvents = async (conversationUuid: string): Promise<ConversationEvent[]> => {
    const events: ConversationEvent[] = [];
    const query = new URLSearchParams({ order: 'asc', page_size: String(PAGE_SIZE) });
    let url: string | undefined = joinUrl(
      baseUrl,
      `/v1/conversations/${encodeURIComponent(conversationUuid)}/events?${query}`,
    );
    while (url) {
      const page: ConversationEventPage = await getJson('conversation events', url);
      events.push(...(page._embedded?.events ?? []));
      const next = page._links?.next?.href;
      url = next ? rebase(next) : undefined;
    }
    return events;
  };

  /** The JWT goes only to Vonage itself: a recording URL elsewhere is not fetched with it. */
  const isVonageUrl = (url: string): boolean => {
    const { origin, hostname, protocol } = new URL(url);
    return origin === apiOrigin || (protocol === 'https:' && /(^|\.)(nexmo|vonage)\.com$/.test(hostname));
  };

  return {
    name: 'vonage',

    async placeCall(req: PlaceCallRequest): Promise<PlacedCall> {
      // Checked at create too (prepare-calls.ts); a template changed since is refused here, ringing nobody.
      const tooLong = vonageSpeechProblem(req.script.openingLine);
      if (tooLong) throw new ProviderRejectedError(`the opening line ${tooLong}: not dialled`);
      const ncco: Record<string, unknown>[] = [];
      // Recording first, so it runs from answer to hang-up beside everything that follows.
      if (req.record) ncco.push({ action: 'record', format: 'wav', beepStart: false });
      ncco.push({ action: 'talk', text: req.script.openingLine, language: 'en-US' });
      const ringTimeout = ringTimeoutFor('vonage', req);
      const timeLimit = timeLimitFor('vonage', req);
      const res = await request(joinUrl(baseUrl, '/v1/calls'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({
          to: [{ type: 'phone', number: digits(req.to) }],
          from: { type: 'phone', number: digits(req.from) },
          ncco,
          // Carries our call id: events route by it.
          event_url: [withCallId(req.statusCallbackUrl, req.callId)],
          event_method: 'POST',
          ...(ringTimeout !== undefined ? { ringing_timer: ringTimeout } : {}),
          ...(timeLimit !== undefined ? { length_timer: timeLimit } : {}),
          // Mode `default` is the asynchronous one (with beep detection): the call plan runs at answer,
          // so a person hears the agent at once; `detect` and `detect_beep` hold it, silent, until the
          // verdict. `continue`: we, not Vonage, hang up on a machine or leave it a message.
          ...(req.machineDetection
            ? {
                advanced_machine_detection: {
                  behavior: 'continue',
                  mode: 'default',
                  beep_timeout: BEEP_TIMEOUT_SECONDS,
                },
              }
            : {}),
        }),
      });
      if (!isSuccess(res)) {
        let error: VonageError = {};
        try {
          error = parseJson<VonageError>('vonage', res);
        } catch {
          // a body that is not JSON says nothing about the number
        }
        const aboutDestination = (error.invalid_parameters ?? []).some((p) => /^to\b|^to\[/.test(p.name ?? ''));
        throw dialFailure('vonage', res, aboutDestination);
      }
      return { providerCallId: parseJson<{ uuid: string }>('vonage', res).uuid };
    },

    /**
     * Vonage keeps no client data on a call and its call list filters only by time, status and
     * conversation, so the call id we put in event_url cannot be searched for. We take the newest
     * outbound call between the same two numbers placed since the dial was first scheduled (its
     * tries go on while our store is down, so that may be long ago) that is not another of ours.
     */
    async findPlacedCall(req: PlaceCallRequest, search: PlacedCallSearch): Promise<PlacedCall | null> {
      const to = digits(req.to);
      const from = digits(req.from);
      const since = search.since.getTime() - CLOCK_SKEW_MS;
      const dateStart = new Date(since).toISOString().replace(/\.\d{3}Z$/, 'Z');
      for (let page = 0; page < FIND_MAX_PAGES; page += 1) {
        const query = new URLSearchParams({
          date_start: dateStart,
          order: 'desc',
          page_size: String(PAGE_SIZE),
          record_index: String(page * PAGE_SIZE),
        });
        const { _embedded } = await getJson<VonageCallPage>('call list', joinUrl(baseUrl, `/v1/calls?${query}`));
        const calls = _embedded?.calls ?? [];
        for (const c of calls) {
          if (c.direction === 'inbound' || digits(c.to?.number ?? '') !== to || digits(c.from?.number ?? '') !== from)
            continue;
          if (!(await search.setAside(c.uuid))) return { providerCallId: c.uuid };
        }
        if (calls.length < PAGE_SIZE) break;
      }
      return null;
    },

    async hangUp(providerCallId: string): Promise<void> {
      await modifyCall('hang-up', providerCallId, { action: 'hangup' });
    },

    /** The call's status; a machine's or a person's verdict means only "answered" here. */
    async pollCallEvents({ callId, providerCallId }) {
      const call = await getCall(providerCallId);
      const mapped = CALL_STATUS[call.status] ?? null;
      return eventsOfPolledState(
        { callId, provider: 'vonage', providerCallId },
        {
          kind: mapped === 'machine-detected' ? 'answered' : mapped,
          providerStatus: call.status,
          answeredAt: isoOrNull(call.start_time),
          endedAt: isoOrNull(call.end_time),
        },
      );
    },

    /** Transfers the live call to an NCCO that speaks the message; the call ends when the NCCO does. */
    async leaveMessage({ providerCallId, message }): Promise<void> {
      const tooLong = vonageSpeechProblem(message);
      if (tooLong) throw new ProviderRejectedError(`the voicemail message ${tooLong}`);
      await modifyCall('voicemail message', providerCallId, {
        action: 'transfer',
        destination: { type: 'ncco', ncco: [{ action: 'talk', text: message, language: 'en-US' }] },
      });
    },

    /** The `record` action's file, named by the conversation's `audio:record:done` event. */
    async fetchRecording(providerCallId: string): Promise<Buffer | null> {
      const call = await getCall(providerCallId);
      const events = await conversationEvents(call.conversation_uuid);
      const done = events.find((e) => e.type === 'audio:record:done');
      const url = stringField(done?.body, 'destination_url');
      if (!url) return null;
      if (!isVonageUrl(url)) throw new Error(`vonage recording URL ${new URL(url).origin} is not a Vonage host`);
      const res = await request(url);
      if (!isSuccess(res)) throw unexpected('vonage', 'recording download', res);
      return res.body;
    },

    /**
     * The conversation's event log holds what was said: `audio:say` events for the text our side
     * spoke, `audio:asr:done` for the callee's recognised speech. Offsets count from the call's
     * start_time (when it was answered).
     */
    async fetchTranscript(providerCallId: string): Promise<Utterance[]> {
      const call = await getCall(providerCallId);
      const events = await conversationEvents(call.conversation_uuid);
      const spoken = events
        .map((e) => {
          if (e.type === 'audio:say')
            return { speaker: 'agent' as const, text: stringField(e.body, 'text'), at: e.timestamp };
          if (e.type === 'audio:asr:done')
            return { speaker: 'human' as const, text: recognisedText(e.body), at: e.timestamp };
          return null;
        })
        .filter((u): u is { speaker: 'agent' | 'human'; text: string; at: string } => !!u && !!u.text?.trim());
      const origin = Date.parse(call.start_time ?? spoken[0]?.at ?? '');
      return spoken.map((u) => ({
        speaker: u.speaker,
        text: u.text.trim(),
        offsetSeconds: Number.isNaN(origin) ? 0 : Math.max(0, (Date.parse(u.at) - origin) / 1000),
      }));
    },

    /** Vonage signed webhooks: an HS256 JWT whose payload_hash is the SHA-256 of the body. */
    async parseCallback(callback: InboundCallback): Promise<ProviderEvent[]> {
      const authorization = headerValue(callback.headers, 'authorization') ?? '';
      const match = /^Bearer\s+(\S+)$/i.exec(authorization);
      if (!match) throw new CallbackSignatureError('missing bearer token');
      const claims = await verifyHs256(match[1], signatureSecret);
      const bodyHash = createHash('sha256').update(callback.rawBody).digest('hex');
      if (typeof claims.payload_hash !== 'string' || claims.payload_hash.toLowerCase() !== bodyHash) {
        throw new CallbackSignatureError('payload_hash does not match the body');
      }
      const now = Date.now() / 1000;
      if (typeof claims.iat !== 'number' || now - claims.iat > MAX_WEBHOOK_AGE_SECONDS || claims.iat - now > 60) {
        throw new CallbackSignatureError('signed webhook is stale or from the future');
      }
      if (claims.application_id !== undefined && claims.application_id !== applicationId) {
        throw new CallbackSignatureError('webhook for another application');
      }
      const body = JSON.parse(callback.rawBody.toString('utf8')) as Record<string, unknown>;
      const callId = callIdFromUrl(callback.url);
      if (!callId) throw new Error('vonage event URL lacks callId');
      const status = stringField(body, 'status');
      // Record, input and transfer events carry no status: they change nothing here.
      if (status === undefined) return [];
      if (!(status in CALL_STATUS)) throw new Error(`unknown vonage status ${status}`);
      const kind = CALL_STATUS[status];
      const uuid = stringField(body, 'uuid') ?? stringField(body, 'call_uuid');
      if (kind === null) return [];
      if (!uuid) throw new Error('vonage event lacks uuid');
      const timestamp = Date.parse(stringField(body, 'timestamp') ?? '');
      const event: ProviderEvent = {
        callId,
        provider: 'vonage',
        providerCallId: uuid,
        kind,
        occurredAt: new Date(Number.isNaN(timestamp) ? Date.now() : timestamp).toISOString(),
        providerStatus: status,
      };
      // A completed call's start_time is its answer.
      const startedAt = kind === 'completed' ? isoOrNull(stringField(body, 'start_time') ?? null) : null;
      if (startedAt) event.answeredAt = startedAt;
      if (kind !== 'machine-detected') return [event];
      const answeredBy: AnsweredBy = status === 'human' ? 'human' : 'machine';
      const subState = stringField(body, 'sub_state');
      if (subState === undefined) return [{ ...event, answeredBy }];
      // Other sub-states (e.g. the beep's end) add nothing the call needs.
      if (answeredBy !== 'machine' || !GREETING_ENDED_SUB_STATES.has(subState)) return [];
      return [{ ...event, kind: 'greeting-ended', answeredBy, providerStatus: `${status}:${subState}` }];
    },
  };
}

// Telnyx Call Control v2, with Call Recordings and AI Conversations for capture. A small client
// over fetch (the official SDK adds nothing a dozen requests need).
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
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
  type TelnyxCredentials,
  type Utterance,
  ringTimeoutFor,
  timeLimitFor,
} from './provider';

/**
 * Telnyx event types (and, for call.hangup, its hangup_cause), mapped in this one place; null
 * means nothing changes. Call Control has no ringing event for outbound calls: call.initiated is
 * the call handed to the network, ringing the callee.
 */
const EVENTS: Record<string, ProviderEventKind | null> = {
  'call.initiated': 'ringing',
  'call.answered': 'answered',
  'call.bridged': null,
  'call.recording.saved': null,
  'call.recording.error': null,
  'call.speak.started': null,
  // Ends our voicemail message only when its client_state says so (the opening line's does not).
  'call.speak.ended': null,
  'call.machine.detection.ended': 'machine-detected',
  'call.machine.greeting.ended': 'greeting-ended',
  'call.hangup/normal_clearing': 'completed',
  'call.hangup/time_limit': 'completed',
  'call.hangup/user_busy': 'busy',
  'call.hangup/call_rejected': 'declined',
  'call.hangup/timeout': 'no-answer',
  'call.hangup/no_answer': 'no-answer',
  'call.hangup/not_found': 'failed',
  'call.hangup/originator_cancel': 'failed',
  'call.hangup/unspecified': 'failed',
};
function hangupCause(payload: Record<string, unknown>): string {
  return typeof payload.hangup_cause === 'string' ? payload.hangup_cause : 'unspecified';
}

/** What a call.hangup's cause (and SIP cause: 603 is the callee declining) means for the call. */
function hangupKind(payload: Record<string, unknown>): ProviderEventKind {
  if (payload.sip_hangup_cause === '603') return 'declined';
  return EVENTS[`call.hangup/${hangupCause(payload)}`] ?? UNKNOWN_HANGUP;
}

/** call.machine.detection.ended's result; `not_sure` is treated as a person (never hung up on). */
const DETECTION_RESULT: Record<string, AnsweredBy> = { human: 'human', machine: 'machine', not_sure: 'unknown' };
/**
 * `greeting_end`: the verdict, then call.machine.greeting.ended when the greeting is over, beep or
 * not (`detect_beep` would report only a greeting that ends with a beep).
 */
const AMD_SETTING = { hangUp: 'detect', leaveMessage: 'greeting_end' } as const;
/** A hangup with a cause Telnyx adds later still ends the call. */
const UNKNOWN_HANGUP: ProviderEventKind = 'failed';

const MAX_TIMESTAMP_SKEW_SECONDS = 5 * 60;
const ACTIVE_CALLS_PAGE = 250;
const ACTIVE_CALLS_MAX_PAGES = 20;
const CALL_EVENTS_PAGE = 250;
const CALL_EVENTS_MAX_PAGES = 20;
const MESSAGES_PAGE = 100;

/** What we carry in client_state: Telnyx echoes it on every webhook and in the active-call list. */
export interface TelnyxClientState {
  callId: string;
  openingLine: string;
  /** On our voicemail speak command only: its call.speak.ended is the message left. */
  purpose?: 'voicemail';
}

export function encodeClientState(state: TelnyxClientState): string {
  return Buffer.from(JSON.stringify(state), 'utf8').toString('base64');
}

export function decodeClientState(value: unknown): Partial<TelnyxClientState> | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Partial<TelnyxClientState>) : undefined;
  } catch {
    return undefined;
  }
}

/** The Mission Control public key: base64 of the raw 32 bytes (or SPKI DER, or PEM). */
export function telnyxPublicKey(key: string): KeyObject {
  if (key.includes('-----BEGIN')) return createPublicKey(key);
  const raw = Buffer.from(key, 'base64');
  if (raw.length === 32)
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  return createPublicKey({ key: raw, format: 'der', type: 'spki' });
}

interface TelnyxCall {
  call_control_id: string;
  call_leg_id: string;
  is_alive: boolean;
  client_state?: string | null;
}
/** An entry of the Call Events debugging API; `metadata` carries the raw webhook event. */
interface TelnyxCallEvent {
  name: string;
  event_timestamp?: string | null;
  metadata?: { payload?: Record<string, unknown> } | null;
}
interface TelnyxRecording {
  status?: string;
  download_urls?: { wav?: string; mp3?: string };
}
interface TelnyxMessage {
  role: string;
  text?: string | null;
  sent_at?: string | null;
  created_at?: string | null;
}
interface TelnyxErrorBody {
  errors?: { code?: string; title?: string; detail?: string; source?: { pointer?: string } }[];
}

/** Telnyx speaks at most this many characters in one `speak` command (its Call Control reference). */
export const TELNYX_SPEAK_MAX_CHARS = 3000;

/** Why Telnyx would refuse to speak `text` in one speak command, or null. */
export function telnyxSpeechProblem(text: string): string | null {
  return spokenLengthProblem('telnyx', text, TELNYX_SPEAK_MAX_CHARS, 'speak command');
}

export function createTelnyxProvider(credentials: TelnyxCredentials, baseUrl: string): TelephonyProvider {
  const { apiKey, connectionId } = credentials;
  const publicKey = telnyxPublicKey(credentials.publicKey);
  const url = (path: string): string => joinUrl(baseUrl, `/v2${path}`);

  const request = (target: string, init: RequestInit = {}): Promise<ProviderResponse> =>
    send('telnyx', target, {
      ...init,
      headers: { ...init.headers, Authorization: `Bearer ${apiKey}`, Accept: 'application/json' },
    });

  const getJson = async <T>(what: string, target: string): Promise<T> => {
    const res = await request(target);
    if (!isSuccess(res)) throw unexpected('telnyx', what, res);
    return parseJson<T>('telnyx', res);
  };

  const postJson = (target: string, body: unknown): Promise<ProviderResponse> =>
    request(target, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  /** Call data stays readable for a while after hang-up; a 404 means Telnyx no longer has it. */
  const getCall = async (callControlId: string): Promise<TelnyxCall | null> => {
    const res = await request(url(`/calls/${encodeURIComponent(callControlId)}`));
    if (res.status === 404) return null;
    if (!isSuccess(res)) throw unexpected('telnyx', 'call fetch', res);
    return parseJson<{ data: TelnyxCall }>('telnyx', res).data;
  };

  /**
   * The latest call to `req.to` on this connection whose webhooks carried our call id, and that the
   * search does not set aside, from the Call Events debugging API (ordered by occurred_at; the last
   * 24 hours unless a leg is named).
   */
  const findEndedCall = async (req: PlaceCallRequest, search: PlacedCallSearch): Promise<PlacedCall | null> => {
    const found: string[] = [];
    for (let page = 1; page <= CALL_EVENTS_MAX_PAGES; page += 1) {
      const query = new URLSearchParams({
        'filter[connection_id]': connectionId,
        'filter[to]': req.to,
        'filter[type]': 'webhook',
        'page[size]': String(CALL_EVENTS_PAGE),
        'page[number]': String(page),
      });
      const { data, meta } = await getJson<{ data: TelnyxCallEvent[]; meta?: { total_pages?: number } }>(
        'call events',
        url(`/call_events?${query}`),
      );
      for (const event of data) {
        const payload = event.metadata?.payload ?? {};
        if (decodeClientState(payload.client_state)?.callId !== req.callId) continue;
        const id = payload.call_control_id;
        if (typeof id === 'string' && !found.includes(id)) found.push(id);
      }
      if (data.length === 0 || page >= (meta?.total_pages ?? 1)) break;
    }
    for (const providerCallId of found.reverse())
      if (!(await search.setAside(providerCallId))) return { providerCallId };
    return null;
  };

  /** A call command; Telnyx's 422 for a call that has already ended is not an error. */
  const command = async (what: string, callControlId: string, action: string, body: unknown): Promise<void> => {
    const res = await postJson(url(`/calls/${encodeURIComponent(callControlId)}/actions/${action}`), body);
    if (isSuccess(res)) return;
    if (res.status >= 400 && res.status < 500) {
      const call = await getCall(callControlId);
      if (call === null || !call.is_alive) return;
    }
    throw unexpected('telnyx', what, res);
  };

  return {
    name: 'telnyx',

    async placeCall(req: PlaceCallRequest): Promise<PlacedCall> {
      const ringTimeout = ringTimeoutFor('telnyx', req);
      const timeLimit = timeLimitFor('telnyx', req);
      const res = await postJson(url('/calls'), {
        connection_id: connectionId,
        to: req.to,
        from: req.from,
        webhook_url: withCallId(req.statusCallbackUrl, req.callId),
        webhook_url_method: 'POST',
        // Our call id (echoed on every webhook and in the active-call list) and the agent's line.
        client_state: encodeClientState({ callId: req.callId, openingLine: req.script.openingLine }),
        ...(req.record ? { record: 'record-from-answer', record_format: 'wav', record_channels: 'single' } : {}),
        ...(req.machineDetection ? { answering_machine_detection: AMD_SETTING[req.machineDetection] } : {}),
        ...(ringTimeout !== undefined ? { timeout_secs: ringTimeout } : {}),
        ...(timeLimit !== undefined ? { time_limit_secs: timeLimit } : {}),
      });
      if (!isSuccess(res)) {
        let body: TelnyxErrorBody = {};
        try {
          body = parseJson<TelnyxErrorBody>('telnyx', res);
        } catch {
          // a body that is not JSON says nothing about the number
        }
        const aboutDestination = (body.errors ?? []).some((e) => e.source?.pointer === '/to');
        throw dialFailure('telnyx', res, aboutDestination);
      }
      return { providerCallId: parseJson<{ data: TelnyxCall }>('telnyx', res).data.call_control_id };
    },

    /**
     * The connection's active-call list returns each call's client_state, which carries our call id.
     * A call that has already ended is not listed there, and its webhooks may never have reached us
     * (our store was down while Telnyx tried): the Call Events debugging API still has them, with the
     * same client_state, for 24 hours. The latest such call is the one an earlier try of this dial
     * placed (the search sets aside those of earlier redial attempts).
     */
    async findPlacedCall(req: PlaceCallRequest, search: PlacedCallSearch): Promise<PlacedCall | null> {
      let after: string | undefined;
      for (let page = 0; page < ACTIVE_CALLS_MAX_PAGES; page += 1) {
        const query = new URLSearchParams({ 'page[limit]': String(ACTIVE_CALLS_PAGE) });
        if (after) query.set('page[after]', after);
        const { data, meta } = await getJson<{ data: TelnyxCall[]; meta?: { cursors?: { after?: string | null } } }>(
          'active call list',
          url(`/connections/${encodeURIComponent(connectionId)}/active_calls?${query}`),
        );
        for (const call of data) {
          if (decodeClientState(call.client_state)?.callId !== req.callId) continue;
          if (!(await search.setAside(call.call_control_id))) return { providerCallId: call.call_control_id };
        }
        after = meta?.cursors?.after ?? undefined;
        if (!after || data.length === 0) break;
      }
      return findEndedCall(req, search);
    },

    async hangUp(providerCallId: string): Promise<void> {
      await command('hang-up', providerCallId, 'hangup', {});
    },

    /**
     * A Telnyx call resource says only whether the call is alive; its leg's Call Events (the webhooks
     * Telnyx sent, with their payloads) say whether it was answered and why it hung up.
     */
    async pollCallEvents({ callId, providerCallId }) {
      const call = await getCall(providerCallId);
      if (call === null) return [];
      const query = new URLSearchParams({
        'filter[leg_id]': call.call_leg_id,
        'filter[type]': 'webhook',
        'page[size]': '50',
      });
      const { data } = await getJson<{ data: TelnyxCallEvent[] }>('call events', url(`/call_events?${query}`));
      const answered = data.find((e) => e.name === 'call.answered');
      const hangup = call.is_alive ? undefined : data.find((e) => e.name === 'call.hangup');
      const payload = hangup?.metadata?.payload ?? {};
      const kind = hangup ? hangupKind(payload) : call.is_alive && answered ? 'answered' : null;
      return eventsOfPolledState(
        { callId, provider: 'telnyx', providerCallId },
        {
          kind,
          providerStatus: hangup ? `call.hangup:${hangupCause(payload)}` : call.is_alive ? 'alive' : 'ended',
          answeredAt: isoOrNull(answered?.event_timestamp),
          endedAt: isoOrNull(hangup?.event_timestamp),
        },
      );
    },

    /**
     * Speaks the message; Telnyx then reports call.speak.ended (with this command's client_state)
     * and leaves the hang-up to us.
     */
    async leaveMessage({ callId, providerCallId, message }): Promise<void> {
      const tooLong = telnyxSpeechProblem(message);
      if (tooLong) throw new ProviderRejectedError(`the voicemail message ${tooLong}`);
      await command('voicemail message', providerCallId, 'speak', {
        payload: message,
        voice: 'female',
        language: 'en-US',
        client_state: encodeClientState({ callId, openingLine: '', purpose: 'voicemail' }),
        // A retried activity repeats the command: Telnyx ignores a command_id it has carried out.
        command_id: `voicemail-${callId}`,
      });
    },

    /** Recordings are filed by call leg; their download URLs are pre-signed (no key sent). */
    async fetchRecording(providerCallId: string): Promise<Buffer | null> {
      const call = await getCall(providerCallId);
      if (call === null) throw new Error(`telnyx no longer has call ${providerCallId}`);
      const query = new URLSearchParams({ 'filter[call_leg_id]': call.call_leg_id });
      const { data } = await getJson<{ data: TelnyxRecording[] }>('recording list', url(`/recordings?${query}`));
      const wav = data.find((r) => r.status === undefined || r.status === 'completed')?.download_urls?.wav;
      if (!wav) return null;
      const res = await send('telnyx', wav, { method: 'GET' });
      if (!isSuccess(res)) throw unexpected('telnyx', 'recording download', res);
      return res.body;
    },

    /**
     * The AI conversation Telnyx keeps for the call (found by its call_control_id metadata):
     * `assistant` messages are our agent, `user` messages the callee. Offsets count from the
     * conversation's creation, which is when the answered call's assistant started.
     */
    async fetchTranscript(providerCallId: string): Promise<Utterance[]> {
      const filter = new URLSearchParams({ 'metadata->telnyx_call_control_id': `eq.${providerCallId}` });
      const { data: conversations } = await getJson<{ data: { id: string; created_at: string }[] }>(
        'conversation list',
        url(`/ai/conversations?${filter}`),
      );
      const conversation = conversations[0];
      if (!conversation) return [];
      const messages: TelnyxMessage[] = [];
      for (let page = 1; ; page += 1) {
        const query = new URLSearchParams({ 'page[number]': String(page), 'page[size]': String(MESSAGES_PAGE) });
        const { data, meta } = await getJson<{ data: TelnyxMessage[]; meta?: { total_pages?: number } }>(
          'conversation messages',
          url(`/ai/conversations/${encodeURIComponent(conversation.id)}/messages?${query}`),
        );
        messages.push(...data);
        if (data.length === 0 || page >= (meta?.total_pages ?? page)) break;
      }
      const origin = Date.parse(conversation.created_at);
      const at = (m: TelnyxMessage): number => Date.parse(m.sent_at ?? m.created_at ?? '');
      return messages
        .filter((m) => (m.role === 'assistant' || m.role === 'user') && (m.text ?? '').trim().length > 0)
        .sort((a, b) => at(a) - at(b))
        .map((m) => ({
          speaker: m.role === 'assistant' ? 'agent' : 'human',
          text: (m.text ?? '').trim(),
          offsetSeconds: Number.isNaN(origin) || Number.isNaN(at(m)) ? 0 : Math.max(0, (at(m) - origin) / 1000),
        }));
    },

    /** Ed25519 over `${telnyx-timestamp}|${raw body}`, with the timestamp no more than 5 minutes off. */
    async parseCallback(callback: InboundCallback): Promise<ProviderEvent[]> {
      const signature = headerValue(callback.headers, 'telnyx-signature-ed25519');
      const timestamp = headerValue(callback.headers, 'telnyx-timestamp');
      if (!signature || !timestamp || !/^\d+$/.test(timestamp)) {
        throw new CallbackSignatureError('missing telnyx-signature-ed25519 or telnyx-timestamp');
      }
      if (Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_TIMESTAMP_SKEW_SECONDS) {
        throw new CallbackSignatureError('telnyx-timestamp is more than 5 minutes off');
      }
      const signed = Buffer.concat([Buffer.from(`${timestamp}|`, 'utf8'), callback.rawBody]);
      if (!verify(null, signed, publicKey, Buffer.from(signature, 'base64'))) {
        throw new CallbackSignatureError('telnyx-signature-ed25519 does not match');
      }
      const { data } = JSON.parse(callback.rawBody.toString('utf8')) as {
        data?: { event_type?: string; occurred_at?: string; payload?: Record<string, unknown> };
      };
      const eventType = data?.event_type;
      const payload = data?.payload ?? {};
      if (!eventType) throw new Error('telnyx webhook lacks data.event_type');
      if (payload.connection_id !== undefined && payload.connection_id !== connectionId) {
        throw new CallbackSignatureError('webhook for another connection');
      }
      const cause = hangupCause(payload);
      const clientState = decodeClientState(payload.client_state);
      // Spoken to its end only: a message cut short says `call_hangup` (the box hung up) or
      // `cancelled_amd`, and the call's hang-up tells the rest.
      const messageLeft =
        eventType === 'call.speak.ended' &&
        clientState?.purpose === 'voicemail' &&
        (payload.status === undefined || payload.status === 'completed');
      const kind =
        eventType === 'call.hangup' ? hangupKind(payload) : messageLeft ? 'message-left' : (EVENTS[eventType] ?? null);
      if (kind === null) return [];
      const callId = clientState?.callId ?? callIdFromUrl(callback.url);
      const callControlId = payload.call_control_id;
      if (!callId || typeof callControlId !== 'string')
        throw new Error('telnyx webhook lacks client_state callId or call_control_id');
      const occurredAt = Date.parse(data?.occurred_at ?? '');
      return [
        {
          callId,
          provider: 'telnyx',
          providerCallId: callControlId,
          kind,
          occurredAt: new Date(Number.isNaN(occurredAt) ? Date.now() : occurredAt).toISOString(),
          providerStatus: eventType === 'call.hangup' ? `${eventType}:${cause}` : eventType,
          ...answeredByOf(kind, payload.result),
        },
      ];
    },
  };
}

function answeredByOf(kind: ProviderEventKind, result: unknown): { answeredBy?: AnsweredBy } {
  if (kind === 'greeting-ended') return { answeredBy: 'machine' };
  if (kind !== 'machine-detected') return {};
  const answeredBy = typeof result === 'string' ? DETECTION_RESULT[result] : undefined;
  if (!answeredBy) throw new Error(`unknown telnyx machine detection result ${String(result)}`);
  return { answeredBy };
}

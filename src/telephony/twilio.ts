// Twilio Programmable Voice (REST API 2010-04-01) and Voice Intelligence (v2 Transcripts).
// A small client over fetch: the official SDK hard-codes its hosts per product, so it cannot
// be pointed at the emulator cleanly.
import { createHmac, timingSafeEqual } from 'node:crypto';
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
  type InboundCallback,
  type PlaceCallRequest,
  type PlacedCallSearch,
  type PlacedCall,
  type TelephonyProvider,
  type TwilioCredentials,
  type Utterance,
  RecordingNotReadyError,
  ringTimeoutFor,
  timeLimitFor,
} from './provider';

/** Twilio's CallStatus words, mapped in this one place; null means nothing changes. */
const CALL_STATUS: Record<string, ProviderEventKind | null> = {
  queued: null,
  initiated: null,
  ringing: 'ringing',
  'in-progress': 'answered',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no-answer',
  failed: 'failed',
  // Ended before anyone answered because the call was cancelled (by us or from the console).
  canceled: 'failed',
};
const ENDED = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);
const SIP_DECLINE = '603';

/**
 * Asynchronous AMD's AnsweredBy words. `Enable` answers human, machine_start, fax or unknown at once;
 * `DetectMessageEnd` answers a machine only when its greeting is over (machine_end_*), which is when
 * a message can be left.
 */
const ANSWERED_BY: Record<string, { answeredBy: AnsweredBy; greetingEnded: boolean }> = {
  human: { answeredBy: 'human', greetingEnded: false },
  unknown: { answeredBy: 'unknown', greetingEnded: false },
  fax: { answeredBy: 'fax', greetingEnded: false },
  machine_start: { answeredBy: 'machine', greetingEnded: false },
  machine_end_beep: { answeredBy: 'machine', greetingEnded: true },
  machine_end_silence: { answeredBy: 'machine', greetingEnded: true },
  machine_end_other: { answeredBy: 'machine', greetingEnded: true },
};

/** Error codes Twilio gives when the destination itself is the problem. */
const INVALID_DESTINATION_CODES = new Set([13224, 21211, 21214, 21217, 21401, 21407]);

const STATUS_CALLBACK_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];
/** Calls listed per search for a retried dial's call (the newest between the two numbers come first). */
const FIND_MAX_CANDIDATES = 20;
/** Our clock against Twilio's, when comparing a call's creation with the dial's scheduling. */
const CLOCK_SKEW_MS = 60_000;

interface TwilioCall {
  sid: string;
  status: string;
  direction?: string;
  date_created: string | null;
  date_updated?: string | null;
  end_time?: string | null;
  /** Seconds of talk, as a string; null until the call has ended. */
  duration?: string | null;
}
interface TwilioRecording {
  sid: string;
  status: string;
}
interface TwilioTranscript {
  sid: string;
  status: string;
  channel?: { participants?: { channel_participant?: number; role?: string }[] } | null;
}
interface TwilioSentence {
  media_channel: number;
  sentence_index: number;
  start_time: string | number | null;
  transcript: string | null;
}
interface TwilioPageMeta {
  next_page_url?: string | null;
}

/** TwiML that says `text`: the agent's opening line, or a voicemail message followed by a hang-up. */
export function sayTwiml(text: string, thenHangUp = false): string {
  return `<Response><Say>${escapeXml(text)}</Say>${thenHangUp ? '<Hangup/>' : ''}</Response>`;
}

/** Twilio refuses TwiML given in a request past this many characters (its error 32018). */
export const TWIML_MAX_CHARS = 4000;

/**
 * Why Twilio would refuse to speak `text` (its TwiML too long), or null. The API checks a call's
 * opening line and voicemail message at create; the adapter again before each request, as the
 * template may have changed since.
 */
export function twilioSpeechProblem(text: string, thenHangUp = false): string | null {
  const length = sayTwiml(text, thenHangUp).length;
  return length > TWIML_MAX_CHARS
    ? `makes ${length} characters of TwiML, and twilio takes at most ${TWIML_MAX_CHARS} (error 32018)`
    : null;
}

/**
 * Text as XML character data. Characters XML 1.0 forbids even as references (control characters but
 * tab and line breaks, U+FFFE, U+FFFF), which a prompt variable can carry from a spreadsheet (U+000B
 * is its line break within a cell), become spaces: Twilio would refuse the document otherwise.
 */
function escapeXml(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- the control characters are what it replaces
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, ' ')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
  );
}

/** X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, of the URL + sorted params. */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const pairs = [...params.entries()].sort(([ka, va], [kb, vb]) =>
    ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0,
  );
  const payload = url + pairs.map(([key, value]) => key + value).join('');
  return createHmac('sha1', authToken).update(payload, 'utf8').digest('base64');
}

/**
 * Voice Intelligence lives on its own host (intelligence.twilio.com beside api.twilio.com); any
 * other base URL (the emulator) serves both products.
 */
function intelligenceBase(apiBase: string): string {
  const url = new URL(apiBase);
  if (url.hostname.startsWith('api.')) url.hostname = `intelligence.${url.hostname.slice(4)}`;
  return url.toString().replace(/\/+$/, '');
}

export function createTwilioProvider(credentials: TwilioCredentials, baseUrl: string): TelephonyProvider {
  const { accountSid, authToken } = credentials;
  const authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const accountUrl = (path: string): string =>
    joinUrl(baseUrl, `/2010-04-01/Accounts/${encodeURIComponent(accountSid)}${path}`);
  const intelligenceUrl = (path: string): string => joinUrl(intelligenceBase(baseUrl), path);

  const request = (url: string, init: RequestInit = {}): Promise<ProviderResponse> =>
    send('twilio', url, {
      ...init,
      headers: { ...init.headers, Authorization: authorization, Accept: 'application/json' },
    });

  const getJson = async <T>(what: string, url: string): Promise<T> => {
    const res = await request(url);
    if (!isSuccess(res)) throw unexpected('twilio', what, res);
    return parseJson<T>('twilio', res);
  };

  /** A call Twilio refuses to change (4xx) that has already ended was changed enough. */
  const updateCall = async (what: string, providerCallId: string, params: Record<string, string>): Promise<void> => {
    const callUrl = accountUrl(`/Calls/${encodeURIComponent(providerCallId)}.json`);
    const res = await request(callUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
    if (isSuccess(res)) return;
    if (res.status >= 400 && res.status < 500) {
      const call = await getJson<TwilioCall>('call fetch', callUrl);
      if (ENDED.has(call.status)) return;
    }
    throw unexpected('twilio', what, res);
  };

  const listRecordings = async (callSid: string): Promise<TwilioRecording[]> => {
    const query = new URLSearchParams({ CallSid: callSid, PageSize: '20' });
    const page = await getJson<{ recordings: TwilioRecording[] }>(
      'recording list',
      accountUrl(`/Recordings.json?${query}`),
    );
    return page.recordings;
  };

  return {
    name: 'twilio',

    async placeCall(req: PlaceCallRequest): Promise<PlacedCall> {
      const tooLong = twilioSpeechProblem(req.script.openingLine);
      if (tooLong) throw new ProviderRejectedError(`the opening line ${tooLong}: not dialled`);
      const form = new URLSearchParams({
        To: req.to,
        From: req.from,
        Twiml: sayTwiml(req.script.openingLine),
        // Carries our call id: callbacks route by it.
        StatusCallback: withCallId(req.statusCallbackUrl, req.callId),
        StatusCallbackMethod: 'POST',
        Record: String(req.record),
      });
      // Each side on a channel of its own: Twilio's default (mono) mixes them, and a transcript of the
      // recording could not tell the callee's words from the agent's.
      if (req.record) form.set('RecordingChannels', 'dual');
      const ringTimeout = ringTimeoutFor('twilio', req);
      if (ringTimeout !== undefined) form.set('Timeout', String(ringTimeout));
      const timeLimit = timeLimitFor('twilio', req);
      if (timeLimit !== undefined) form.set('TimeLimit', String(timeLimit));
      for (const event of STATUS_CALLBACK_EVENTS) form.append('StatusCallbackEvent', event);
      if (req.machineDetection) {
        // Asynchronous, so that a person hears the agent at once; the verdict comes to the same router.
        form.set('MachineDetection', req.machineDetection === 'hangUp' ? 'Enable' : 'DetectMessageEnd');
        form.set('AsyncAmd', 'true');
        form.set('AsyncAmdStatusCallback', withCallId(req.statusCallbackUrl, req.callId));
        form.set('AsyncAmdStatusCallbackMethod', 'POST');
      }
      const res = await request(accountUrl('/Calls.json'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      if (!isSuccess(res)) {
        let code: unknown;
        try {
          code = parseJson<{ code?: unknown }>('twilio', res).code;
        } catch {
          code = undefined;
        }
        throw dialFailure('twilio', res, typeof code === 'number' && INVALID_DESTINATION_CODES.has(code));
      }
      return { providerCallId: parseJson<{ sid: string }>('twilio', res).sid };
    },

    /**
     * A Twilio call carries no client data, and its Events (the requests Twilio sent us) can be read
     * only 15 minutes after the call ends, so nothing Twilio lists names our call id. The Calls list
     * filters by To and From, newest first: the newest outbound call between the two numbers placed
     * since the dial was scheduled, that is not another of ours, is the one an earlier try placed.
     */
    async findPlacedCall(req: PlaceCallRequest, search: PlacedCallSearch): Promise<PlacedCall | null> {
      const query = new URLSearchParams({ To: req.to, From: req.from, PageSize: String(FIND_MAX_CANDIDATES) });
      const { calls } = await getJson<{ calls: TwilioCall[] }>('call list', accountUrl(`/Calls.json?${query}`));
      const since = search.since.getTime() - CLOCK_SKEW_MS;
      for (const call of calls) {
        if (call.direction !== undefined && call.direction !== 'outbound-api') continue;
        if (call.date_created !== null && Date.parse(call.date_created) < since) continue;
        if (!(await search.setAside(call.sid))) return { providerCallId: call.sid };
      }
      return null;
    },

    async hangUp(providerCallId: string): Promise<void> {
      await updateCall('hang-up', providerCallId, { Status: 'completed' });
    },

    /** The Call resource: its status, and for a completed call its end time less its talk seconds. */
    async pollCallEvents({ callId, providerCallId }) {
      const call = await getJson<TwilioCall>(
        'call fetch',
        accountUrl(`/Calls/${encodeURIComponent(providerCallId)}.json`),
      );
      const endedAt = isoOrNull(call.end_time);
      const talkSeconds = Number(call.duration ?? 0);
      const answeredAt =
        call.status === 'in-progress'
          ? isoOrNull(call.date_updated)
          : call.status === 'completed' && endedAt
            ? new Date(Date.parse(endedAt) - talkSeconds * 1000).toISOString()
            : null;
      return eventsOfPolledState(
        { callId, provider: 'twilio', providerCallId },
        { kind: CALL_STATUS[call.status] ?? null, providerStatus: call.status, answeredAt, endedAt },
      );
    },

    /** New TwiML for the live call: Twilio says the message, then <Hangup/> ends the call. */
    async leaveMessage({ providerCallId, message }): Promise<void> {
      const tooLong = twilioSpeechProblem(message, true);
      if (tooLong) throw new ProviderRejectedError(`the voicemail message ${tooLong}`);
      await updateCall('voicemail message', providerCallId, { Twiml: sayTwiml(message, true) });
    },

    /**
     * The call's completed recording. Twilio lists it as soon as the call ends, `processing` for a while
     * (`in-progress` while the call still runs): not ready yet, which the capture asks about again, on
     * its next attempt too (RecordingNotReadyError); null when there is none at all.
     */
    async fetchRecording(providerCallId: string): Promise<Buffer | null> {
      const recordings = await listRecordings(providerCallId);
      const done = recordings.find((r) => r.status === 'completed');
      if (!done) {
        if (recordings.some((r) => r.status === 'processing' || r.status === 'in-progress'))
          throw new RecordingNotReadyError(`twilio recording of ${providerCallId} is still processing`);
        return null;
      }
      // Mixed down to one channel: the file people play, at half a dual-channel file's size (stored in
      // MongoDB, in 8 MiB pieces past that). The transcript comes from Twilio's own copy.
      let res = await request(accountUrl(`/Recordings/${encodeURIComponent(done.sid)}.wav?RequestedChannels=1`));
      const location = res.headers.get('location');
      // Twilio redirects media to a pre-signed storage URL: follow it without our credentials.
      if (res.status >= 300 && res.status < 400 && location) {
        res = await send('twilio', new URL(location, baseUrl).toString(), { method: 'GET' });
      }
      if (!isSuccess(res)) throw unexpected('twilio', 'recording download', res);
      return res.body;
    },

    /**
     * Voice Intelligence keeps a transcript per source: the call's recording when it was
     * recorded (dual-channel, see placeCall), otherwise the call itself (real-time transcription).
     * Participants name which media channel is the agent; without them channel 1 is ours (the side
     * that placed the call).
     */
    async fetchTranscript(providerCallId: string): Promise<Utterance[]> {
      const sources = [...(await listRecordings(providerCallId)).map((r) => r.sid), providerCallId];
      for (const source of sources) {
        const query = new URLSearchParams({ SourceSid: source, PageSize: '20' });
        const { transcripts } = await getJson<{ transcripts: TwilioTranscript[] }>(
          'transcript list',
          intelligenceUrl(`/v2/Transcripts?${query}`),
        );
        const transcript = transcripts[0];
        if (!transcript) continue;
        if (transcript.status !== 'completed') {
          throw new Error(`twilio transcript ${transcript.sid} is ${transcript.status}`);
        }
        const agentChannels = new Set(
          (transcript.channel?.participants ?? [])
            .filter((p) => p.role?.toLowerCase() === 'agent')
            .map((p) => p.channel_participant),
        );
        if (agentChannels.size === 0) agentChannels.add(1);
        const sentences: TwilioSentence[] = [];
        let next: string | null | undefined = intelligenceUrl(
          `/v2/Transcripts/${encodeURIComponent(transcript.sid)}/Sentences?PageSize=1000`,
        );
        while (next) {
          const page: { sentences: TwilioSentence[]; meta?: TwilioPageMeta } = await getJson(
            'transcript sentences',
            next,
          );
          sentences.push(...page.sentences);
          next = page.meta?.next_page_url;
        }
        return sentences
          .sort((a, b) => a.sentence_index - b.sentence_index)
          .filter((s) => (s.transcript ?? '').trim().length > 0)
          .map((s) => ({
            speaker: agentChannels.has(s.media_channel) ? 'agent' : 'human',
            text: (s.transcript ?? '').trim(),
            offsetSeconds: Number(s.start_time ?? 0),
          }));
      }
      return [];
    },

    async parseCallback(callback: InboundCallback): Promise<ProviderEvent[]> {
      const signature = headerValue(callback.headers, 'x-twilio-signature');
      if (!signature) throw new CallbackSignatureError('missing X-Twilio-Signature');
      const params = new URLSearchParams(callback.rawBody.toString('utf8'));
      const expected = Buffer.from(twilioSignature(authToken, callback.url, params));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new CallbackSignatureError('X-Twilio-Signature does not match');
      }
      if (params.get('AccountSid') !== accountSid) throw new CallbackSignatureError('callback for another account');
      const callId = callIdFromUrl(callback.url);
      const callSid = params.get('CallSid');
      const answeredBy = params.get('AnsweredBy');
      // The AsyncAmdStatusCallback: AnsweredBy and no CallStatus.
      if (callId && callSid && answeredBy !== null && !params.has('CallStatus')) {
        return amdEvents(callId, callSid, answeredBy);
      }
      const status = params.get('CallStatus');
      if (!callId || !callSid || !status) throw new Error('twilio callback lacks callId, CallSid or CallStatus');
      if (!(status in CALL_STATUS)) throw new Error(`unknown twilio CallStatus ${status}`);
      // A callee who refuses the call ends it as busy (or no-answer) with SIP 603 Decline.
      const kind =
        ENDED.has(status) && status !== 'completed' && params.get('SipResponseCode') === SIP_DECLINE
          ? 'declined'
          : CALL_STATUS[status];
      if (kind === null) return [];
      const timestamp = Date.parse(params.get('Timestamp') ?? '');
      const occurredAt = Number.isNaN(timestamp) ? Date.now() : timestamp;
      // A completed call's CallDuration runs from its answer to its end.
      const talkSeconds = kind === 'completed' ? Number(params.get('CallDuration') ?? NaN) : NaN;
      return [
        {
          callId,
          provider: 'twilio',
          providerCallId: callSid,
          kind,
          occurredAt: new Date(occurredAt).toISOString(),
          providerStatus: status,
          ...(talkSeconds >= 0 ? { answeredAt: new Date(occurredAt - talkSeconds * 1000).toISOString() } : {}),
        },
      ];
    },
  };
}

function amdEvents(callId: string, callSid: string, answeredBy: string): ProviderEvent[] {
  const verdict = ANSWERED_BY[answeredBy];
  if (!verdict) throw new Error(`unknown twilio AnsweredBy ${answeredBy}`);
  const base = { callId, provider: 'twilio' as const, providerCallId: callSid, occurredAt: new Date().toISOString() };
  const detected: ProviderEvent = {
    ...base,
    kind: 'machine-detected',
    answeredBy: verdict.answeredBy,
    providerStatus: `AnsweredBy:${answeredBy}`,
  };
  if (!verdict.greetingEnded) return [detected];
  return [
    detected,
    { ...base, kind: 'greeting-ended', answeredBy: 'machine', providerStatus: `AnsweredBy:${answeredBy}` },
  ];
}

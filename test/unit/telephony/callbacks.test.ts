// Callback verification and mapping: each adapter's status table, and the router refusing what is
// not correctly signed (nothing reaches onEvents). Callbacks are forged with the emulator's own
// signing code, written from the provider's side.
import { generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderEventKind } from '../../../src/contracts/providers';
import { telnyxSignatureHeaders, twilioRequestSignature, vonageWebhookToken } from '../../../src/emulator/signing';
import { callbackUrlFor } from '../../../src/telephony/callback-url';
import { createProvider } from '../../../src/telephony';
import { encodeClientState } from '../../../src/telephony/telnyx';
import { CallbackSignatureError, type InboundCallback, type TelephonyProvider } from '../../../src/telephony/provider';
import { startHarness, type Harness } from './harness';

const BASE_URLS = { twilio: 'http://127.0.0.1:9', vonage: 'http://127.0.0.1:9', telnyx: 'http://127.0.0.1:9' };
const CALL_ID = '65a1f0c2b3d4e5f601234567';
const URL_FOR = (provider: 'twilio' | 'vonage' | 'telnyx'): string =>
  callbackUrlFor('https://calls.example.com', provider, CALL_ID);

function twilioCallback(
  authToken: string,
  accountSid: string,
  status: string,
  url = URL_FOR('twilio'),
  extra: [string, string][] = [],
): InboundCallback {
  return twilioSigned(authToken, url, [
    ['AccountSid', accountSid],
    ['CallSid', 'CA0123456789abcdef0123456789abcdef'],
    ['CallStatus', status],
    ['Timestamp', 'Tue, 21 Nov 2026 10:00:00 +0000'],
    ...extra,
  ]);
}

/** The AsyncAmdStatusCallback: AnsweredBy, and no CallStatus. */
function twilioAmdCallback(authToken: string, accountSid: string, answeredBy: string): InboundCallback {
  return twilioSigned(authToken, URL_FOR('twilio'), [
    ['AccountSid', accountSid],
    ['CallSid', 'CA0123456789abcdef0123456789abcdef'],
    ['AnsweredBy', answeredBy],
    ['MachineDetectionDuration', '2400'],
  ]);
}

function twilioSigned(authToken: string, url: string, params: [string, string][]): InboundCallback {
  return {
    method: 'POST',
    url,
    headers: { 'x-twilio-signature': twilioRequestSignature(authToken, url, params) },
    rawBody: Buffer.from(new URLSearchParams(params).toString()),
  };
}

function vonageCallback(secret: string, applicationId: string, payload: Record<string, unknown>): InboundCallback {
  const body = JSON.stringify(payload);
  return {
    method: 'POST',
    url: URL_FOR('vonage'),
    headers: { authorization: `Bearer ${vonageWebhookToken(secret, body, applicationId)}` },
    rawBody: Buffer.from(body),
  };
}

function telnyxBody(eventType: string, payload: Record<string, unknown>): string {
  return JSON.stringify({
    data: {
      record_type: 'event',
      event_type: eventType,
      id: randomUUID(),
      occurred_at: '2026-11-21T10:00:00.000Z',
      payload: {
        call_control_id: 'v3:abc',
        connection_id: '1494404757140276705',
        client_state: encodeClientState({ callId: CALL_ID, openingLine: 'Hello' }),
        ...payload,
      },
    },
    meta: { attempt: 1 },
  });
}

function telnyxCallback(key: KeyObject, eventType: string, payload: Record<string, unknown> = {}): InboundCallback {
  const body = telnyxBody(eventType, payload);
  return {
    method: 'POST',
    url: URL_FOR('telnyx'),
    headers: telnyxSignatureHeaders(key, body),
    rawBody: Buffer.from(body),
  };
}

const kindsOf = async (adapter: TelephonyProvider, callback: InboundCallback): Promise<ProviderEventKind[]> =>
  (await adapter.parseCallback(callback)).map((e) => e.kind);

describe('callbackUrlFor', () => {
  it('puts the call id in the query string under the provider path', () => {
    expect(callbackUrlFor('https://calls.example.com/', 'vonage', CALL_ID)).toBe(
      `https://calls.example.com/telephony/vonage/events?callId=${CALL_ID}`,
    );
  });
});

describe('twilio parseCallback', () => {
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  const adapter = createProvider({ provider: 'twilio', twilio: { accountSid, authToken } }, BASE_URLS);

  it.each<[string, ProviderEventKind[]]>([
    ['queued', []],
    ['initiated', []],
    ['ringing', ['ringing']],
    ['in-progress', ['answered']],
    ['completed', ['completed']],
    ['busy', ['busy']],
    ['no-answer', ['no-answer']],
    ['failed', ['failed']],
    ['canceled', ['failed']],
  ])('maps CallStatus %s to %j', async (status, expected) => {
    expect(await kindsOf(adapter, twilioCallback(authToken, accountSid, status))).toEqual(expected);
  });

  it.each<[string, string, ProviderEventKind[]]>([
    ['busy', '603', ['declined']],
    ['no-answer', '603', ['declined']],
    ['busy', '486', ['busy']],
    ['completed', '603', ['completed']],
  ])('maps CallStatus %s with SipResponseCode %s (603 Decline) to %j', async (status, sip, expected) => {
    const callback = twilioCallback(authToken, accountSid, status, URL_FOR('twilio'), [['SipResponseCode', sip]]);
    expect(await kindsOf(adapter, callback)).toEqual(expected);
  });

  it.each<[string, ProviderEventKind[], string]>([
    ['human', ['machine-detected'], 'human'],
    ['unknown', ['machine-detected'], 'unknown'],
    ['fax', ['machine-detected'], 'fax'],
    ['machine_start', ['machine-detected'], 'machine'],
    ['machine_end_beep', ['machine-detected', 'greeting-ended'], 'machine'],
    ['machine_end_silence', ['machine-detected', 'greeting-ended'], 'machine'],
    ['machine_end_other', ['machine-detected', 'greeting-ended'], 'machine'],
  ])('maps the AMD callback with AnsweredBy %s to %j (%s)', async (answeredBy, kinds, who) => {
    const events = await adapter.parseCallback(twilioAmdCallback(authToken, accountSid, answeredBy));
    expect(events.map((e) => [e.kind, e.answeredBy])).toEqual(kinds.map((kind) => [kind, who]));
    expect(events.every((e) => e.callId === CALL_ID && e.providerCallId.startsWith('CA'))).toBe(true);
  });

  it("takes a completed call's answer time from its CallDuration (answer to end)", async () => {
    const completed = twilioCallback(authToken, accountSid, 'completed', URL_FOR('twilio'), [['CallDuration', '75']]);
    const [event] = await adapter.parseCallback(completed);
    expect(event).toMatchObject({ kind: 'completed', answeredAt: '2026-11-21T09:58:45.000Z' });
    // Other endings, and a completed one without it, say nothing of an answer.
    const busy = twilioCallback(authToken, accountSid, 'busy', URL_FOR('twilio'), [['CallDuration', '0']]);
    expect((await adapter.parseCallback(busy))[0]).not.toHaveProperty('answeredAt');
    expect((await adapter.parseCallback(twilioCallback(authToken, accountSid, 'completed')))[0]).not.toHaveProperty(
      'answeredAt',
    );
  });

  it('refuses an AMD callback signed with another token or with an AnsweredBy it does not know', async () => {
    await expect(adapter.parseCallback(twilioAmdCallback('wrong-token', accountSid, 'human'))).rejects.toThrow(
      CallbackSignatureError,
    );
    await expect(adapter.parseCallback(twilioAmdCallback(authToken, accountSid, 'robot'))).rejects.toThrow(
      /AnsweredBy robot/,
    );
  });

  it('takes the call id, CallSid and time from the callback', async () => {
    await expect(adapter.parseCallback(twilioCallback(authToken, accountSid, 'ringing'))).resolves.toEqual([
      {
        callId: CALL_ID,
        provider: 'twilio',
        providerCallId: 'CA0123456789abcdef0123456789abcdef',
        kind: 'ringing',
        occurredAt: '2026-11-21T10:00:00.000Z',
        providerStatus: 'ringing',
      },
    ]);
  });

  it('rejects another token, another URL, a missing header and another account', async () => {
    await expect(adapter.parseCallback(twilioCallback('wrong-token', accountSid, 'completed'))).rejects.toThrow(
      CallbackSignatureError,
    );
    const moved = {
      ...twilioCallback(authToken, accountSid, 'completed'),
      url: URL_FOR('twilio').replace(CALL_ID, 'ffffffffffffffffffffffff'),
    };
    await expect(adapter.parseCallback(moved)).rejects.toThrow(CallbackSignatureError);
    await expect(
      adapter.parseCallback({ ...twilioCallback(authToken, accountSid, 'completed'), headers: {} }),
    ).rejects.toThrow(CallbackSignatureError);
    await expect(adapter.parseCallback(twilioCallback(authToken, 'ACother', 'completed'))).rejects.toThrow(
      CallbackSignatureError,
    );
  });
});

describe('vonage parseCallback', () => {
  const applicationId = randomUUID();
  const signatureSecret = randomBytes(24).toString('base64url');
  const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const adapter = createProvider(
    { provider: 'vonage', vonage: { applicationId, privateKey, signatureSecret } },
    BASE_URLS,
  );
  const event = (status?: string): Record<string, unknown> => ({
    uuid: '63f61863-4a51-4f6b-86e1-46edebcf9356',
    conversation_uuid: 'CON-f972836a-550f-45fa-956c-12a2ab5b7d22',
    from: '14155550100',
    to: '14155552671',
    direction: 'outbound',
    timestamp: '2026-11-21T10:00:00.000Z',
    ...(status ? { status } : {}),
  });

  it.each<[string, ProviderEventKind[]]>([
    ['started', []],
    ['ringing', ['ringing']],
    ['answered', ['answered']],
    ['completed', ['completed']],
    ['busy', ['busy']],
    ['timeout', ['no-answer']],
    ['unanswered', ['no-answer']],
    ['failed', ['failed']],
    ['rejected', ['declined']],
    ['cancelled', ['failed']],
  ])('maps status %s to %j', async (status, expected) => {
    expect(await kindsOf(adapter, vonageCallback(signatureSecret, applicationId, event(status)))).toEqual(expected);
  });

  it.each<[Record<string, unknown>, ProviderEventKind[], string | undefined]>([
    [{ status: 'human' }, ['machine-detected'], 'human'],
    [{ status: 'machine' }, ['machine-detected'], 'machine'],
    [{ status: 'machine', sub_state: 'beep_start' }, ['greeting-ended'], 'machine'],
    [{ status: 'machine', sub_state: 'beep_timeout' }, ['greeting-ended'], 'machine'],
    [{ status: 'machine', sub_state: 'beep_end' }, [], undefined],
  ])('maps the machine detection event %j to %j', async (fields, kinds, who) => {
    const events = await adapter.parseCallback(
      vonageCallback(signatureSecret, applicationId, { ...event(), ...fields }),
    );
    expect(events.map((e) => [e.kind, e.answeredBy])).toEqual(kinds.map((kind) => [kind, who]));
  });

  it("takes a completed call's answer time from its start_time", async () => {
    const completed = { ...event('completed'), start_time: '2026-11-21T09:58:45.000Z', duration: '75' };
    const [parsed] = await adapter.parseCallback(vonageCallback(signatureSecret, applicationId, completed));
    expect(parsed).toMatchObject({ kind: 'completed', answeredAt: '2026-11-21T09:58:45.000Z' });
    const [plain] = await adapter.parseCallback(vonageCallback(signatureSecret, applicationId, event('completed')));
    expect(plain).not.toHaveProperty('answeredAt');
  });

  it('ignores events without a status (the record event)', async () => {
    const record = { ...event(), recording_url: 'https://api.nexmo.com/v1/files/x', recording_uuid: 'x' };
    expect(await kindsOf(adapter, vonageCallback(signatureSecret, applicationId, record))).toEqual([]);
  });

  it('rejects another secret, a tampered body, a missing token and another application', async () => {
    await expect(
      adapter.parseCallback(vonageCallback('wrong-secret', applicationId, event('completed'))),
    ).rejects.toThrow(CallbackSignatureError);
    const tampered = vonageCallback(signatureSecret, applicationId, event('busy'));
    tampered.rawBody = Buffer.from(tampered.rawBody.toString().replace('busy', 'completed'));
    await expect(adapter.parseCallback(tampered)).rejects.toThrow(/payload_hash/);
    await expect(
      adapter.parseCallback({ ...vonageCallback(signatureSecret, applicationId, event('completed')), headers: {} }),
    ).rejects.toThrow(CallbackSignatureError);
    await expect(
      adapter.parseCallback(vonageCallback(signatureSecret, randomUUID(), event('completed'))),
    ).rejects.toThrow(CallbackSignatureError);
  });
});

describe('telnyx parseCallback', () => {
  const keys = generateKeyPairSync('ed25519');
  const publicKey = keys.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64');
  const adapter = createProvider(
    { provider: 'telnyx', telnyx: { apiKey: 'KEY0', connectionId: '1494404757140276705', publicKey } },
    BASE_URLS,
  );

  it.each<[string, Record<string, unknown>, ProviderEventKind[]]>([
    ['call.initiated', {}, ['ringing']],
    ['call.answered', {}, ['answered']],
    ['call.hangup', { hangup_cause: 'normal_clearing' }, ['completed']],
    ['call.hangup', { hangup_cause: 'user_busy' }, ['busy']],
    ['call.hangup', { hangup_cause: 'call_rejected' }, ['declined']],
    ['call.hangup', { hangup_cause: 'unspecified', sip_hangup_cause: '603' }, ['declined']],
    ['call.hangup', { hangup_cause: 'timeout' }, ['no-answer']],
    ['call.hangup', { hangup_cause: 'originator_cancel' }, ['failed']],
    ['call.hangup', { hangup_cause: 'unspecified' }, ['failed']],
    ['call.hangup', { hangup_cause: 'a_cause_added_later' }, ['failed']],
    ['call.recording.saved', {}, []],
    ['call.dtmf.received', {}, []],
    ['call.speak.ended', { status: 'completed' }, []],
    ['call.machine.detection.ended', { result: 'human' }, ['machine-detected']],
    ['call.machine.greeting.ended', { result: 'beep_detected' }, ['greeting-ended']],
  ])('maps %s %j to %j', async (eventType, payload, expected) => {
    expect(await kindsOf(adapter, telnyxCallback(keys.privateKey, eventType, payload))).toEqual(expected);
  });

  it.each<[string, string]>([
    ['human', 'human'],
    ['machine', 'machine'],
    ['not_sure', 'unknown'],
  ])('reads the machine detection result %s as %s', async (result, answeredBy) => {
    const [event] = await adapter.parseCallback(
      telnyxCallback(keys.privateKey, 'call.machine.detection.ended', { result }),
    );
    expect(event).toMatchObject({ kind: 'machine-detected', answeredBy, callId: CALL_ID });
  });

  it('takes the end of our voicemail message from its own client_state, not the opening line', async () => {
    const voicemail = encodeClientState({ callId: CALL_ID, openingLine: '', purpose: 'voicemail' });
    const events = await adapter.parseCallback(
      telnyxCallback(keys.privateKey, 'call.speak.ended', { status: 'completed', client_state: voicemail }),
    );
    expect(events.map((e) => [e.kind, e.callId])).toEqual([['message-left', CALL_ID]]);
    // Cut short (the box hung up mid-message): not left. Before, any end of the speech counted.
    for (const status of ['call_hangup', 'cancelled_amd']) {
      const cut = telnyxCallback(keys.privateKey, 'call.speak.ended', { status, client_state: voicemail });
      expect(await adapter.parseCallback(cut)).toEqual([]);
    }
  });

  it('takes the call id from client_state', async () => {
    const [event] = await adapter.parseCallback(
      telnyxCallback(keys.privateKey, 'call.hangup', { hangup_cause: 'user_busy' }),
    );
    expect(event).toMatchObject({ callId: CALL_ID, providerCallId: 'v3:abc', providerStatus: 'call.hangup:user_busy' });
  });

  it('rejects another key, a stale timestamp, a tampered body and another connection', async () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    await expect(adapter.parseCallback(telnyxCallback(other, 'call.answered'))).rejects.toThrow(CallbackSignatureError);

    const body = telnyxBody('call.answered', {});
    const stale = String(Math.floor(Date.now() / 1000) - 301);
    const staleSignature = sign(null, Buffer.from(`${stale}|${body}`), keys.privateKey).toString('base64');
    const staleCallback: InboundCallback = {
      method: 'POST',
      url: URL_FOR('telnyx'),
      headers: { 'telnyx-signature-ed25519': staleSignature, 'telnyx-timestamp': stale },
      rawBody: Buffer.from(body),
    };
    await expect(adapter.parseCallback(staleCallback)).rejects.toThrow(/5 minutes/);

    const tampered = telnyxCallback(keys.privateKey, 'call.hangup', { hangup_cause: 'user_busy' });
    tampered.rawBody = Buffer.from(tampered.rawBody.toString().replace('user_busy', 'normal_clearing'));
    await expect(adapter.parseCallback(tampered)).rejects.toThrow(CallbackSignatureError);

    await expect(
      adapter.parseCallback(telnyxCallback(keys.privateKey, 'call.answered', { connection_id: 'another' })),
    ).rejects.toThrow(CallbackSignatureError);
  });
});

describe('callback router', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  const post = (
    url: string,
    callback: Pick<InboundCallback, 'headers' | 'rawBody'>,
    contentType: string,
  ): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': contentType, ...(callback.headers as Record<string, string>) },
      body: callback.rawBody,
    });

  it('answers 401 to a bad signature from each provider and changes nothing', async () => {
    const before = h.onEventsCalls();
    const twilio = h.request('twilio');
    const { accountSid } = h.credentials.twilio.twilio;
    const forgedTwilio = twilioCallback('not-the-token', accountSid, 'completed', twilio.statusCallbackUrl);
    expect((await post(twilio.statusCallbackUrl, forgedTwilio, 'application/x-www-form-urlencoded')).status).toBe(401);

    const vonage = h.request('vonage');
    const forgedVonage = vonageCallback('not-the-secret', randomUUID(), { uuid: randomUUID(), status: 'completed' });
    expect((await post(vonage.statusCallbackUrl, forgedVonage, 'application/json')).status).toBe(401);

    const telnyx = h.request('telnyx');
    const forgedTelnyx = telnyxCallback(generateKeyPairSync('ed25519').privateKey, 'call.hangup', {
      hangup_cause: 'normal_clearing',
    });
    expect((await post(telnyx.statusCallbackUrl, forgedTelnyx, 'application/json')).status).toBe(401);

    expect(h.onEventsCalls()).toBe(before);
    expect([twilio, vonage, telnyx].flatMap((r) => h.eventsFor(r.callId))).toEqual([]);
  });

  it('accepts a correctly signed callback, and answers 204 without onEvents to one that changes nothing', async () => {
    const request = h.request('twilio');
    const { accountSid, authToken } = h.credentials.twilio.twilio;
    const initiated = twilioCallback(authToken, accountSid, 'initiated', request.statusCallbackUrl);
    const before = h.onEventsCalls();
    expect((await post(request.statusCallbackUrl, initiated, 'application/x-www-form-urlencoded')).status).toBe(204);
    expect(h.onEventsCalls()).toBe(before);
    const ringing = twilioCallback(authToken, accountSid, 'ringing', request.statusCallbackUrl);
    expect((await post(request.statusCallbackUrl, ringing, 'application/x-www-form-urlencoded')).status).toBe(204);
    expect(h.eventsFor(request.callId).map((e) => e.kind)).toEqual(['ringing']);
  });

  it("verifies again with the team's current credentials when a remembered adapter refuses a signature", async () => {
    const { accountSid, authToken } = h.credentials.twilio.twilio;
    const rotated = { ...h.credentials.twilio, twilio: { accountSid, authToken: 'the-token-before-rotation' } };
    const request = h.request('twilio');
    h.rememberStale(request.callId, rotated);
    const ringing = twilioCallback(authToken, accountSid, 'ringing', request.statusCallbackUrl);
    expect((await post(request.statusCallbackUrl, ringing, 'application/x-www-form-urlencoded')).status).toBe(204);
    expect(h.eventsFor(request.callId).map((e) => e.kind)).toEqual(['ringing']);
    expect(h.lookupsFor(request.callId)).toEqual([{ fresh: false }, { fresh: true }]);

    // A forgery is refused by both, and delivers nothing.
    const forged = twilioCallback('not-the-token', accountSid, 'completed', request.statusCallbackUrl);
    expect((await post(request.statusCallbackUrl, forged, 'application/x-www-form-urlencoded')).status).toBe(401);
    expect(h.lookupsFor(request.callId)).toHaveLength(4);
    expect(h.eventsFor(request.callId).map((e) => e.kind)).toEqual(['ringing']);

    // An adapter built from fresh credentials that refuses is not asked about again.
    const plain = h.request('twilio');
    const forgedPlain = twilioCallback('not-the-token', accountSid, 'completed', plain.statusCallbackUrl);
    expect((await post(plain.statusCallbackUrl, forgedPlain, 'application/x-www-form-urlencoded')).status).toBe(401);
    expect(h.lookupsFor(plain.callId)).toEqual([{ fresh: false }]);
  });

  it('refuses a signed Telnyx event whose client_state names another call', async () => {
    const request = h.request('telnyx');
    const elsewhere = telnyxCallback(h.telnyxPrivateKey, 'call.answered');
    expect((await post(request.statusCallbackUrl, elsewhere, 'application/json')).status).toBe(400);
    expect(h.eventsFor(request.callId)).toEqual([]);
  });

  it('answers an unknown call as a bad signature (401, nothing revealed), 404 for an unknown provider, 400 without a usable call id', async () => {
    const body = { headers: {}, rawBody: Buffer.from('CallStatus=completed') };
    const form = 'application/x-www-form-urlencoded';
    const unknown = await post(callbackUrlFor(h.routerUrl, 'twilio', 'aaaaaaaaaaaaaaaaaaaaaaaa'), body, form);
    const unsigned = await post(h.request('twilio').statusCallbackUrl, body, form);
    expect([unknown.status, unsigned.status]).toEqual([401, 401]);
    expect((await post(`${h.routerUrl}/telephony/plivo/events?callId=${CALL_ID}`, body, form)).status).toBe(404);
    for (const query of ['', '?callId=', '?callId=a%2Fb', `?callId=${CALL_ID}&callId=${CALL_ID}`])
      expect((await post(`${h.routerUrl}/telephony/twilio/events${query}`, body, form)).status, query).toBe(400);
  });
});

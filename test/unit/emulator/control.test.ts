// The control API a chaos harness drives an emulator process with: off unless asked for; faults and
// dial faults set and read back; the calls the emulator saw, with our service's call id read from
// each provider's callback URL; idle.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatedCallView, type Emulator } from '../../../src/emulator';
import { numberEnding, startEmulatorAndReceiver, type Receiver } from './receiver';

const account = `AC${randomBytes(16).toString('hex')}`;
const authorization = `Basic ${Buffer.from(`${account}:${randomBytes(16).toString('hex')}`).toString('base64')}`;
/** The emulator reads the Vonage application from the JWT's claims; it checks no signature. */
const vonageJwt = [{ alg: 'RS256', typ: 'JWT' }, { application_id: randomUUID() }, 'signature']
  .map((part) => Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url'))
  .join('.');
const BUSY = '1486';

let emulator: Emulator;
let url: string;
let receiver: Receiver;
let stop: () => Promise<void>;
beforeAll(async () => ({ emulator, url, receiver, stop } = await startEmulatorAndReceiver({ control: true })));
afterAll(() => stop());

const control = (method: 'GET' | 'PUT', path: string, body?: string): Promise<Response> =>
  fetch(`${url}/emulator${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body,
  });
const put = (path: string, value: unknown): Promise<Response> => control('PUT', path, JSON.stringify(value));
const getJson = async <T>(path: string): Promise<T> => (await (await control('GET', path)).json()) as T;

/** The callback URL our service gives a provider: its own call id in the query string. */
const callbackUrl = (provider: string, callId: string): string =>
  `${receiver.url}/telephony/${provider}/events?callId=${encodeURIComponent(callId)}`;

async function twilioDial(to: string, statusCallback?: string): Promise<Response> {
  const form = new URLSearchParams({ To: to, From: '+14155550100', Twiml: '<Response><Say>Hi.</Say></Response>' });
  if (statusCallback) form.set('StatusCallback', statusCallback);
  return fetch(`${url}/2010-04-01/Accounts/${account}/Calls.json`, {
    method: 'POST',
    headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
}

const postJson = (path: string, token: string, body: unknown): Promise<Response> =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('control API', () => {
  it('is off by default: its paths are unknown', async () => {
    const plain = createEmulator({ port: 0, speedFactor: 0.01, vonageSignatureSecret: 'unused' });
    const { url: plainUrl } = await plain.start();
    try {
      for (const path of ['/emulator/calls', '/emulator/faults', '/emulator/dial-faults', '/emulator/idle']) {
        expect((await fetch(`${plainUrl}${path}`)).status, path).toBe(404);
      }
    } finally {
      await plain.stop();
    }
  });

  it('sets faults and reads them back with the counters; null and {} turn them off', async () => {
    const faults = {
      seed: 7,
      refuseShare: 0,
      lostAnswer: { share: 0, kinds: ['timeout', 'drop'] },
      callbacks: { lateShare: 0, maxDelayMs: 100, duplicateShare: 0 },
      timeoutHoldMs: 500,
    };
    expect((await put('/faults', faults)).status).toBe(204);
    expect(await getJson('/faults')).toEqual({
      faults,
      injected: { refused: 0, lostAnswers: 0, late: 0, duplicated: 0, lost: 0 },
    });
    expect(emulator.faults().faults).toEqual(faults);

    expect((await put('/faults', { refuseShare: 1 })).status).toBe(204);
    expect((await twilioDial(numberEnding(BUSY))).status).toBe(503);
    expect(await getJson('/faults')).toMatchObject({ faults: { refuseShare: 1 }, injected: { refused: 1 } });

    expect((await put('/faults', null)).status).toBe(204);
    expect(await getJson('/faults')).toMatchObject({ faults: null, injected: { refused: 1 } });
    expect((await put('/faults', {})).status).toBe(204);
    expect(await getJson('/faults')).toMatchObject({ faults: null });
    expect((await twilioDial(numberEnding(BUSY))).status).toBe(201);
  });

  it('answers 400 naming every problem of a malformed body, and keeps the faults it had', async () => {
    expect((await put('/faults', { refuseShare: 0.25 })).status).toBe(204);
    const bad = await put('/faults', { refuseShare: 2, lostAnswer: { share: 0.5 }, callbacks: [], bogus: true });
    expect(bad.status).toBe(400);
    const { error } = (await bad.json()) as { error: string };
    for (const field of ['refuseShare', 'lostAnswer.kinds', 'callbacks', 'bogus']) expect(error).toContain(field);

    expect((await control('PUT', '/faults', '{not json')).status).toBe(400);
    expect((await control('PUT', '/faults')).status).toBe(400);
    expect((await put('/faults', { lostAnswer: { share: 1, kinds: ['explode'] } })).status).toBe(400);
    expect((await put('/faults', [1])).status).toBe(400);
    expect(await getJson('/faults')).toMatchObject({ faults: { refuseShare: 0.25 } });
    expect((await put('/faults', null)).status).toBe(204);
  });

  it('sets the every-th dial faults and lists the lost answers', async () => {
    expect((await put('/dial-faults', { every: 0, kinds: [] })).status).toBe(400);
    expect((await put('/dial-faults', { every: 1, kinds: ['answer-500'] })).status).toBe(204);
    const to = numberEnding(BUSY);
    expect((await twilioDial(to)).status).toBe(500);
    expect((await put('/dial-faults', null)).status).toBe(204);
    expect((await twilioDial(numberEnding(BUSY))).status).toBe(201);
    const { lost } = await getJson<{ lost: { to: string; kind: string; provider: string }[] }>('/dial-faults');
    expect(lost.filter((f) => f.to === to)).toEqual([
      expect.objectContaining({ provider: 'twilio', kind: 'answer-500' }),
    ]);
  });

  it('lists the calls with our call id read from each provider’s callback URL, then reports idle', async () => {
    const ids = { twilio: randomUUID(), vonage: randomUUID(), telnyx: randomUUID() };
    const twilio = await twilioDial(numberEnding(BUSY), callbackUrl('twilio', ids.twilio));
    const { sid } = (await twilio.json()) as { sid: string };
    const bare = (await (await twilioDial(numberEnding(BUSY))).json()) as { sid: string };
    const vonage = await postJson('/v1/calls', vonageJwt, {
      to: [{ type: 'phone', number: numberEnding(BUSY).slice(1) }],
      from: { type: 'phone', number: '14155550101' },
      ncco: [{ action: 'talk', text: 'Hi.' }],
      event_url: [callbackUrl('vonage', ids.vonage)],
    });
    const { uuid } = (await vonage.json()) as { uuid: string };
    const telnyx = await postJson('/v2/calls', 'KEY1', {
      connection_id: 'connection-1',
      to: numberEnding(BUSY),
      from: '+14155550102',
      webhook_url: callbackUrl('telnyx', ids.telnyx),
    });
    const { data } = (await telnyx.json()) as { data: { call_control_id: string } };

    const { calls } = await getJson<{ calls: EmulatedCallView[] }>('/calls');
    const serviceCallId = (providerCallId: string): string | null | undefined =>
      calls.find((c) => c.providerCallId === providerCallId)?.serviceCallId;
    expect(serviceCallId(sid)).toBe(ids.twilio);
    expect(serviceCallId(uuid)).toBe(ids.vonage);
    expect(serviceCallId(data.call_control_id)).toBe(ids.telnyx);
    expect(serviceCallId(bare.sid)).toBeNull();
    expect(calls.find((c) => c.providerCallId === sid)).toMatchObject({
      provider: 'twilio',
      placedAt: expect.any(Number),
    });
    expect(emulator.calls().find((c) => c.providerCallId === sid)?.serviceCallId).toBe(ids.twilio);

    expect(await getJson('/idle')).toEqual({ idle: true });
    const ended = await getJson<{ calls: EmulatedCallView[] }>('/calls');
    expect(ended.calls.every((c) => c.state === 'ended')).toBe(true);
  });
});

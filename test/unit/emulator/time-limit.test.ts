// Each provider's time limit in the emulator, over its real HTTP API: a call still connected that long
// after answer is ended by the provider with its usual completed callbacks (Telnyx's hangup cause
// `time_limit`), a limit out of the API's range is refused in its error shape, and none asked is the
// provider's own.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatedCallView, Emulator } from '../../../src/emulator';
import { numberEnding, OPENING_LINE, startEmulatorAndReceiver, type Received, type Receiver } from './receiver';

let emulator: Emulator;
let url: string;
let receiver: Receiver;
let stop: () => Promise<void>;
beforeAll(async () => ({ emulator, url, receiver, stop } = await startEmulatorAndReceiver()));
afterAll(() => stop());

const view = (id: string): EmulatedCallView => emulator.calls().find((c) => c.providerCallId === id)!;
/** Nobody on the line hangs up on a number ending 1440 (the emulator's stays-on-line outcome). */
const STAYS_ON_LINE = '1440';
const timeLimited = { outcome: 'completed', hungUpBy: 'time-limit' };

describe('twilio TimeLimit', () => {
  const account = `AC${randomBytes(16).toString('hex')}`;
  const authorization = `Basic ${Buffer.from(`${account}:${randomBytes(16).toString('hex')}`).toString('base64')}`;
  const params = (r: Received): Record<string, string> => Object.fromEntries(new URLSearchParams(r.body));

  async function dial(to: string, path: string, timeLimit?: string): Promise<Response> {
    const form = new URLSearchParams({
      To: to,
      From: '+14155550100',
      Twiml: `<Response><Say>${OPENING_LINE}</Say></Response>`,
      StatusCallback: `${receiver.url}${path}`,
      ...(timeLimit === undefined ? {} : { TimeLimit: timeLimit }),
    });
    for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
    return fetch(`${url}/2010-04-01/Accounts/${account}/Calls.json`, {
      method: 'POST',
      headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
  }

  it('ends a call still connected at its TimeLimit, with the completed callback', async () => {
    const path = `/twilio/${randomUUID()}`;
    const res = await dial(numberEnding(STAYS_ON_LINE), path, '60');
    expect(res.status).toBe(201);
    const { sid } = (await res.json()) as { sid: string };
    const received = await receiver.waitFor(path, (r) => params(r).CallStatus === 'completed');
    expect(received.map((r) => params(r).CallStatus)).toEqual(['initiated', 'ringing', 'in-progress', 'completed']);
    expect(params(received.at(-1)!).CallDuration).toBe('60');
    expect(view(sid)).toMatchObject({ timeLimitSeconds: 60, end: timeLimited });
  });

  it('refuses a TimeLimit under a minute or over four hours with error 13216; none asked is four hours', async () => {
    for (const timeLimit of ['59', '14401', '-1', 'ninety']) {
      const to = numberEnding(STAYS_ON_LINE);
      const res = await dial(to, `/twilio/${randomUUID()}`, timeLimit);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 13216, message: `Invalid TimeLimit value (${timeLimit})` });
      expect(emulator.callsTo(to)).toBe(0);
    }
    const res = await dial(numberEnding('1486'), `/twilio/${randomUUID()}`);
    const { sid } = (await res.json()) as { sid: string };
    expect(view(sid).timeLimitSeconds).toBe(14_400);
  });
});

describe('vonage length_timer', () => {
  const applicationId = randomUUID();
  // The emulator reads the application from the JWT's claims; it checks no signature.
  const jwt = [{ alg: 'RS256', typ: 'JWT' }, { application_id: applicationId, jti: randomUUID() }, 'signature']
    .map((part) => Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url'))
    .join('.');
  const status = (r: Received): unknown => (JSON.parse(r.body) as { status?: unknown }).status;

  async function dial(to: string, path: string, lengthTimer?: unknown): Promise<Response> {
    return fetch(`${url}/v1/calls`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${jwt}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        to: [{ type: 'phone', number: to.slice(1) }],
        from: { type: 'phone', number: '14155550100' },
        ncco: [{ action: 'talk', text: OPENING_LINE }],
        event_url: [`${receiver.url}${path}`],
        event_method: 'POST',
        ...(lengthTimer === undefined ? {} : { length_timer: lengthTimer }),
      }),
    });
  }

  it('ends a call still connected at its length_timer, with the completed event', async () => {
    const path = `/vonage/${randomUUID()}`;
    const res = await dial(numberEnding(STAYS_ON_LINE), path, 45);
    expect(res.status).toBe(201);
    const { uuid } = (await res.json()) as { uuid: string };
    const received = await receiver.waitFor(path, (r) => status(r) === 'completed');
    expect(received.map(status)).toEqual(['started', 'ringing', 'answered', 'completed']);
    expect(JSON.parse(received.at(-1)!.body)).toMatchObject({ duration: '45' });
    expect(view(uuid)).toMatchObject({ timeLimitSeconds: 45, end: timeLimited });
  });

  it('refuses a length_timer out of 1 to 86400 as an invalid parameter; none asked is two hours', async () => {
    for (const lengthTimer of [0, 86_401, 90.5, '90']) {
      const to = numberEnding(STAYS_ON_LINE);
      const res = await dial(to, `/vonage/${randomUUID()}`, lengthTimer);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        title: 'Bad Request',
        invalid_parameters: [{ name: 'length_timer', reason: 'must be an integer from 1 to 86400' }],
      });
      expect(emulator.callsTo(to)).toBe(0);
    }
    const res = await dial(numberEnding('1486'), `/vonage/${randomUUID()}`);
    const { uuid } = (await res.json()) as { uuid: string };
    expect(view(uuid).timeLimitSeconds).toBe(7_200);
  });
});

describe('telnyx time_limit_secs', () => {
  const apiKey = `KEY${randomBytes(16).toString('hex')}`;
  type TelnyxEvent = { event_type: string; payload: Record<string, unknown> };
  const event = (r: Received): TelnyxEvent => (JSON.parse(r.body) as { data: TelnyxEvent }).data;

  async function dial(to: string, path: string, timeLimitSecs?: unknown): Promise<Response> {
    return fetch(`${url}/v2/calls`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        connection_id: 'connection-1',
        to,
        from: '+14155550100',
        webhook_url: `${receiver.url}${path}`,
        ...(timeLimitSecs === undefined ? {} : { time_limit_secs: timeLimitSecs }),
      }),
    });
  }

  it('ends a call still connected at its time_limit_secs: call.hangup with hangup_cause time_limit', async () => {
    const path = `/telnyx/${randomUUID()}`;
    const res = await dial(numberEnding(STAYS_ON_LINE), path, 30);
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { call_control_id: string } };
    const received = await receiver.waitFor(path, (r) => event(r).event_type === 'call.hangup');
    expect(received.map((r) => event(r).event_type)).toEqual(['call.initiated', 'call.answered', 'call.hangup']);
    const hangup = event(received.at(-1)!).payload;
    expect(hangup).toMatchObject({ hangup_cause: 'time_limit', sip_hangup_cause: '200' });
    const lasted = Date.parse(String(hangup.end_time)) - Date.parse(String(hangup.start_time));
    // 300 ms, give or take the few milliseconds by which Date.now() and the timers' clock differ.
    expect(lasted).toBeGreaterThanOrEqual(30 * 1000 * 0.01 - 5);
    expect(view(data.call_control_id)).toMatchObject({ timeLimitSeconds: 30, end: timeLimited });
  });

  it('refuses a time_limit_secs out of 30 to 14400 with 422; none asked is four hours', async () => {
    for (const timeLimitSecs of [29, 14_401, 60.5, '60']) {
      const to = numberEnding(STAYS_ON_LINE);
      const res = await dial(to, `/telnyx/${randomUUID()}`, timeLimitSecs);
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({
        errors: [{ code: '10015', source: { pointer: '/time_limit_secs' } }],
      });
      expect(emulator.callsTo(to)).toBe(0);
    }
    const res = await dial(numberEnding('1486'), `/telnyx/${randomUUID()}`);
    const { data } = (await res.json()) as { data: { call_control_id: string } };
    expect(view(data.call_control_id).timeLimitSeconds).toBe(14_400);
  });
});

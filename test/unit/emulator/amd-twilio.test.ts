// Twilio's asynchronous answering-machine detection in the emulator, over its real HTTP API: the
// AsyncAmdStatusCallback, answered_by, and a message left with new TwiML.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCallView, type Emulator } from '../../../src/emulator';
import { MACHINE_GREETING, speakingSeconds } from '../../../src/emulator/scenarios';
import {
  numberEnding,
  OPENING_LINE,
  startEmulatorAndReceiver,
  twilioSigned,
  VOICEMAIL,
  type Received,
  type Receiver,
} from './receiver';

const account = `AC${randomBytes(16).toString('hex')}`;
const authToken = randomBytes(16).toString('hex');
const authorization = `Basic ${Buffer.from(`${account}:${authToken}`).toString('base64')}`;

let emulator: Emulator;
let url: string;
let receiver: Receiver;
let stop: () => Promise<void>;
beforeAll(async () => ({ emulator, url, receiver, stop } = await startEmulatorAndReceiver()));
afterAll(() => stop());

const post = (path: string, form: URLSearchParams | Record<string, string>): Promise<Response> =>
  fetch(`${url}/2010-04-01/Accounts/${account}${path}`, {
    method: 'POST',
    headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });

const fetchCall = async (sid: string): Promise<Record<string, unknown>> =>
  (await (
    await fetch(`${url}/2010-04-01/Accounts/${account}/Calls/${sid}.json`, {
      headers: { Authorization: authorization },
    })
  ).json()) as Record<string, unknown>;

const params = (r: Received): Record<string, string> => Object.fromEntries(new URLSearchParams(r.body));
/** A status callback by its CallStatus, the AMD callback by its AnsweredBy. */
const label = (r: Received): string => params(r).CallStatus ?? `AnsweredBy=${params(r).AnsweredBy}`;
const completed = (r: Received): boolean => params(r).CallStatus === 'completed';
/** The machine's greeting starts 0.8 s after answer; a detector's durations count from answer. */
const GREETING_OVER = 0.8 + speakingSeconds(MACHINE_GREETING);
const ms = (seconds: number): string => String(Math.round(seconds * 1000));
const view = (sid: string): EmulatedCallView => emulator.calls().find((c) => c.providerCallId === sid)!;
const said = (call: EmulatedCallView): [string, string][] => call.spoken.map((u) => [u.speaker, u.text]);

/** Dials with every status event and (unless `mode` is null) asynchronous AMD to the same URL. */
async function dial(
  lastFour: string,
  mode: 'Enable' | 'DetectMessageEnd' | null,
): Promise<{ sid: string; path: string }> {
  const path = `/twilio/${randomUUID()}`;
  const form = new URLSearchParams({
    To: numberEnding(lastFour),
    From: '+14155550100',
    Twiml: `<Response><Say>${OPENING_LINE}</Say></Response>`,
    StatusCallback: `${receiver.url}${path}`,
    Record: 'true',
  });
  for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
  if (mode) {
    form.set('MachineDetection', mode);
    form.set('AsyncAmd', 'true');
    form.set('AsyncAmdStatusCallback', `${receiver.url}${path}`);
    form.set('AsyncAmdStatusCallbackMethod', 'POST');
  }
  const res = await post('/Calls.json', form);
  expect(res.status).toBe(201);
  const { sid } = (await res.json()) as { sid: string };
  return { sid, path };
}

describe('twilio answering-machine detection', () => {
  it('DetectMessageEnd reports a machine once its beep sounds; new TwiML leaves the message and hangs up', async () => {
    const { sid, path } = await dial('6200', 'DetectMessageEnd');
    await receiver.waitFor(path, (r) => params(r).AnsweredBy === 'machine_end_beep');
    expect(await fetchCall(sid)).toMatchObject({ status: 'in-progress', answered_by: 'machine_end_beep' });
    const twiml = `<Response><Say>${VOICEMAIL}</Say><Hangup/></Response>`;
    expect((await post(`/Calls/${sid}.json`, { Twiml: twiml })).status).toBe(200);

    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['initiated', 'ringing', 'in-progress', 'AnsweredBy=machine_end_beep', 'completed']);
    expect(got.every((r) => twilioSigned(r, authToken))).toBe(true);
    expect(params(got[3])).toEqual({
      AccountSid: account,
      CallSid: sid,
      AnsweredBy: 'machine_end_beep',
      // The beep follows the greeting by 0.4 s.
      MachineDetectionDuration: ms(GREETING_OVER + 0.4),
    });

    const call = view(sid);
    expect(call).toMatchObject({
      machineDetection: 'DetectMessageEnd',
      answeredBy: 'machine',
      end: { outcome: 'completed', hungUpBy: 'caller' },
    });
    expect(said(call)).toEqual([
      ['human', MACHINE_GREETING],
      ['agent', VOICEMAIL],
    ]);
    // The recording (and the billed duration) runs to the end of the message.
    expect(Number((await fetchCall(sid)).duration)).toBeGreaterThanOrEqual(
      Math.floor(GREETING_OVER + 0.4 + speakingSeconds(VOICEMAIL)),
    );
    const events = (await (
      await fetch(`${url}/2010-04-01/Accounts/${account}/Calls/${sid}/Events.json`, {
        headers: { Authorization: authorization },
      })
    ).json()) as { events: { request: { parameters: Record<string, string> } }[] };
    expect(events.events.some((e) => e.request.parameters.answered_by === 'machine_end_beep')).toBe(true);
  });

  it('DetectMessageEnd reports a machine without a beep at the silence after its greeting', async () => {
    const { sid, path } = await dial('6201', 'DetectMessageEnd');
    const got = await receiver.waitFor(path, (r) => params(r).AnsweredBy !== undefined);
    expect(params(got[got.length - 1])).toMatchObject({
      AnsweredBy: 'machine_end_silence',
      MachineDetectionDuration: ms(GREETING_OVER + 2),
    });
    expect((await post(`/Calls/${sid}.json`, { Status: 'completed' })).status).toBe(200);
    await receiver.waitFor(path, completed);
  });

  it('Enable reports machine_start while the greeting plays; the caller then hangs up', async () => {
    const { sid, path } = await dial('6201', 'Enable');
    const seen = await receiver.waitFor(path, (r) => params(r).AnsweredBy !== undefined);
    expect(params(seen[seen.length - 1])).toMatchObject({
      AnsweredBy: 'machine_start',
      MachineDetectionDuration: '4300',
    });
    expect(await fetchCall(sid)).toMatchObject({ status: 'in-progress', answered_by: 'machine_start' });
    expect((await post(`/Calls/${sid}.json`, { Status: 'completed' })).status).toBe(200);

    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['initiated', 'ringing', 'in-progress', 'AnsweredBy=machine_start', 'completed']);
    const call = view(sid);
    expect(call).toMatchObject({ answeredBy: 'machine', end: { outcome: 'completed', hungUpBy: 'caller' } });
    // The greeting played, and the agent's <Say> never did.
    expect(call.spoken.length).toBeGreaterThan(0);
    expect(call.spoken.every((u) => u.speaker === 'human')).toBe(true);
  });

  it('reports a fax at once (even with DetectMessageEnd), and the fax hangs up by itself', async () => {
    const { sid, path } = await dial('6202', 'DetectMessageEnd');
    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['initiated', 'ringing', 'in-progress', 'AnsweredBy=fax', 'completed']);
    expect(params(got[3]).MachineDetectionDuration).toBe('2500');
    expect(view(sid)).toMatchObject({
      answeredBy: 'fax',
      spoken: [],
      end: { outcome: 'completed', hungUpBy: 'callee' },
    });
    expect(Number((await fetchCall(sid)).duration)).toBe(20);
  });

  it('takes the person with a long greeting for a human once the greeting is over, and never for a machine', async () => {
    const { sid, path } = await dial('6203', 'DetectMessageEnd');
    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['initiated', 'ringing', 'in-progress', 'AnsweredBy=human', 'completed']);
    const call = view(sid);
    const [greeting] = call.spoken;
    expect(greeting.speaker).toBe('human');
    expect(speakingSeconds(greeting.text)).toBeGreaterThan(4);
    expect(params(got[3]).MachineDetectionDuration).toBe(
      String(Math.round((0.8 + speakingSeconds(greeting.text)) * 1000)),
    );
    expect(call).toMatchObject({ scenarioId: 'long-greeting', answeredBy: 'human', end: { hungUpBy: 'caller' } });
    expect(said(call)[1]).toEqual(['agent', OPENING_LINE]);
    expect(said(call)).toContainEqual(['human', 'Tuesday at 3pm works for me.']);
  });

  it('reports a person as human and a silent line as unknown 2.5 s after answer', async () => {
    const [person, silent] = await Promise.all([dial('2671', 'Enable'), dial('1200', 'Enable')]);
    for (const [{ path }, answeredBy] of [
      [person, 'human'],
      [silent, 'unknown'],
    ] as const) {
      const got = await receiver.waitFor(path, completed);
      expect(got.filter((r) => params(r).AnsweredBy).map(params)).toEqual([
        expect.objectContaining({ AnsweredBy: answeredBy, MachineDetectionDuration: '2500' }),
      ]);
    }
    expect(view(person.sid).spoken[0]).toMatchObject({ speaker: 'agent', text: OPENING_LINE });
  });

  it('without AMD takes the greeting for a person: the agent speaks after the beep and hangs up', async () => {
    const { sid, path } = await dial('6200', null);
    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['initiated', 'ringing', 'in-progress', 'completed']);
    const call = view(sid);
    expect(call).toMatchObject({
      machineDetection: null,
      answeredBy: null,
      end: { outcome: 'completed', hungUpBy: 'caller' },
    });
    expect(said(call)).toEqual([
      ['human', MACHINE_GREETING],
      ['agent', OPENING_LINE],
    ]);
    // The opening line comes 0.5 s after the beep.
    expect(call.spoken[1].offsetSeconds).toBeCloseTo(GREETING_OVER + 0.4 + 0.5, 5);
    expect((await fetchCall(sid)).answered_by).toBeNull();
  });

  it('refuses machine detection it cannot run, and new TwiML for a call that is not in progress', async () => {
    const base = { To: numberEnding('2671'), From: '+14155550100', Twiml: '<Response><Say>Hi</Say></Response>' };
    const bogus = await post('/Calls.json', { ...base, MachineDetection: 'Sometimes', AsyncAmd: 'true' });
    expect(bogus.status).toBe(400);
    expect(await bogus.json()).toMatchObject({ code: 21234 });
    for (const asyncAmd of [{}, { AsyncAmd: 'false' }] as Record<string, string>[]) {
      const sync = await post('/Calls.json', { ...base, MachineDetection: 'Enable', ...asyncAmd });
      expect(sync.status).toBe(400);
      expect(await sync.json()).toMatchObject({ code: 21234, message: expect.stringMatching(/AsyncAmd=true/) });
    }

    // Without AsyncAmdStatusCallback Twilio only warns: the call goes ahead, answered_by shows the verdict.
    const path = `/twilio/${randomUUID()}`;
    const quiet = await post('/Calls.json', {
      ...base,
      To: numberEnding('6202'),
      StatusCallback: `${receiver.url}${path}`,
      MachineDetection: 'Enable',
      AsyncAmd: 'true',
    });
    expect(quiet.status).toBe(201);
    const { sid } = (await quiet.json()) as { sid: string };
    expect((await post(`/Calls/${sid}.json`, { Twiml: '<Response><Say>Too soon</Say></Response>' })).status).toBe(400);
    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['completed']);
    expect(await fetchCall(sid)).toMatchObject({ answered_by: 'fax' });

    const late = await post(`/Calls/${sid}.json`, { Twiml: `<Response><Say>${VOICEMAIL}</Say><Hangup/></Response>` });
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ code: 21220, message: 'Call is not in-progress. Cannot redirect.' });
  });
});

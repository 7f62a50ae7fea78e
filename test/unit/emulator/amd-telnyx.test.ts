// Telnyx's answering-machine detection in the emulator, over its real HTTP API: the detection and
// greeting webhooks per mode, and a message left with the speak command.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCallView, type Emulator } from '../../../src/emulator';
import { MACHINE_GREETING } from '../../../src/emulator/scenarios';
import {
  numberEnding,
  OPENING_LINE,
  startEmulatorAndReceiver,
  telnyxSigned,
  VOICEMAIL,
  type Received,
  type Receiver,
} from './receiver';

const apiKey = `KEY${randomBytes(16).toString('hex')}`;

let emulator: Emulator;
let url: string;
let receiver: Receiver;
let stop: () => Promise<void>;
beforeAll(async () => ({ emulator, url, receiver, stop } = await startEmulatorAndReceiver()));
afterAll(() => stop());

const post = (path: string, body: unknown): Promise<Response> =>
  fetch(`${url}/v2${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

const clientState = (state: object): string => Buffer.from(JSON.stringify(state)).toString('base64');

interface TelnyxEvent {
  event_type: string;
  payload: Record<string, unknown>;
}
const event = (r: Received): TelnyxEvent => (JSON.parse(r.body) as { data: TelnyxEvent }).data;
/** The event type, with the result of a machine detection event. */
const label = (r: Received): string => {
  const { event_type: type, payload } = event(r);
  return type.startsWith('call.machine.') ? `${type}:${String(payload.result)}` : type;
};
const is = (type: string) => (r: Received) => event(r).event_type === type;
const hungUp = is('call.hangup');
const view = (id: string): EmulatedCallView => emulator.calls().find((c) => c.providerCallId === id)!;

async function dial(lastFour: string, amd?: string): Promise<{ id: string; path: string; state: string }> {
  const path = `/telnyx/${randomUUID()}`;
  const state = clientState({ callId: path, openingLine: OPENING_LINE });
  const res = await post('/calls', {
    connection_id: 'connection-1',
    to: numberEnding(lastFour),
    from: '+14155550100',
    webhook_url: `${receiver.url}${path}`,
    client_state: state,
    ...(amd === undefined ? {} : { answering_machine_detection: amd }),
  });
  expect(res.status).toBe(200);
  const { data } = (await res.json()) as { data: { call_control_id: string } };
  return { id: data.call_control_id, path, state };
}

const speak = (id: string, body: Record<string, unknown>): Promise<Response> =>
  post(`/calls/${encodeURIComponent(id)}/actions/speak`, { voice: 'female', language: 'en-US', ...body });

describe('telnyx answering-machine detection', () => {
  it('greeting_end: machine, beep_detected; speak leaves the message once with its own client_state; the caller hangs up', async () => {
    const { id, path, state } = await dial('6200', 'greeting_end');
    await receiver.waitFor(path, is('call.machine.greeting.ended'));
    const voicemailState = clientState({ callId: path, openingLine: '', purpose: 'voicemail' });
    const command = { payload: VOICEMAIL, client_state: voicemailState, command_id: 'voicemail-1' };
    const spoken = await speak(id, command);
    expect(spoken.status).toBe(200);
    expect(await spoken.json()).toEqual({ data: { result: 'ok' } });
    // A retried command (the same command_id) is acknowledged and not carried out again.
    expect((await speak(id, command)).status).toBe(200);
    await receiver.waitFor(path, is('call.speak.ended'));
    expect(view(id).state).toBe('answered');
    expect((await post(`/calls/${encodeURIComponent(id)}/actions/hangup`, {})).status).toBe(200);

    const got = await receiver.waitFor(path, hungUp);
    expect(got.map(label)).toEqual([
      'call.initiated',
      'call.answered',
      'call.machine.detection.ended:machine',
      'call.machine.greeting.ended:beep_detected',
      'call.speak.started',
      'call.speak.ended',
      'call.hangup',
    ]);
    expect(got.every((r) => telnyxSigned(r, emulator.telnyxPublicKeyBase64))).toBe(true);
    const [, , detected, , started, ended, hangup] = got.map(event);
    expect(detected.payload).toMatchObject({
      call_control_id: id,
      call_leg_id: expect.any(String),
      call_session_id: expect.any(String),
      connection_id: 'connection-1',
      client_state: state,
      from: '+14155550100',
      to: view(id).to,
    });
    expect(started.payload.client_state).toBe(voicemailState);
    expect(ended.payload).toMatchObject({ client_state: voicemailState, status: 'completed' });
    expect(hangup.payload).toMatchObject({
      hangup_cause: 'normal_clearing',
      hangup_source: 'caller',
      client_state: state,
    });

    const call = view(id);
    expect(call).toMatchObject({ machineDetection: 'greeting_end', answeredBy: 'machine' });
    expect(call.spoken.map((u) => [u.speaker, u.text])).toEqual([
      ['human', MACHINE_GREETING],
      ['agent', VOICEMAIL],
    ]);
    const conversations = (await (
      await fetch(`${url}/v2/ai/conversations?metadata->telnyx_call_control_id=eq.${id}`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      })
    ).json()) as { data: { id: string }[] };
    const messages = (await (
      await fetch(`${url}/v2/ai/conversations/${conversations.data[0].id}/messages`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      })
    ).json()) as { data: { role: string; text: string }[] };
    expect(messages.data[0]).toMatchObject({ role: 'assistant', text: VOICEMAIL });
  });

  it('a message cut short by the hang-up ends call_hangup, before the call.hangup; one over 3,000 characters is refused', async () => {
    // Before, a speak cut short sent no call.speak.ended at all (Telnyx sends one with status call_hangup).
    const { id, path } = await dial('6200', 'greeting_end');
    await receiver.waitFor(path, is('call.machine.greeting.ended'));
    const voicemailState = clientState({ callId: path, openingLine: '', purpose: 'voicemail' });
    const tooLong = await speak(id, { payload: 'a'.repeat(3001), client_state: voicemailState });
    expect(tooLong.status).toBe(422);
    expect(((await tooLong.json()) as { errors: { source: { pointer: string } }[] }).errors[0]!.source.pointer).toBe(
      '/payload',
    );
    expect((await speak(id, { payload: VOICEMAIL, client_state: voicemailState })).status).toBe(200);
    await receiver.waitFor(path, is('call.speak.started'));
    expect((await post(`/calls/${encodeURIComponent(id)}/actions/hangup`, {})).status).toBe(200);
    const got = await receiver.waitFor(path, hungUp);
    expect(got.map(label).slice(-3)).toEqual(['call.speak.started', 'call.speak.ended', 'call.hangup']);
    expect(event(got.at(-2)!).payload).toMatchObject({ status: 'call_hangup', client_state: voicemailState });
  });

  it('greeting_end without a beep: ended; a message left and not hung up on is hung up on by the machine', async () => {
    const { id, path, state } = await dial('6201', 'greeting_end');
    await receiver.waitFor(path, is('call.machine.greeting.ended'));
    expect((await speak(id, { payload: VOICEMAIL })).status).toBe(200);
    const got = await receiver.waitFor(path, hungUp);
    expect(got.map(label)).toEqual([
      'call.initiated',
      'call.answered',
      'call.machine.detection.ended:machine',
      'call.machine.greeting.ended:ended',
      'call.speak.started',
      'call.speak.ended',
      'call.hangup',
    ]);
    // Without a client_state of its own, the speak events carry the call's.
    expect(got.map(event).filter((e) => e.event_type.startsWith('call.speak.'))).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ client_state: state }) }),
      expect.objectContaining({ payload: expect.objectContaining({ client_state: state }) }),
    ]);
    expect(event(got[got.length - 1]).payload.hangup_source).toBe('callee');
    expect(view(id).end).toEqual({ outcome: 'completed', hungUpBy: 'callee' });
  });

  it('detect: the verdict only; the caller hangs up on the machine', async () => {
    const { id, path } = await dial('6200', 'detect');
    await receiver.waitFor(path, is('call.machine.detection.ended'));
    expect((await post(`/calls/${encodeURIComponent(id)}/actions/hangup`, {})).status).toBe(200);
    const got = await receiver.waitFor(path, hungUp);
    expect(got.map(label)).toEqual([
      'call.initiated',
      'call.answered',
      'call.machine.detection.ended:machine',
      'call.hangup',
    ]);
  });

  it('detect_beep: the greeting end only when it beeps; unattended machines give up', async () => {
    const [beeps, silent] = await Promise.all([dial('6200', 'detect_beep'), dial('6201', 'detect_beep')]);
    const detected = 'call.machine.detection.ended:machine';
    expect((await receiver.waitFor(beeps.path, hungUp)).map(label)).toEqual([
      'call.initiated',
      'call.answered',
      detected,
      'call.machine.greeting.ended:beep_detected',
      'call.hangup',
    ]);
    expect((await receiver.waitFor(silent.path, hungUp)).map(label)).toEqual([
      'call.initiated',
      'call.answered',
      detected,
      'call.hangup',
    ]);
    expect(view(silent.id)).toMatchObject({ spoken: [{ speaker: 'human' }], end: { hungUpBy: 'callee' } });
  });

  it('reports a fax as a machine; its tones never end a greeting before it hangs up', async () => {
    const { id, path } = await dial('6202', 'greeting_end');
    const got = await receiver.waitFor(path, hungUp);
    expect(got.map(label)).toEqual([
      'call.initiated',
      'call.answered',
      'call.machine.detection.ended:machine',
      'call.hangup',
    ]);
    expect(view(id)).toMatchObject({ answeredBy: 'fax', spoken: [], end: { hungUpBy: 'callee' } });
  });

  it('reports the person with a long greeting as human and a silent line as not_sure', async () => {
    const [person, silent] = await Promise.all([dial('6203', 'greeting_end'), dial('1200', 'greeting_end')]);
    for (const [{ path }, result] of [
      [person, 'human'],
      [silent, 'not_sure'],
    ] as const) {
      const got = await receiver.waitFor(path, hungUp);
      expect(got.map(label)).toEqual([
        'call.initiated',
        'call.answered',
        `call.machine.detection.ended:${result}`,
        'call.hangup',
      ]);
    }
    expect(view(person.id)).toMatchObject({ scenarioId: 'long-greeting', answeredBy: 'human' });
    expect(view(person.id).spoken.map((u) => u.text)).toContain('Tuesday at 3pm works for me.');
  });

  it('with detection off (absent or disabled) takes the greeting for a person', async () => {
    for (const amd of [undefined, 'disabled']) {
      const { id, path } = await dial('6200', amd);
      expect((await receiver.waitFor(path, hungUp)).map(label)).toEqual([
        'call.initiated',
        'call.answered',
        'call.hangup',
      ]);
      expect(view(id)).toMatchObject({ machineDetection: null, answeredBy: null, end: { hungUpBy: 'caller' } });
      expect(view(id).spoken.map((u) => [u.speaker, u.text])).toEqual([
        ['human', MACHINE_GREETING],
        ['agent', OPENING_LINE],
      ]);
    }
  });

  it('refuses detection modes it does not run, and speak on a call that is not answered', async () => {
    for (const amd of ['detect_words', 'premium', 'sometimes', 42]) {
      const res = await post('/calls', {
        connection_id: 'connection-1',
        to: numberEnding('2671'),
        from: '+14155550100',
        webhook_url: `${receiver.url}/telnyx/refused`,
        answering_machine_detection: amd,
      });
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({
        errors: [{ code: '10015', source: { pointer: '/answering_machine_detection' } }],
      });
    }

    const { id, path } = await dial('6202', 'detect');
    const early = await speak(id, { payload: VOICEMAIL });
    expect(early.status).toBe(422);
    expect(await early.json()).toMatchObject({ errors: [{ code: '90018' }] });
    await receiver.waitFor(path, is('call.answered'));
    const blank = await speak(id, { payload: ' ' });
    expect(blank.status).toBe(422);
    expect(await blank.json()).toMatchObject({ errors: [{ source: { pointer: '/payload' } }] });
    await receiver.waitFor(path, hungUp);
    expect((await speak(id, { payload: VOICEMAIL })).status).toBe(422);
    expect(receiver.received(path).some(is('call.speak.started'))).toBe(false);
  });
});

// Vonage's advanced machine detection in the emulator, over its real HTTP API: the human and
// machine events (with detect_beep's sub_state), behavior hangup, and a message left with a
// transfer to an NCCO.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatedCallView, type Emulator } from '../../../src/emulator';
import { MACHINE_GREETING } from '../../../src/emulator/scenarios';
import {
  numberEnding,
  OPENING_LINE,
  startEmulatorAndReceiver,
  VOICEMAIL,
  vonageSigned,
  type Received,
  type Receiver,
} from './receiver';

const signatureSecret = randomBytes(16).toString('hex');
const applicationId = randomUUID();
/** The emulator reads the application from the JWT's claims; it checks no signature. */
const jwt = [{ alg: 'RS256', typ: 'JWT' }, { application_id: applicationId, jti: randomUUID() }, 'signature']
  .map((part) => Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url'))
  .join('.');

let emulator: Emulator;
let url: string;
let receiver: Receiver;
let stop: () => Promise<void>;
beforeAll(
  async () =>
    ({ emulator, url, receiver, stop } = await startEmulatorAndReceiver({ vonageSignatureSecret: signatureSecret })),
);
afterAll(() => stop());

const send = (method: 'POST' | 'PUT' | 'GET', path: string, body?: unknown): Promise<Response> =>
  fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${jwt}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const payload = (r: Received): Record<string, unknown> => JSON.parse(r.body) as Record<string, unknown>;
const label = (r: Received): string => {
  const { status, sub_state: subState } = payload(r);
  return subState ? `${String(status)}:${String(subState)}` : String(status);
};
const completed = (r: Received): boolean => payload(r).status === 'completed';
const view = (uuid: string): EmulatedCallView => emulator.calls().find((c) => c.providerCallId === uuid)!;

function dialBody(lastFour: string, path: string, amd?: unknown): Record<string, unknown> {
  return {
    to: [{ type: 'phone', number: numberEnding(lastFour).slice(1) }],
    from: { type: 'phone', number: '14155550100' },
    ncco: [{ action: 'talk', text: OPENING_LINE }],
    event_url: [`${receiver.url}${path}`],
    event_method: 'POST',
    ...(amd === undefined ? {} : { advanced_machine_detection: amd }),
  };
}

async function dial(lastFour: string, amd?: unknown): Promise<{ uuid: string; conversation: string; path: string }> {
  const path = `/vonage/${randomUUID()}`;
  const res = await send('POST', '/v1/calls', dialBody(lastFour, path, amd));
  expect(res.status).toBe(201);
  const { uuid, conversation_uuid: conversation } = (await res.json()) as { uuid: string; conversation_uuid: string };
  return { uuid, conversation, path };
}

const transfer = (texts: string[]): Record<string, unknown> => ({
  action: 'transfer',
  destination: { type: 'ncco', ncco: texts.map((text) => ({ action: 'talk', text, language: 'en-US' })) },
});

describe('vonage advanced machine detection', () => {
  it('detect_beep: machine, then beep_start; a transfer to a talk NCCO leaves the message and ends the call', async () => {
    const { uuid, conversation, path } = await dial('6200', {
      behavior: 'continue',
      mode: 'detect_beep',
      beep_timeout: 45,
    });
    await receiver.waitFor(path, (r) => payload(r).sub_state === 'beep_start');
    const [first, second] = ['Hi Grace, this is Ada from Acme Dental.', 'Please call us back. Thank you!'];
    expect((await send('PUT', `/v1/calls/${uuid}`, transfer([first, second]))).status).toBe(204);

    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['started', 'ringing', 'answered', 'machine', 'machine:beep_start', 'completed']);
    expect(got.every((r) => vonageSigned(r, signatureSecret))).toBe(true);
    expect(payload(got[3])).toEqual({
      from: '14155550100',
      to: view(uuid).to,
      uuid,
      conversation_uuid: conversation,
      status: 'machine',
      direction: 'outbound',
      timestamp: expect.any(String),
    });
    const call = view(uuid);
    expect(call).toMatchObject({
      machineDetection: 'detect_beep',
      answeredBy: 'machine',
      end: { outcome: 'completed', hungUpBy: 'caller' },
    });
    expect(call.spoken.map((u) => [u.speaker, u.text])).toEqual([
      ['human', MACHINE_GREETING],
      ['agent', `${first} ${second}`],
    ]);

    const events = (await (
      await send('GET', `/v1/conversations/${conversation}/events?event_type=audio:say&page_size=100`)
    ).json()) as { _embedded: { events: { body: { text: string } }[] } };
    expect(events._embedded.events.map((e) => e.body.text)).toEqual([`${first} ${second}`]);
  });

  it('detect_beep: a machine without a beep ends its greeting with beep_timeout; a fax hangs up before any', async () => {
    const amd = { behavior: 'continue', mode: 'detect_beep' };
    const [machine, fax] = await Promise.all([dial('6201', amd), dial('6202', amd)]);
    await receiver.waitFor(machine.path, (r) => payload(r).sub_state === 'beep_timeout');
    expect((await send('PUT', `/v1/calls/${machine.uuid}`, transfer([VOICEMAIL]))).status).toBe(204);
    const got = await receiver.waitFor(machine.path, completed);
    expect(got.map(label)).toEqual(['started', 'ringing', 'answered', 'machine', 'machine:beep_timeout', 'completed']);
    expect(view(machine.uuid).spoken.at(-1)).toMatchObject({ speaker: 'agent', text: VOICEMAIL });

    const faxed = await receiver.waitFor(fax.path, completed);
    expect(faxed.map(label)).toEqual(['started', 'ringing', 'answered', 'machine', 'completed']);
    expect(view(fax.uuid)).toMatchObject({ answeredBy: 'fax', end: { outcome: 'completed', hungUpBy: 'callee' } });
  });

  it('detect: the verdict only, while the greeting plays; the caller hangs up', async () => {
    const { uuid, path } = await dial('6200', { behavior: 'continue', mode: 'detect' });
    await receiver.waitFor(path, (r) => payload(r).status === 'machine');
    expect(view(uuid)).toMatchObject({ state: 'answered', spoken: [{ speaker: 'human', text: MACHINE_GREETING }] });
    expect((await send('PUT', `/v1/calls/${uuid}`, { action: 'hangup' })).status).toBe(204);
    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['started', 'ringing', 'answered', 'machine', 'completed']);
    expect(view(uuid).end).toEqual({ outcome: 'completed', hungUpBy: 'caller' });
  });

  it('behavior hangup: Vonage ends the call itself once it has reported the machine', async () => {
    const { uuid, path } = await dial('6200', { behavior: 'hangup', mode: 'detect_beep', beep_timeout: 120 });
    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['started', 'ringing', 'answered', 'machine', 'completed']);
    expect(view(uuid)).toMatchObject({ answeredBy: 'machine', end: { outcome: 'completed', hungUpBy: 'caller' } });
  });

  it('reports the person with a long greeting as human, a silent line too, and never a machine', async () => {
    const amd = { behavior: 'hangup', mode: 'detect_beep' };
    const [person, silent] = await Promise.all([dial('6203', amd), dial('1200', amd)]);
    for (const { path } of [person, silent]) {
      const got = await receiver.waitFor(path, completed);
      expect(got.map(label)).toEqual(['started', 'ringing', 'answered', 'human', 'completed']);
    }
    expect(view(person.uuid)).toMatchObject({ scenarioId: 'long-greeting', answeredBy: 'human' });
    expect(view(person.uuid).spoken.map((u) => u.text)).toContain('Tuesday at 3pm works for me.');
    expect(view(silent.uuid).answeredBy).toBe('unknown');
  });

  it('without advanced_machine_detection takes the greeting for a person', async () => {
    const { uuid, path } = await dial('6200');
    const got = await receiver.waitFor(path, completed);
    expect(got.map(label)).toEqual(['started', 'ringing', 'answered', 'completed']);
    expect(view(uuid)).toMatchObject({ machineDetection: null, answeredBy: null, end: { hungUpBy: 'caller' } });
    expect(view(uuid).spoken.map((u) => [u.speaker, u.text])).toEqual([
      ['human', MACHINE_GREETING],
      ['agent', OPENING_LINE],
    ]);
  });

  it('refuses an invalid advanced_machine_detection, and a transfer on a call that is not answered', async () => {
    const invalid = async (amd: unknown): Promise<string[]> => {
      const res = await send('POST', '/v1/calls', dialBody('2671', '/vonage/refused', amd));
      expect(res.status).toBe(400);
      const body = (await res.json()) as { invalid_parameters: { name: string }[] };
      return body.invalid_parameters.map((p) => p.name);
    };
    expect(await invalid({ behavior: 'wait', mode: 'detect' })).toEqual(['advanced_machine_detection.behavior']);
    expect(await invalid({ behavior: 'continue', mode: 'guess' })).toEqual(['advanced_machine_detection.mode']);
    for (const beepTimeout of [30, 121, 45.5, '60']) {
      expect(await invalid({ behavior: 'continue', mode: 'detect_beep', beep_timeout: beepTimeout })).toEqual([
        'advanced_machine_detection.beep_timeout',
      ]);
    }
    expect(await invalid('detect')).toEqual(['advanced_machine_detection']);

    const { uuid, path } = await dial('6202', { behavior: 'continue', mode: 'default' });
    const early = await send('PUT', `/v1/calls/${uuid}`, transfer([VOICEMAIL]));
    expect(early.status).toBe(400);
    expect(await early.json()).toMatchObject({ title: 'Bad Request' });
    await receiver.waitFor(path, completed);
    expect((await send('PUT', `/v1/calls/${uuid}`, transfer([VOICEMAIL]))).status).toBe(400);
    expect(
      (await send('PUT', `/v1/calls/${uuid}`, { action: 'transfer', destination: { type: 'phone' } })).status,
    ).toBe(400);
  });
});

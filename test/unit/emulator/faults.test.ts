// Injected faults over the emulator's real HTTP API: requests refused before anything is done, dial
// answers lost after the call was placed (timeout included), callbacks held back or sent twice, and
// the same seed giving the same decisions.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator, type EmulatorFaults } from '../../../src/emulator';
import { FaultInjector } from '../../../src/emulator/faults';
import { numberEnding, startEmulatorAndReceiver, twilioSigned, type Received, type Receiver } from './receiver';

const account = `AC${randomBytes(16).toString('hex')}`;
const authToken = randomBytes(16).toString('hex');
const authorization = `Basic ${Buffer.from(`${account}:${authToken}`).toString('base64')}`;
const BUSY = '1486';

let emulator: Emulator;
let url: string;
let receiver: Receiver;
let stop: () => Promise<void>;
beforeAll(async () => ({ emulator, url, receiver, stop } = await startEmulatorAndReceiver()));
afterAll(() => stop());
beforeEach(async () => {
  // Every test starts from no faults and no call in flight, so its draws start at its own seed.
  await emulator.idle();
  emulator.setFaults(null);
  emulator.setDialFaults(null);
});

/** A Twilio dial asking for every status callback at a fresh path of the receiver. */
function twilioDial(to: string, path: string, base = url, signal?: AbortSignal): Promise<Response> {
  const form = new URLSearchParams({
    To: to,
    From: '+14155550100',
    Twiml: '<Response><Say>Hello.</Say></Response>',
    StatusCallback: `${receiver.url}${path}`,
  });
  for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
  return fetch(`${base}/2010-04-01/Accounts/${account}/Calls.json`, {
    method: 'POST',
    headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    signal,
  });
}

const callStatus = (r: Received): string => new URLSearchParams(r.body).get('CallStatus') ?? '';
const placed = (to: string): number => emulator.calls().filter((c) => c.to === to).length;

describe('refused requests', () => {
  it('answers 503 in each provider’s shape before doing anything, then works again at share 0', async () => {
    emulator.setFaults({ refuseShare: 1 });
    const to = numberEnding(BUSY);
    const refused = await twilioDial(to, `/refused/${randomUUID()}`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 20503, status: 503 });
    // Refused before authentication and validation too: nothing is looked at.
    const vonage = await fetch(`${url}/v1/calls`, { method: 'POST' });
    expect(vonage.status).toBe(503);
    expect(await vonage.json()).toMatchObject({ title: 'Service Unavailable' });
    const telnyx = await fetch(`${url}/v2/calls`, { method: 'POST' });
    expect(telnyx.status).toBe(503);
    expect(await telnyx.json()).toMatchObject({ errors: [{ code: '10007' }] });
    // Not a provider path: never refused.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(placed(to)).toBe(0);
    expect(emulator.callsTo(to)).toBe(0);
    expect(emulator.faults().injected.refused).toBeGreaterThanOrEqual(3);

    emulator.setFaults({ refuseShare: 0 });
    expect((await twilioDial(to, `/refused/${randomUUID()}`)).status).toBe(201);
    expect(emulator.callsTo(to)).toBe(1);
  });

  it('gives the same decisions for the same seed, whatever ran before', async () => {
    const statuses = async (): Promise<number[]> => {
      const list: number[] = [];
      for (let i = 0; i < 12; i += 1) {
        const res = await fetch(`${url}/2010-04-01/Accounts/${account}/Calls.json`, {
          headers: { Authorization: authorization },
        });
        await res.arrayBuffer();
        list.push(res.status);
      }
      return list;
    };
    emulator.setFaults({ seed: 42, refuseShare: 0.5 });
    const first = await statuses();
    emulator.setFaults({ seed: 42, refuseShare: 0.5 });
    const second = await statuses();
    expect(second).toEqual(first);
    expect(new Set(first)).toEqual(new Set([200, 503]));
  });
});

describe('lost dial answers', () => {
  it('timeout: the call is placed, its client hears nothing until the hold ends', async () => {
    emulator.setFaults({ lostAnswer: { share: 1, kinds: ['timeout'] }, timeoutHoldMs: 300 });
    const to = numberEnding(BUSY);
    const started = Date.now();
    await expect(twilioDial(to, `/timeout/${randomUUID()}`)).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(emulator.callsTo(to)).toBe(1);
    const lost = emulator.dialFaults().filter((f) => f.to === to);
    expect(lost).toEqual([
      {
        provider: 'twilio',
        providerCallId: emulator.calls().find((c) => c.to === to)!.providerCallId,
        to,
        kind: 'timeout',
      },
    ]);
  });

  it('timeout: a client that gives up first closes the held connection', async () => {
    emulator.setFaults({ lostAnswer: { share: 1, kinds: ['timeout'] } });
    const to = numberEnding(BUSY);
    const started = Date.now();
    await expect(twilioDial(to, `/timeout/${randomUUID()}`, url, AbortSignal.timeout(100))).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(emulator.callsTo(to)).toBe(1);
  });

  it('takes the kinds in turn, and the every-th dial faults still work on their own', async () => {
    emulator.setFaults({ lostAnswer: { share: 1, kinds: ['answer-500', 'drop'] } });
    const first = numberEnding(BUSY);
    const second = numberEnding(BUSY);
    expect((await twilioDial(first, `/lost/${randomUUID()}`)).status).toBe(500);
    await expect(twilioDial(second, `/lost/${randomUUID()}`)).rejects.toThrow();
    expect(
      emulator
        .dialFaults()
        .filter((f) => [first, second].includes(f.to))
        .map((f) => f.kind),
    ).toEqual(['answer-500', 'drop']);

    emulator.setFaults(null);
    emulator.setDialFaults({ every: 2, kinds: ['answer-500'] });
    expect((await twilioDial(numberEnding(BUSY), `/lost/${randomUUID()}`)).status).toBe(201);
    expect((await twilioDial(numberEnding(BUSY), `/lost/${randomUUID()}`)).status).toBe(500);
    expect(emulator.faults().injected.lostAnswers).toBeGreaterThanOrEqual(3);
  });
});

describe('callback faults', () => {
  it('duplicateShare 1: every callback arrives twice, both copies signed, same content', async () => {
    emulator.setFaults({ callbacks: { duplicateShare: 1 } });
    const path = `/duplicate/${randomUUID()}`;
    expect((await twilioDial(numberEnding(BUSY), path)).status).toBe(201);
    await emulator.idle();
    const received = receiver.received(path);
    expect(received.map(callStatus)).toEqual(['initiated', 'initiated', 'ringing', 'ringing', 'busy', 'busy']);
    expect(received.every((r) => twilioSigned(r, authToken))).toBe(true);
    expect(received[1].body).toBe(received[0].body);
    expect(emulator.faults().injected.duplicated).toBeGreaterThanOrEqual(3);
  });

  it('lateShare 1: a held callback is overtaken by a later one, and idle() waits for it', async () => {
    const faults: EmulatorFaults = { callbacks: { lateShare: 1, maxDelayMs: 400 } };
    // A seed whose first callback (initiated) is held well beyond the second (ringing).
    const seed = [...Array(100).keys()].find((s) => {
      const injector = new FaultInjector();
      injector.configure({ ...faults, seed: s });
      const [initiated, ringing] = [injector.callbackFault().delayMs!, injector.callbackFault().delayMs!];
      return initiated > ringing + 150;
    })!;
    emulator.setFaults({ ...faults, seed });
    const path = `/late/${randomUUID()}`;
    expect((await twilioDial(numberEnding(BUSY), path)).status).toBe(201);
    await emulator.idle();
    const arrived = receiver.received(path).map(callStatus);
    expect([...arrived].sort()).toEqual(['busy', 'initiated', 'ringing']);
    expect(arrived.indexOf('ringing')).toBeLessThan(arrived.indexOf('initiated'));
    expect(emulator.faults().injected.late).toBeGreaterThanOrEqual(3);
  });

  it('draws the same callback faults from the same seed', () => {
    const draws = (seed: number) => {
      const injector = new FaultInjector();
      injector.configure({ seed, callbacks: { lateShare: 0.5, duplicateShare: 0.5, maxDelayMs: 1000 } });
      return Array.from({ length: 20 }, () => injector.callbackFault());
    };
    expect(draws(7)).toEqual(draws(7));
    expect(draws(7)).not.toEqual(draws(8));
  });

  it('drops held callbacks when the emulator stops', async () => {
    const own = createEmulator({ port: 0, speedFactor: 0.01, vonageSignatureSecret: 'unused' });
    const { url: ownUrl } = await own.start();
    own.setFaults({ callbacks: { lateShare: 1, maxDelayMs: 3000 }, seed: 3 });
    const path = `/stopped/${randomUUID()}`;
    expect((await twilioDial(numberEnding(BUSY), path, ownUrl)).status).toBe(201);
    while (own.calls()[0]?.state !== 'ended') await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await own.stop();
    await own.idle();
    expect(Date.now() - started).toBeLessThan(500);
    const atStop = receiver.received(path).length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received(path).length).toBe(atStop);
  });
});

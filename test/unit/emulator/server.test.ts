// The emulator's HTTP surface: the auth each real API checks, its error shapes, and the state the
// adapters read back (dial counts, Twilio call events).
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator } from '../../../src/emulator';

let emulator: Emulator;
let url: string;
beforeAll(async () => {
  emulator = createEmulator({ port: 0, speedFactor: 0.01, vonageSignatureSecret: randomBytes(16).toString('hex') });
  ({ url } = await emulator.start());
});
afterAll(async () => {
  await emulator.stop();
});

const basic = (user: string, pass: string): string => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('emulator server', () => {
  it('answers its health check and 404 for paths no provider has', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/v3/nothing`)).status).toBe(404);
  });

  it('refuses requests without the credentials each API requires', async () => {
    const twilio = await fetch(`${url}/2010-04-01/Accounts/AC1/Calls.json`, { method: 'POST' });
    expect(twilio.status).toBe(401);
    expect(await twilio.json()).toMatchObject({ code: 20003, status: 401 });

    const otherAccount = await fetch(`${url}/2010-04-01/Accounts/AC1/Calls.json`, {
      headers: { Authorization: basic('AC2', 'token') },
    });
    expect(otherAccount.status).toBe(401);

    const vonage = await fetch(`${url}/v1/calls`, { headers: { Authorization: 'Bearer not.a.jwt' } });
    expect(vonage.status).toBe(401);
    expect(await vonage.json()).toMatchObject({ title: 'Unauthorized' });

    const telnyx = await fetch(`${url}/v2/calls`, { method: 'POST' });
    expect(telnyx.status).toBe(401);
    expect(await telnyx.json()).toMatchObject({ errors: [{ code: '10009' }] });
  });

  it('validates a Twilio dial like Twilio does, and keeps the create request out of the call events', async () => {
    const account = `AC${randomBytes(16).toString('hex')}`;
    const auth = basic(account, 'secret-token');
    const post = (form: Record<string, string>): Promise<Response> =>
      fetch(`${url}/2010-04-01/Accounts/${account}/Calls.json`, {
        method: 'POST',
        headers: { Authorization: auth, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
    const missingTo = await post({ From: '+14155550100', Twiml: '<Response/>' });
    expect(await missingTo.json()).toMatchObject({ code: 21201 });
    const invalidTo = await post({ To: '12', From: '+14155550100', Twiml: '<Response/>' });
    expect(invalidTo.status).toBe(400);
    expect(await invalidTo.json()).toMatchObject({ code: 21211 });
    const longSay = `<Response><Say>${'a'.repeat(4000)}</Say></Response>`;
    const tooLarge = await post({ To: '+14155559870', From: '+14155550100', Twiml: longSay });
    expect(tooLarge.status).toBe(400);
    expect(await tooLarge.json()).toMatchObject({ code: 32018 });
    expect(emulator.callsTo('+14155559870')).toBe(0);

    const to = '+14155559871';
    const statusCallback = `http://127.0.0.1:9/cb?callId=${randomUUID()}`;
    const twiml = '<Response><Say>Hi &amp; welcome</Say></Response>';
    const created = await post({ To: to, From: '+14155550100', Twiml: twiml, StatusCallback: statusCallback });
    expect(created.status).toBe(201);
    const call = (await created.json()) as { sid: string; status: string };
    expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(call.status).toBe('queued');
    expect(emulator.callsTo('+1 415 555 9871')).toBe(1);

    const events = await fetch(`${url}/2010-04-01/Accounts/${account}/Calls/${call.sid}/Events.json`, {
      headers: { Authorization: auth },
    });
    // The Events list the requests Twilio sent the application, not the one that created the call.
    const { events: list } = (await events.json()) as { events: { request: { url: string } }[] };
    expect(list.filter((e) => e.request.url.endsWith('/Calls.json'))).toEqual([]);

    await emulator.idle();
    expect(emulator.calls().find((c) => c.providerCallId === call.sid)?.spoken[0]?.text).toBe('Hi & welcome');
  });

  it("lists Telnyx call events by connection, number and time, as Telnyx's debugging API filters them", async () => {
    const headers = {
      Authorization: `Bearer KEY${randomBytes(8).toString('hex')}`,
      'Content-Type': 'application/json',
    };
    const dial = async (connectionId: string, to: string): Promise<string> => {
      const res = await fetch(`${url}/v2/calls`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          connection_id: connectionId,
          to,
          from: '+14155550100',
          webhook_url: 'http://127.0.0.1:9/cb',
          client_state: Buffer.from(to).toString('base64'),
        }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { call_control_id: string } }).data.call_control_id;
    };
    const before = new Date().toISOString();
    const mine = await dial('conn-a', '+14155551486');
    await dial('conn-a', '+14155552486');
    await dial('conn-b', '+14155551486');
    await emulator.idle();
    type Listed = { data: { event_timestamp: string; metadata: { payload: Record<string, unknown> } }[] };
    const list = async (query: string): Promise<Response> => fetch(`${url}/v2/call_events?${query}`, { headers });

    const res = await list('filter[connection_id]=conn-a&filter[to]=%2B14155551486&page[size]=250');
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as Listed;
    expect(data.length).toBeGreaterThan(0);
    expect(new Set(data.map((e) => e.metadata.payload.call_control_id))).toEqual(new Set([mine]));
    expect(data.every((e) => e.metadata.payload.client_state === Buffer.from('+14155551486').toString('base64'))).toBe(
      true,
    );
    const times = data.map((e) => Date.parse(e.event_timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));

    const since = (
      await list(`filter[to]=%2B14155551486&filter[occurred_at][gte]=${encodeURIComponent(before)}`)
    ).json();
    expect(((await since) as Listed).data.length).toBeGreaterThan(data.length);
    const later = new Date(Date.now() + 60_000).toISOString();
    const none = (await (await list(`filter[occurred_at][gt]=${encodeURIComponent(later)}`)).json()) as Listed;
    expect(none.data).toEqual([]);
    const two = await list(`filter[occurred_at][gt]=${encodeURIComponent(before)}&filter[occurred_at][lt]=${later}`);
    expect(two.status).toBe(422);
    expect(await two.json()).toMatchObject({ errors: [{ code: '10015' }] });
  });
});

// No secret in any log line: the API, the worker (activities, reconciler) and the provider emulator
// log at debug level into one sink while calls run on all three providers with recordings and signed
// webhooks, and bad keys and unsigned callbacks are tried; then every line is searched for every key,
// webhook secret, provider credential, recording token and the encryption key the run used.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secret-box';
import { Team } from '../../src/data/models/team';
import { callbackUrlFor } from '../../src/telephony/callback-url';
import { apiClient, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  stack = await startTestStack({ env: { LOG_LEVEL: 'debug' }, logDestination: sink });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

/** Every string value under a key that names a secret, in a provider's credentials. */
function secretValues(value: unknown, key = ''): string[] {
  if (typeof value === 'string') return /token|secret|key/i.test(key) ? [value] : [];
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => secretValues(v, /^\d+$/.test(k) ? key : k));
  return [];
}

it('writes no key, webhook secret, provider credential, recording token or encryption key to any log line', async () => {
  const api = apiClient(stack.baseUrl, stack.team.key);
  const webhook = await api.post('/v1/webhooks', {
    teamId: stack.team.teamId,
    url: `${receiver.url}/team`,
    subscribedEvents: ['*'],
    method: 'POST',
  });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(200);
  const callSecret = 'a per-call secret that must stay out of logs';

  const ids: string[] = [];
  for (const provider of ['twilio', 'vonage', 'telnyx']) {
    const created = await api.post(
      '/v1/phoneCalls',
      seededCallBody(stack.team, '+14155550007', {
        telephonyProvider: provider,
        record: true,
        phoneCallWebhooks: [{ url: `${receiver.url}/call`, subscribedEvent: '*', secret: callSecret }],
      }),
    );
    expect(created.status).toBe(201);
    ids.push(created.body.data._id as string);
  }
  const ended = await eventually(
    async () => {
      const calls = await Promise.all(ids.map(async (id) => (await api.get(`/v1/phoneCalls/${id}`)).body.data));
      return calls.every((c) => c.status === 'completed' && c.recordingUrl) ? calls : undefined;
    },
    60_000,
    'the three calls to complete with recordings',
  );
  await eventually(async () => (receiver.at('/call').length >= 9 ? true : undefined), 30_000, 'the webhooks');

  // Each recording played through its URL: the token in it is its only credential.
  for (const call of ended) expect((await fetch(call.recordingUrl as string)).status).toBe(200);
  // What a careless log would catch: a wrong key, a key in a query string, an unsigned callback.
  await api.get('/v1/phoneCalls', { key: `${stack.team.key}x` });
  await api.get(`/v1/voices?service-api-key=${encodeURIComponent(stack.team.key)}`);
  await fetch(callbackUrlFor(stack.baseUrl, 'twilio', ids[0]!), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'forged' },
    body: 'CallStatus=completed',
  });

  const team = await Team.findById(stack.team.teamId).lean();
  const box = createSecretBox(stack.config.ENCRYPTION_KEY);
  const credentials = team!.providerSettings.flatMap((s) => secretValues(JSON.parse(box.open(s.credentialsSealed!))));
  const webhookSecret = webhook.body.data.secret as string;
  const secrets: Record<string, string> = {
    'API key secret': /^oco_[0-9a-f]{24}_(.+)$/.exec(stack.team.key)![1]!,
    'webhook secret': webhookSecret,
    'webhook signing key': webhookSecret.replace(/^whsec_/, ''),
    'per-call webhook secret': callSecret,
    'encryption key': stack.config.ENCRYPTION_KEY,
    ...Object.fromEntries(credentials.map((value, i) => [`provider credential ${i + 1}`, value])),
    ...Object.fromEntries(
      ended.map((call, i) => [
        `recording token ${i + 1}`,
        new URL(call.recordingUrl as string).pathname.split('/').pop()!,
      ]),
    ),
  };
  // The Vonage private key is matched by its body, the part that is secret.
  for (const [name, value] of Object.entries(secrets)) {
    if (value.includes('PRIVATE KEY')) secrets[name] = value.split('\n')[1]!;
  }
  expect(credentials.length).toBeGreaterThanOrEqual(5);

  // The run did log, from every part: API requests, provider callbacks, the worker, the emulator.
  const messages = new Set(lines.map((line) => (JSON.parse(line) as { msg?: string }).msg));
  for (const msg of ['request', 'telephony callback accepted', 'telephony callback rejected: bad signature'])
    expect(messages).toContain(msg);
  expect(messages).toContain('Worker state changed');
  expect(messages).toContain('call placed');

  const everything = lines.join('\n');
  const leaked = Object.entries(secrets).filter(([, value]) => value.length >= 8 && everything.includes(value));
  expect(leaked.map(([name]) => name)).toEqual([]);
});

// Rotating ENCRYPTION_KEY: `secrets reseal` run with the new key (and the old one as previous) seals
// every stored secret under the new key, leaves what it cannot open alone, and changes nothing when
// run again.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secret-box';
import { PhoneCall } from '../../src/data/models/phone-call';
import { Team } from '../../src/data/models/team';
import { Webhook } from '../../src/data/models/webhook';
import { runAdmin, stackAdminEnv } from '../helpers/admin-cli';
import { apiClient } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

it('re-seals team credentials, webhook secrets and per-call webhook secrets under the new key', async () => {
  const team = await stack.seedTeam('Rotation');
  const client = apiClient(stack.baseUrl, team.key);
  const webhook = await client.post('/v1/webhooks', {
    teamId: team.teamId,
    url: 'http://127.0.0.1:9/rotation',
    subscribedEvents: ['phoneCall.completed'],
    method: 'POST',
  });
  expect(webhook.status).toBe(200);
  const call = await client.post(
    '/v1/phoneCalls',
    seededCallBody(team, '+14155550190', {
      callDelayedUntil: new Date(Date.now() + 86_400_000).toISOString(),
      phoneCallWebhooks: [{ url: 'http://127.0.0.1:9/per-call', subscribedEvent: '*', secret: 'per-call secret' }],
    }),
  );
  expect(call.status).toBe(201);
  // A value under a key nobody has any more: reported, left as it is.
  const lost = await new Webhook({
    teamId: team.teamId,
    url: 'http://127.0.0.1:9/lost',
    subscribedEvents: ['*'],
    method: 'GET',
    secretSealed: createSecretBox(randomBytes(32).toString('base64')).seal('gone'),
  }).save();

  const newKey = randomBytes(32).toString('base64');
  const env = {
    ...stackAdminEnv(stack.config),
    ENCRYPTION_KEY: newKey,
    ENCRYPTION_KEYS_PREVIOUS: stack.config.ENCRYPTION_KEY,
  };
  const first = await runAdmin(env, ['secrets', 'reseal', '--json']);
  expect(first.code).toBe(0);
  const counts = JSON.parse(first.stdout);
  expect(counts.teams.resealed).toBeGreaterThanOrEqual(1);
  expect(counts.teams.unreadable).toBe(0);
  expect(counts.webhooks).toMatchObject({ resealed: counts.webhooks.examined - 1, unreadable: 1 });
  expect(counts.phoneCalls).toMatchObject({ resealed: counts.phoneCalls.examined, unreadable: 0 });

  const onlyNew = createSecretBox(newKey);
  const stored = await Team.findById(team.teamId).lean();
  const credentials = stored!.providerSettings.map((s) => JSON.parse(onlyNew.open(s.credentialsSealed!)) as object);
  expect(credentials).toHaveLength(3);
  const hook = await Webhook.findById(webhook.body.data._id).lean();
  expect(onlyNew.open(hook!.secretSealed)).toBe(webhook.body.data.secret);
  const storedCall = await PhoneCall.findById(call.body.data._id).lean();
  expect(onlyNew.open(storedCall!.phoneCallWebhooks[0]!.secretSealed)).toBe('per-call secret');
  expect((await Webhook.findById(lost._id).lean())!.secretSealed).toBe(lost.secretSealed);

  const second = JSON.parse((await runAdmin(env, ['secrets', 'reseal', '--json'])).stdout);
  for (const name of ['teams', 'webhooks', 'phoneCalls']) expect(second[name].resealed).toBe(0);
});

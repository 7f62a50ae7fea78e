// A team's adapter as the worker builds it from the sealed credentials: credentials stored before
// `team set-provider` checked them, with a field missing, end the dial as not configured (not retried)
// instead of failing inside the adapter.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { createSecretBox } from '../../src/crypto/secret-box';
import { Team } from '../../src/data/models/team';
import { createTeamProviderResolver, ProviderNotConfiguredError } from '../../src/telephony/team-providers';
import { withDatabase } from '../helpers/database-uri';

const secretBox = createSecretBox(randomBytes(32).toString('base64'));
// Adapters are only built here, never asked anything.
const nowhere = 'http://127.0.0.1:9';
const providers = createTeamProviderResolver({
  secretBox,
  baseUrls: { twilio: nowhere, vonage: nowhere, telnyx: nowhere },
});

beforeAll(async () => {
  await mongoose.connect(withDatabase(inject('mongoUri'), `team_providers_${randomBytes(4).toString('hex')}`));
});
afterAll(async () => {
  await mongoose.connection.db?.dropDatabase();
  await mongoose.disconnect();
});

/** A team with these telnyx credentials sealed as `team set-provider` seals them. */
async function teamWithTelnyx(fields: unknown): Promise<string> {
  const team = await Team.create({
    name: 'Stored credentials',
    defaultProvider: 'telnyx',
    providerSettings: [
      {
        provider: 'telnyx',
        fromNumbers: [],
        credentialsSealed: secretBox.seal(JSON.stringify({ provider: 'telnyx', telnyx: fields })),
      },
    ],
  });
  return team._id.toHexString();
}

it('refuses stored credentials that lack what the adapter needs as not configured, naming the fields', async () => {
  const teamId = await teamWithTelnyx({ foo: 1 });
  const refusal = await providers(teamId, 'telnyx').catch((err: unknown) => err);
  expect(refusal).toBeInstanceOf(ProviderNotConfiguredError);
  expect((refusal as Error).message).toBe(
    `team ${teamId} has unusable telnyx credentials (apiKey is required; connectionId is required; ` +
      'publicKey is required): set them again with team set-provider',
  );
});

it('builds the adapter from complete credentials, whatever else was stored with them', async () => {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
  const publicKey = Buffer.from(raw, 'base64url').toString('base64');
  const teamId = await teamWithTelnyx({ apiKey: 'KEY0123', connectionId: '1494404757140276705', publicKey, note: 'x' });
  expect((await providers(teamId, 'telnyx')).name).toBe('telnyx');
});

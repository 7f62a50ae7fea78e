// A team whose three providers are the provider emulator, with a number on each, an appointment-setter
// template and an API key: what the integration tests and the chaos run place their calls with.
// Written through the admin commands, as an operator would make it.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import {
  createKey,
  createPhoneNumber,
  createTeam,
  createTemplate,
  setTeamLimits,
  setTeamProvider,
} from '../admin/commands';
import type { ProviderName } from '../contracts/providers';
import type { SecretBox } from '../crypto/secret-box';

export interface EmulatedTeam {
  teamId: string;
  key: string;
  templateId: string;
  phoneNumberIds: Record<ProviderName, string>;
  twilio: { accountSid: string; authToken: string };
  /** The provider accounts the team dials with (Twilio SID, Vonage application, Telnyx API key). */
  accounts: Set<string>;
}

let vonagePrivateKey: string | null = null;

export async function seedEmulatedTeam(options: {
  name: string;
  secretBox: SecretBox;
  /** The emulator's Vonage signature secret and Telnyx public key (base64 of the raw Ed25519 key). */
  vonageSignatureSecret: string;
  telnyxPublicKey: string;
  maxDurationSeconds?: number;
  /** A cap on the team's live calls (its pacer queues the rest). */
  maxConcurrentCalls?: number;
}): Promise<EmulatedTeam> {
  const { secretBox } = options;
  // One RSA key per process: generating one takes a while, and the emulator checks no signature.
  vonagePrivateKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const { teamId } = await createTeam({ name: options.name, provider: 'twilio' });
  const twilio = { accountSid: `AC${randomBytes(16).toString('hex')}`, authToken: randomBytes(16).toString('hex') };
  const vonage = {
    applicationId: randomUUID(),
    privateKey: vonagePrivateKey,
    signatureSecret: options.vonageSignatureSecret,
  };
  const telnyx = {
    apiKey: `KEY${randomBytes(16).toString('hex')}`,
    connectionId: '1494404757140276705',
    publicKey: options.telnyxPublicKey,
  };
  await setTeamProvider({ team: teamId, provider: 'twilio', credentials: JSON.stringify(twilio) }, secretBox);
  await setTeamProvider({ team: teamId, provider: 'vonage', credentials: JSON.stringify(vonage) }, secretBox);
  await setTeamProvider({ team: teamId, provider: 'telnyx', credentials: JSON.stringify(telnyx) }, secretBox);
  const numberOn = async (provider: ProviderName, number: string) =>
    (await createPhoneNumber({ team: teamId, number, provider }, secretBox)).phoneNumberId;
  const phoneNumberIds = {
    twilio: await numberOn('twilio', '+14155550100'),
    vonage: await numberOn('vonage', '+14155550101'),
    telnyx: await numberOn('telnyx', '+14155550102'),
  };
  const { callTemplateId } = await createTemplate({
    team: teamId,
    name: 'Appointment setter',
    prompt: 'Hello {{firstName}}, this is Ada from Acme Dental. Could we book your check-up {{when}}?',
    requiredVariables: 'firstName',
    tags: [
      'interested=sounds good',
      'interested=works for me',
      'callback=call me back',
      'notInterested=not interested',
    ],
    resultColumns: ['interested', 'meetingTime', 'summary'],
    maxDurationSeconds: String(options.maxDurationSeconds ?? 120),
  });
  if (options.maxConcurrentCalls !== undefined)
    await setTeamLimits({ team: teamId, maxConcurrentCalls: String(options.maxConcurrentCalls) });
  const { key } = await createKey({ team: teamId });
  return {
    teamId,
    key,
    templateId: callTemplateId,
    phoneNumberIds,
    twilio,
    accounts: new Set([twilio.accountSid, vonage.applicationId, telnyx.apiKey]),
  };
}

// `POST /emulator/accounts`: a fresh account per provider, with credentials the emulator's own
// callbacks verify against (its Vonage signature secret, its Telnyx public key) and a from-number.
// Twilio accepts any AccountSid/AuthToken pair and Vonage JWT signatures are not checked here, so a
// fresh random account is as good as a registered one.
import { generateKeyPair, randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { EMULATOR_ACCOUNTS_KIND, EMULATOR_ACCOUNTS_PATH, type EmulatorAccounts } from '../contracts/emulator-accounts';
import { json, type Route } from './http';

const generateRsaKeyPair = promisify(generateKeyPair);

/** One from-number per provider; their last four digits pick no special scenario. */
export const EMULATOR_FROM_NUMBERS = {
  twilio: '+14155550100',
  vonage: '+14155550101',
  telnyx: '+14155550102',
} as const;

export function createAccountsRoute(secrets: { vonageSignatureSecret: string; telnyxPublicKeyBase64: string }): Route {
  const pattern = new RegExp(`^${EMULATOR_ACCOUNTS_PATH.replace(/\//g, '\\/')}$`);
  return {
    method: 'POST',
    pattern,
    async handle() {
      const { privateKey } = await generateRsaKeyPair('rsa', { modulusLength: 2048 });
      const accounts: EmulatorAccounts = {
        kind: EMULATOR_ACCOUNTS_KIND,
        providers: {
          twilio: {
            credentials: {
              accountSid: `AC${randomBytes(16).toString('hex')}`,
              authToken: randomBytes(16).toString('hex'),
            },
            fromNumber: EMULATOR_FROM_NUMBERS.twilio,
          },
          vonage: {
            credentials: {
              applicationId: randomUUID(),
              privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
              signatureSecret: secrets.vonageSignatureSecret,
            },
            fromNumber: EMULATOR_FROM_NUMBERS.vonage,
          },
          telnyx: {
            credentials: {
              apiKey: `KEY${randomBytes(16).toString('hex')}`,
              connectionId: String(1_000_000_000 + Math.floor(Math.random() * 9_000_000_000)),
              publicKey: secrets.telnyxPublicKeyBase64,
            },
            fromNumber: EMULATOR_FROM_NUMBERS.telnyx,
          },
        },
      };
      return json(201, accounts);
    },
  };
}

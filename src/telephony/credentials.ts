// What each adapter needs from a team's credentials, checked where they come in (`team set-provider`)
// and where they are opened for a dial (team-providers.ts): a field missing or unusable is named
// there, never met as a TypeError inside an adapter.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { formatIssues } from '../api/validation';
import type { ProviderName } from '../contracts/providers';
import type { ProviderCredentials, TelnyxCredentials, TwilioCredentials, VonageCredentials } from './provider';
import { telnyxPublicKey } from './telnyx';

const text = z.string().trim().min(1, 'must not be empty');

/** A key node:crypto reads as the adapter will read it, of the algorithm the adapter uses it for. */
const key = (read: (value: string) => KeyObject, type: string, message: string) =>
  z
    .string()
    .trim()
    .refine((value) => {
      try {
        return read(value).asymmetricKeyType === type;
      } catch {
        return false;
      }
    }, message);

const CREDENTIAL_SCHEMAS = {
  twilio: z.object({
    // The adapter puts it in every request's path: an API key SID (SK...) is not it.
    accountSid: z
      .string()
      .trim()
      .regex(/^AC[0-9a-fA-F]{32}$/, 'must be the Account SID: AC and 32 hex digits'),
    authToken: text,
  }) satisfies z.ZodType<TwilioCredentials>,
  vonage: z.object({
    applicationId: text,
    privateKey: key(createPrivateKey, 'rsa', "must be the application's RSA private key (PEM)"),
    signatureSecret: text,
  }) satisfies z.ZodType<VonageCredentials>,
  telnyx: z.object({
    apiKey: text,
    connectionId: text,
    publicKey: key(telnyxPublicKey, 'ed25519', 'must be the Ed25519 public key Telnyx signs webhooks with (base64)'),
  }) satisfies z.ZodType<TelnyxCredentials>,
};

export function credentialFields(provider: ProviderName): string[] {
  return Object.keys(CREDENTIAL_SCHEMAS[provider].shape);
}

/**
 * `value` as `provider`'s credentials, or every problem with it. `strict` (new credentials): a field
 * the adapter does not read is a problem too; stored ones are read with such fields left out.
 */
export function checkCredentials(
  provider: ProviderName,
  value: unknown,
  options: { strict?: boolean } = {},
): { credentials: ProviderCredentials } | { problems: string[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { problems: ['must be a JSON object'] };
  const schema = CREDENTIAL_SCHEMAS[provider];
  const parsed = (options.strict ? schema.strict() : schema).safeParse(value);
  if (!parsed.success) return { problems: formatIssues(parsed.error.issues, value) };
  return { credentials: { provider, [provider]: parsed.data } as ProviderCredentials };
}

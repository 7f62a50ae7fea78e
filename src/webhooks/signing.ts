// Standard Webhooks signing (https://www.standardwebhooks.com): what a receiver checks with the
// `standardwebhooks` library or a dozen lines of its own code.
import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32; // decisions.md asks for 24 or more

// Canonical padded base64, the only form the reference libraries decode.
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * Why a secret cannot sign, or null when it can. The API calls this when a caller supplies a
 * secret (phoneCallWebhooks[].secret), so a bad one is a 400 at create and never a delivery failure.
 */
export function webhookSecretProblem(secret: string): string | null {
  if (secret.length === 0) return 'secret must not be empty';
  if (secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
    if (encoded.length === 0 || !STANDARD_BASE64.test(encoded)) {
      return `a secret starting with ${WEBHOOK_SECRET_PREFIX} must continue with padded standard base64`;
    }
  }
  return null;
}

/**
 * The HMAC key behind a secret. A `whsec_` secret is decoded as the standard says. A per-call
 * secret is any string the caller chose (decisions.md), so one without the prefix is used as its
 * UTF-8 bytes: the receiver already holds that exact string, and guessing that some arbitrary
 * string "is base64" would silently sign with a different key than the receiver expects.
 */
export function webhookSigningKey(secret: string): Buffer {
  const problem = webhookSecretProblem(secret);
  if (problem !== null) throw new Error(`invalid webhook secret: ${problem}`);
  return secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

export interface SignWebhookInput {
  secret: string;
  /** The `webhook-id` header: one per event, the same on every retry. */
  id: string;
  /** The `webhook-timestamp` header, unix seconds. */
  timestamp: number;
  /** Exactly the bytes sent: the raw POST body, or the query string without its leading `?`. */
  content: string;
}

/** The `webhook-signature` header value: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{content}">`. */
export function signWebhook({ secret, id, timestamp, content }: SignWebhookInput): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new Error(`webhook timestamp must be whole unix seconds, got ${timestamp}`);
  }
  // Receivers reject a delivery whose webhook-id header is empty, so never sign one.
  if (id.length === 0) throw new Error('webhook id must not be empty');
  const mac = createHmac('sha256', webhookSigningKey(secret))
    .update(`${id}.${timestamp}.${content}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

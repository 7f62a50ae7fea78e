// How each provider signs what it sends, and how it reads the credentials it is sent, written
// from the provider's side (independently of the adapters' verification, so the tests check one
// against the other).
import { createHash, createHmac, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';

/** X-Twilio-Signature for a form-encoded POST: HMAC-SHA1 of URL + sorted name/value pairs. */
export function twilioRequestSignature(
  authToken: string,
  url: string,
  params: readonly (readonly [string, string])[],
): string {
  const data = [...params]
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
    .reduce((acc, [name, value]) => acc + name + value, url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** Vonage "signed webhooks": HS256 JWT carrying the SHA-256 of the body as payload_hash. */
export function vonageWebhookToken(secret: string, body: string, applicationId: string): string {
  const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const claims = b64url(
    JSON.stringify({
      iat: Math.floor(Date.now() / 1000),
      jti: randomUUID(),
      iss: 'Vonage',
      payload_hash: createHash('sha256').update(body, 'utf8').digest('hex'),
      application_id: applicationId,
    }),
  );
  const signature = createHmac('sha256', secret).update(`${header}.${claims}`).digest();
  return `${header}.${claims}.${b64url(signature)}`;
}

export interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

/** Header and claims of a compact JWS, without checking its signature; null when malformed. */
export function decodeJwt(token: string): DecodedJwt | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[2].length === 0) return null;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (header === null || typeof header !== 'object' || claims === null || typeof claims !== 'object') return null;
    return { header: header as Record<string, unknown>, claims: claims as Record<string, unknown> };
  } catch {
    return null;
  }
}

/** Telnyx webhook headers: Ed25519 over `${timestamp}|${body}`, base64. */
export function telnyxSignatureHeaders(privateKey: KeyObject, body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign(null, Buffer.from(`${timestamp}|${body}`, 'utf8'), privateKey);
  return { 'telnyx-signature-ed25519': signature.toString('base64'), 'telnyx-timestamp': timestamp };
}

/** A Twilio-style SID: two-letter type prefix and 32 hex digits. */
export function twilioSid(prefix: string): string {
  return prefix + randomBytes(16).toString('hex');
}

export function opaqueToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

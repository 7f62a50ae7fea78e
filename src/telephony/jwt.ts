// Compact JWS as Vonage uses it: RS256 tokens we sign for its API, HS256 tokens it signs on its
// webhooks. node:crypto does both; a library would add nothing we need.
import { createHmac, randomUUID, sign, timingSafeEqual } from 'node:crypto';
import { CallbackSignatureError } from './provider';

function base64url(input: Buffer | string): string {
  return Buffer.from(input).toString('base64url');
}

/** A Vonage application JWT: RS256 over application_id, iat, jti, exp. */
export function signApplicationJwt(applicationId: string, privateKeyPem: string, ttlSeconds = 300): string {
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = base64url(
    JSON.stringify({ application_id: applicationId, iat: now, jti: randomUUID(), exp: now + ttlSeconds }),
  );
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), privateKeyPem);
  return `${header}.${claims}.${base64url(signature)}`;
}

/** The claims of an HS256 token signed with `secret`; CallbackSignatureError when it is not. */
export function verifyHs256(token: string, secret: string): Record<string, unknown> {
  const parts = token.split('.');
  if (parts.length !== 3) throw new CallbackSignatureError('malformed JWT');
  const [header, claims, signature] = parts;
  let alg: unknown;
  try {
    alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown }).alg;
  } catch {
    throw new CallbackSignatureError('malformed JWT header');
  }
  // Pinning the algorithm stops "alg: none" and key-confusion tricks.
  if (alg !== 'HS256') throw new CallbackSignatureError(`unexpected JWT algorithm ${String(alg)}`);
  const expected = createHmac('sha256', secret).update(`${header}.${claims}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new CallbackSignatureError('JWT signature does not match');
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch {
    throw new CallbackSignatureError('malformed JWT claims');
  }
}

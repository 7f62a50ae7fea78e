// Compact JWS as Vonage uses it: RS256 tokens we sign for its API, HS256 tokens it signs on its
// webhooks. jose does the encoding, signing and verification; this module pins Vonage's choices.
import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { CallbackSignatureError } from './provider';

/** Keys parsed from PEM, by their PEM: a team's few keys sign every Vonage request it makes. */
const parsedKeys = new Map<string, KeyObject>();
/** Past this many keys the cache starts again (each is a few kilobytes). */
const MAX_PARSED_KEYS = 1_000;

/**
 * A KeyObject rather than importPKCS8: Node reads PKCS#1 PEMs as well, as it did before jose.
 * Parsed once: parsing a 2048-bit PEM costs about as much CPU as the signature (0.3 ms each here).
 */
function privateKeyOf(pem: string): KeyObject {
  let key = parsedKeys.get(pem);
  if (!key) {
    key = createPrivateKey(pem);
    if (parsedKeys.size >= MAX_PARSED_KEYS) parsedKeys.clear();
    parsedKeys.set(pem, key);
  }
  return key;
}

/** A Vonage application JWT: RS256 over application_id, iat, jti, exp. */
export async function signApplicationJwt(
  applicationId: string,
  privateKeyPem: string,
  ttlSeconds = 300,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ application_id: applicationId })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuedAt(now)
    .setJti(randomUUID())
    .setExpirationTime(now + ttlSeconds)
    .sign(privateKeyOf(privateKeyPem));
}

/**
 * The claims of an HS256 token signed with `secret`; CallbackSignatureError when it is not, or
 * when a time claim it carries (exp, nbf) says it is not valid now.
 */
export async function verifyHs256(token: string, secret: string): Promise<Record<string, unknown>> {
  // An empty key authenticates nothing (and WebCrypto refuses it with an error that is no refusal).
  if (secret.length === 0) throw new CallbackSignatureError('no signature secret to verify the JWT with');
  try {
    // Pinning the algorithm stops "alg: none" and key-confusion tricks.
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'] });
    return payload;
  } catch (err) {
    if (err instanceof errors.JOSEError) throw new CallbackSignatureError(`JWT rejected: ${err.message}`);
    throw err;
  }
}

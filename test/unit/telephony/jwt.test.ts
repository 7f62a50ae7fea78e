// The Vonage JWT rules on top of jose: what we sign is checked with node:crypto, and the tokens we
// verify are forged by hand, so neither side is checked only against itself.
import { createHmac, generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signApplicationJwt, verifyHs256 } from '../../../src/telephony/jwt';
import { CallbackSignatureError } from '../../../src/telephony/provider';

const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (segment: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

/** A token with the given header algorithm, HMAC-SHA-256 signed with `secret` whatever it says. */
function hmacToken(alg: string, claims: Record<string, unknown>, secret: string): string {
  const signed = `${part({ alg, typ: 'JWT' })}.${part(claims)}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

describe('signApplicationJwt', () => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });

  it.each(['pkcs8', 'pkcs1'] as const)(
    'signs RS256 with a %s PEM over application_id, iat, jti and exp',
    async (type) => {
      const pem = keys.privateKey.export({ type, format: 'pem' }).toString();
      const before = Math.floor(Date.now() / 1000);
      const token = await signApplicationJwt('app-1', pem, 60);
      const [header, claims, signature] = token.split('.');
      expect(
        verify('RSA-SHA256', Buffer.from(`${header}.${claims}`), keys.publicKey, Buffer.from(signature, 'base64url')),
      ).toBe(true);
      expect(decode(header)).toEqual({ alg: 'RS256', typ: 'JWT' });
      const { application_id, iat, jti, exp } = decode(claims);
      expect(application_id).toBe('app-1');
      expect(iat).toBeGreaterThanOrEqual(before);
      expect(exp).toBe((iat as number) + 60);
      expect(jti).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('signs with the key it is given, when the same application turns to another key', async () => {
    // Parsed keys are kept by their PEM: a rotated key must not be answered with the one before.
    const next = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const signedBy = async (pem: string) => {
      const [header, claims, signature] = (await signApplicationJwt('app-1', pem)).split('.');
      const data = Buffer.from(`${header}.${claims}`);
      const sig = Buffer.from(signature, 'base64url');
      return [keys, next].map((pair) => verify('RSA-SHA256', data, pair.publicKey, sig));
    };
    const pem = (pair: typeof keys) => pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(await signedBy(pem(keys))).toEqual([true, false]);
    expect(await signedBy(pem(next))).toEqual([false, true]);
    expect(await signedBy(pem(keys))).toEqual([true, false]);
  });

  it('gives every token its own jti', async () => {
    const pem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const [a, b] = await Promise.all([signApplicationJwt('app-1', pem), signApplicationJwt('app-1', pem)]);
    expect(decode(a.split('.')[1]).jti).not.toBe(decode(b.split('.')[1]).jti);
  });
});

describe('verifyHs256', () => {
  const secret = 'webhook-secret';
  const now = Math.floor(Date.now() / 1000);

  it('returns the claims of a token signed with the secret', async () => {
    await expect(verifyHs256(hmacToken('HS256', { iat: now, payload_hash: 'ab' }, secret), secret)).resolves.toEqual({
      iat: now,
      payload_hash: 'ab',
    });
  });

  it.each<[string, string]>([
    ['another secret', hmacToken('HS256', { iat: now }, 'other-secret')],
    ['alg none', `${part({ alg: 'none' })}.${part({ iat: now })}.`],
    ['another algorithm in the header', hmacToken('HS512', { iat: now }, secret)],
    ['a past exp', hmacToken('HS256', { iat: now - 600, exp: now - 300 }, secret)],
    ['claims that are not an object', hmacToken('HS256', ['iat'] as unknown as Record<string, unknown>, secret)],
    ['two segments', 'abc.def'],
    ['a header that is not JSON', 'bm90IGpzb24.e30.c2ln'],
  ])('refuses %s', async (_label, token) => {
    await expect(verifyHs256(token, secret)).rejects.toThrow(CallbackSignatureError);
  });

  it('refuses everything when there is no secret', async () => {
    await expect(verifyHs256(hmacToken('HS256', { iat: now }, ''), '')).rejects.toThrow(CallbackSignatureError);
  });
});

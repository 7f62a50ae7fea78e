// A voice's sample is fetchable without the API key, as a recording is: the unguessable token in its
// URL is the secret (decisions.md), of a recording token's shape (24 bytes in base64url). A recording's
// token is random and stored with it; a voice's is an HMAC of its id under a key drawn from
// ENCRYPTION_KEY, so that every API process gives the same URL, before and after a restart, with
// nothing stored. Tokens under ENCRYPTION_KEYS_PREVIOUS are still honoured, so a URL listed before a
// key rotation keeps working until the previous key is dropped.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

const TOKEN_BYTES = 24;
/** What a token looks like: anything else names no sample, and is refused without a lookup. */
export const SAMPLE_TOKEN = /^[A-Za-z0-9_-]{32}$/;

export interface VoiceSampleTokens {
  /** The token of the voice's sample URL, under the current key. */
  tokenOf(voiceId: number): string;
  /** Whether `token` is the voice's, under the current key or a previous one. */
  isTokenOf(voiceId: number, token: string): boolean;
}

/** `currentKey` and `previousKeys` as configured: 32-byte keys in base64. */
export function createVoiceSampleTokens(currentKey: string, previousKeys: readonly string[] = []): VoiceSampleTokens {
  // A key of their own for these tokens: nothing made with it can be confused with what the
  // encryption key seals.
  const keys = [currentKey, ...previousKeys].map((key) =>
    Buffer.from(hkdfSync('sha256', Buffer.from(key, 'base64'), Buffer.alloc(0), 'voice sample url tokens', 32)),
  );
  const tokenUnder = (key: Buffer, voiceId: number) =>
    createHmac('sha256', key).update(`voice:${voiceId}`).digest().subarray(0, TOKEN_BYTES);
  return {
    tokenOf: (voiceId) => tokenUnder(keys[0]!, voiceId).toString('base64url'),
    isTokenOf(voiceId, token) {
      if (!SAMPLE_TOKEN.test(token)) return false;
      const given = Buffer.from(token, 'base64url');
      return keys.some((key) => timingSafeEqual(tokenUnder(key, voiceId), given));
    },
  };
}

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { VOICE_CATALOGUE } from '../../../src/voices/catalogue';
import { SAMPLE_TOKEN, createVoiceSampleTokens } from '../../../src/voices/sample-tokens';

const newKey = () => randomBytes(32).toString('base64');

describe('voice sample tokens', () => {
  const key = newKey();
  const tokens = createVoiceSampleTokens(key);
  const all = VOICE_CATALOGUE.map((voice) => tokens.tokenOf(voice.id));

  it('are a recording token long (192 bits), one per voice, and look nothing like the id', () => {
    for (const token of all) {
      expect(token).toMatch(SAMPLE_TOKEN);
      expect(Buffer.from(token, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
      expect(new Set(token).size).toBeGreaterThanOrEqual(12);
    }
    expect(new Set(all).size).toBe(all.length);
  });

  it('are the same for every process with the key, and after a restart', () => {
    const again = createVoiceSampleTokens(key);
    expect(VOICE_CATALOGUE.map((voice) => again.tokenOf(voice.id))).toEqual(all);
    expect(createVoiceSampleTokens(newKey()).tokenOf(1)).not.toBe(tokens.tokenOf(1));
  });

  it("name only their own voice: not another's, not an id, not a token changed by one character", () => {
    const token = tokens.tokenOf(1);
    expect(tokens.isTokenOf(1, token)).toBe(true);
    expect(tokens.isTokenOf(2, token)).toBe(false);
    expect(tokens.isTokenOf(1, '1')).toBe(false);
    expect(tokens.isTokenOf(1, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    expect(tokens.isTokenOf(1, `${token}=`)).toBe(false);
  });

  it('still name their voice while the key is rotated, and no longer once it is dropped', () => {
    const rotated = newKey();
    const during = createVoiceSampleTokens(rotated, [key]);
    expect(during.tokenOf(1)).toBe(createVoiceSampleTokens(rotated).tokenOf(1));
    expect(during.isTokenOf(1, tokens.tokenOf(1))).toBe(true);
    expect(createVoiceSampleTokens(rotated).isTokenOf(1, tokens.tokenOf(1))).toBe(false);
  });
});

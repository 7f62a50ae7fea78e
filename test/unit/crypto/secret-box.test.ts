import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, SecretBoxError } from '../../../src/crypto/secret-box';

const newKey = (): string => randomBytes(32).toString('base64');

// Changes one base64url character of one dot-separated part, keeping the format valid.
function flip(sealed: string, partIndex: number): string {
  const parts = sealed.split('.');
  const part = parts[partIndex];
  parts[partIndex] = (part[0] === 'A' ? 'B' : 'A') + part.slice(1);
  return parts.join('.');
}

describe('createSecretBox', () => {
  it('round-trips text, including empty and non-ASCII text', () => {
    const box = createSecretBox(newKey());
    for (const plain of ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '', 'mot de passe: éàü 🔑', 'x'.repeat(10_000)]) {
      expect(box.open(box.seal(plain))).toBe(plain);
    }
  });

  it('writes v1.<iv>.<tag>.<ciphertext> in base64url with a fresh IV every time', () => {
    const box = createSecretBox(newKey());
    const first = box.seal('same secret');
    const second = box.seal('same secret');
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(first).not.toBe(second);
    expect(first).not.toContain('same secret');
  });

  it('detects tampering with the IV, the tag or the ciphertext', () => {
    const box = createSecretBox(newKey());
    const sealed = box.seal('provider auth token');
    for (const part of [1, 2, 3]) {
      expect(() => box.open(flip(sealed, part))).toThrow(SecretBoxError);
    }
    expect(() => box.open(flip(sealed, 3))).toThrow(/wrong key or tampered/);
  });

  it('refuses to open a value sealed under another key', () => {
    const sealed = createSecretBox(newKey()).seal('secret');
    expect(() => createSecretBox(newKey()).open(sealed)).toThrow(/wrong key or tampered/);
  });

  it('refuses malformed sealed values with a SecretBoxError', () => {
    const box = createSecretBox(newKey());
    const [, iv, tag, ciphertext] = box.seal('secret').split('.');
    const malformed = [
      '',
      'plain text',
      `v2.${iv}.${tag}.${ciphertext}`,
      `v1.${iv}.${tag}`,
      `v1.${iv}.${tag}.${ciphertext}.x`,
      `v1.${iv}.${tag}.+/==`,
      `v1.AAAA.${tag}.${ciphertext}`,
    ];
    for (const bad of malformed) {
      expect(() => box.open(bad), bad).toThrow(SecretBoxError);
    }
  });

  it('opens values sealed under a previous key, seals only under the current one, and tells them apart', () => {
    const [oldKey, middleKey, currentKey] = [newKey(), newKey(), newKey()];
    const sealedOld = createSecretBox(oldKey).seal('rotated');
    const sealedMiddle = createSecretBox(middleKey).seal('rotated twice');
    const box = createSecretBox(currentKey, [middleKey, oldKey]);
    expect(box.open(sealedOld)).toBe('rotated');
    expect(box.open(sealedMiddle)).toBe('rotated twice');
    expect(box.sealedWithCurrentKey(sealedOld)).toBe(false);
    const sealedNow = box.seal('new');
    expect(box.sealedWithCurrentKey(sealedNow)).toBe(true);
    expect(createSecretBox(currentKey).open(sealedNow)).toBe('new');
    expect(() => createSecretBox(oldKey).open(sealedNow)).toThrow(SecretBoxError);
    // Once the old key is dropped, its values no longer open.
    expect(() => createSecretBox(currentKey, [middleKey]).open(sealedOld)).toThrow(SecretBoxError);
    expect(() => box.sealedWithCurrentKey('v1.x')).toThrow(SecretBoxError);
  });

  it('requires a 32-byte base64 key and says so', () => {
    expect(() => createSecretBox(randomBytes(16).toString('base64'))).toThrow(/32 bytes.*got 16 bytes/);
    expect(() => createSecretBox(randomBytes(33).toString('base64'))).toThrow(/got 33 bytes/);
    expect(() => createSecretBox('')).toThrow(/not standard base64/);
    expect(() => createSecretBox('not a key at all!')).toThrow(SecretBoxError);
  });
});

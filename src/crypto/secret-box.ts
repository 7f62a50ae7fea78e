// Encryption at rest for webhook secrets and provider credentials: AES-256-GCM with a key from
// configuration, so a database dump alone does not reveal them. Values are sealed under the current
// key and opened under it or any previous one, so the key can be rotated without downtime (README,
// "Rotating ENCRYPTION_KEY"; `secrets reseal` moves stored values to the current key).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12; // the GCM nonce size that needs no extra hashing
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
// The version is authenticated too, so a value cannot be relabelled for a future format.
const AAD = Buffer.from(VERSION, 'utf8');

export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

export interface SecretBox {
  /** `v1.<iv>.<tag>.<ciphertext>`, each part base64url; a fresh IV every call. */
  seal(plain: string): string;
  /** Throws SecretBoxError when the value is malformed, tampered with, or sealed under none of the keys. */
  open(sealed: string): string;
  /** Whether the value opens under the current key (else `secrets reseal` seals it again). */
  sealedWithCurrentKey(sealed: string): boolean;
}

export function createSecretBox(keyBase64: string, previousKeysBase64: readonly string[] = []): SecretBox {
  const key = decodeKey(keyBase64);
  const previous = previousKeysBase64.map(decodeKey);

  function openWith(candidate: Buffer, sealed: string): string | null {
    const { iv, tag, ciphertext } = parse(sealed);
    const decipher = createDecipheriv('aes-256-gcm', candidate, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(AAD);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      return null; // GCM says only "unable to authenticate": another key, or tampered data
    }
  }

  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(AAD);
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv, tag, ciphertext]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },

    open(sealed) {
      for (const candidate of [key, ...previous]) {
        const plain = openWith(candidate, sealed);
        if (plain !== null) return plain;
      }
      throw new SecretBoxError('sealed value failed authentication: wrong key or tampered data');
    },

    sealedWithCurrentKey(sealed) {
      return openWith(key, sealed) !== null;
    },
  };
}

function parse(sealed: string): { iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw new SecretBoxError(`sealed value is not in the ${VERSION}.<iv>.<tag>.<ciphertext> format`);
  }
  const [, ivText, tagText, ciphertextText] = parts;
  if (![ivText, tagText, ciphertextText].every((part) => BASE64URL.test(part))) {
    throw new SecretBoxError('sealed value has a part that is not base64url');
  }
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new SecretBoxError('sealed value has an IV or tag of the wrong length');
  }
  return { iv, tag, ciphertext: Buffer.from(ciphertextText, 'base64url') };
}

function decodeKey(keyBase64: string): Buffer {
  const text = keyBase64.trim();
  const key = BASE64.test(text) ? Buffer.from(text, 'base64') : null;
  if (key === null || key.length !== KEY_BYTES) {
    const got = key === null ? 'text that is not standard base64' : `${key.length} bytes`;
    throw new SecretBoxError(
      `secret box key must be ${KEY_BYTES} bytes in standard base64 (got ${got}); make one with ` +
        `node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`,
    );
  }
  return key;
}

import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook, webhookSecretProblem } from '../../../src/webhooks/signing';

// Verification always goes through the independent `standardwebhooks` package, never our own code.
describe('generateWebhookSecret', () => {
  it('is whsec_ + padded standard base64 of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('is accepted by the standardwebhooks library', () => {
    expect(() => new Webhook(generateWebhookSecret())).not.toThrow();
  });
});

describe('signWebhook', () => {
  const id = 'msg_2f1c0d';
  const nowSeconds = (): number => Math.floor(Date.now() / 1000);
  const signedHeaders = (secret: string, timestamp: number, content: string): Record<string, string> => ({
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook({ secret, id, timestamp, content }),
  });

  it('matches the Standard Webhooks reference vector', () => {
    const signature = signWebhook({
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
      content: '{"test": 2432232314}',
    });
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('produces a signature that standardwebhooks verifies for a JSON body', () => {
    const secret = generateWebhookSecret();
    const timestamp = nowSeconds();
    const content = JSON.stringify({
      type: 'phoneCall.completed',
      timestamp: '2026-01-01T00:00:00.000Z',
      data: { _id: 'x' },
    });
    const signature = signWebhook({ secret, id, timestamp, content });
    const payload = new Webhook(secret).verify(content, {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    });
    expect(payload).toEqual(JSON.parse(content));
  });

  it('produces a signature that standardwebhooks verifies for a query string', () => {
    const secret = generateWebhookSecret();
    const timestamp = nowSeconds();
    const content = 'type=phoneCall.completed&timestamp=2026-01-01T00%3A00%3A00.000Z&phoneCallId=abc&status=completed';
    const headers = signedHeaders(secret, timestamp, content);
    expect(() => new Webhook(secret).verify(content, headers, { jsonParse: false })).not.toThrow();
  });

  it('uses the UTF-8 bytes of a caller-chosen secret without the whsec_ prefix', () => {
    const secret = 'clé secrète du client';
    const timestamp = nowSeconds();
    const content = '{"a":1}';
    const headers = signedHeaders(secret, timestamp, content);
    const receiver = new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
    expect(receiver.verify(content, headers)).toEqual({ a: 1 });
  });

  it('fails verification when the content, id or timestamp differ from what was signed', () => {
    const secret = generateWebhookSecret();
    const timestamp = nowSeconds();
    const signature = signWebhook({ secret, id, timestamp, content: '{"a":1}' });
    const receiver = new Webhook(secret);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(() => receiver.verify('{"a":2}', headers)).toThrow();
    expect(() => receiver.verify('{"a":1}', { ...headers, 'webhook-id': 'msg_other' })).toThrow();
    expect(() => receiver.verify('{"a":1}', { ...headers, 'webhook-timestamp': String(timestamp - 1) })).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify('{"a":1}', headers)).toThrow();
  });

  it('refuses a non-integer timestamp, an empty id and an unusable secret', () => {
    const secret = generateWebhookSecret();
    expect(() => signWebhook({ secret, id, timestamp: 1.5, content: '' })).toThrow(/unix seconds/);
    expect(() => signWebhook({ secret, id: '', timestamp: 1, content: '' })).toThrow(/id/);
    expect(() => signWebhook({ secret: 'whsec_not base64!', id, timestamp: 1, content: '' })).toThrow(
      /invalid webhook secret/,
    );
    expect(() => signWebhook({ secret: '', id, timestamp: 1, content: '' })).toThrow(/empty/);
  });
});

describe('webhookSecretProblem', () => {
  it.each([
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', null],
    ['any string the caller likes', null],
    ['', 'secret must not be empty'],
    ['whsec_', expect.stringMatching(/base64/)],
    ['whsec_abc', expect.stringMatching(/base64/)],
    ['whsec_ab-_', expect.stringMatching(/base64/)],
  ])('%j -> %j', (secret, problem) => {
    expect(webhookSecretProblem(secret)).toEqual(problem);
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError, heapGrowingPercentOf, loadConfig } from '../../src/config';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/calls', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

describe('loadConfig', () => {
  it('applies documented defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      PORT: 3000,
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'phone-calls',
      ALLOW_PRIVATE_WEBHOOK_URLS: false,
      PUBLIC_BASE_URL: 'http://localhost:3000',
      WORKER_MONGODB_SOCKET_TIMEOUT_SECONDS: 60,
    });
    expect(config.WEBHOOK_RETRY_DELAYS).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
  });

  it('names every missing or wrong variable', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        ENCRYPTION_KEY: 'short',
        ALLOW_PRIVATE_WEBHOOK_URLS: 'yes',
        WEBHOOK_RETRY_DELAYS: '5 parsecs',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of [
      'MONGODB_URI is required',
      'PORT',
      'ENCRYPTION_KEY must be 32 bytes',
      'ALLOW_PRIVATE_WEBHOOK_URLS must be true or false',
      'WEBHOOK_RETRY_DELAYS',
    ]) {
      expect(message).toContain(name);
    }
  });

  it('reads the previous encryption keys as a list, each 32 bytes', () => {
    expect(loadConfig(base).ENCRYPTION_KEYS_PREVIOUS).toEqual([]);
    const older = [Buffer.alloc(32, 1).toString('base64'), Buffer.alloc(32, 2).toString('base64')];
    expect(
      loadConfig({ ...base, ENCRYPTION_KEYS_PREVIOUS: ` ${older[0]}, ${older[1]} ` }).ENCRYPTION_KEYS_PREVIOUS,
    ).toEqual(older);
    expect(() => loadConfig({ ...base, ENCRYPTION_KEYS_PREVIOUS: `${older[0]},short` })).toThrow(
      /ENCRYPTION_KEYS_PREVIOUS/,
    );
  });

  it('reads booleans and retry schedules as written', () => {
    expect(loadConfig({ ...base, ALLOW_PRIVATE_WEBHOOK_URLS: 'false' }).ALLOW_PRIVATE_WEBHOOK_URLS).toBe(false);
    expect(loadConfig({ ...base, ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }).ALLOW_PRIVATE_WEBHOOK_URLS).toBe(true);
    expect(loadConfig({ ...base, WEBHOOK_RETRY_DELAYS: '1s,2s,5s' }).WEBHOOK_RETRY_DELAYS).toEqual([
      1_000, 2_000, 5_000,
    ]);
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://calls.example.com/' }).PUBLIC_BASE_URL).toBe(
      'https://calls.example.com',
    );
  });

  it('reads default dial rates per provider, each above 0 and at most 1000 as team set-limits takes them', () => {
    expect(loadConfig(base).PACING_DIALS_PER_SECOND).toBeUndefined();
    expect(
      loadConfig({ ...base, PACING_DIALS_PER_SECOND: 'twilio=1, vonage=2.5,telnyx=1000' }).PACING_DIALS_PER_SECOND,
    ).toEqual({ twilio: 1, vonage: 2.5, telnyx: 1000 });
    for (const value of ['twilio=0', 'twilio=1000.5', 'telnyx=5000', 'sinch=3', 'twilio']) {
      expect(() => loadConfig({ ...base, PACING_DIALS_PER_SECOND: value }), value).toThrow(
        /PACING_DIALS_PER_SECOND must look like twilio=1,vonage=3,telnyx=30 \(each above 0, at most 1000\)/,
      );
    }
  });

  it('reads the heap growth on its own, for the first import of the API and the worker, and leaves bad values to loadConfig', () => {
    expect(heapGrowingPercentOf('api', {})).toBe(10);
    expect(heapGrowingPercentOf('worker', {})).toBe(50);
    // Empty is unset, as loadConfig reads it (it was 0 here, V8's own factor, beside loadConfig's 50).
    expect(heapGrowingPercentOf('api', { HEAP_GROWING_PERCENT: '' })).toBe(10);
    expect(heapGrowingPercentOf('worker', { HEAP_GROWING_PERCENT: '0' })).toBe(0);
    expect(heapGrowingPercentOf('api', { HEAP_GROWING_PERCENT: '30' })).toBe(30);
    expect(heapGrowingPercentOf('api', { HEAP_GROWING_PERCENT: 'lots' })).toBeUndefined();
    expect(() => loadConfig({ ...base, HEAP_GROWING_PERCENT: 'lots' })).toThrow(/HEAP_GROWING_PERCENT/);
  });
});

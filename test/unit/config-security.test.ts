// The defaults of the settings that bound what a tenant or a forged header can do.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/calls', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

describe('loadConfig', () => {
  it('trusts no proxy headers unless TRUST_PROXY is set', () => {
    expect(loadConfig(base).TRUST_PROXY).toBe(false);
    expect(loadConfig({ ...base, TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(() => loadConfig({ ...base, TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY must be true or false/);
  });

  it("caps a team's webhooks only when MAX_WEBHOOKS_PER_TEAM says so (0, the default: no cap)", () => {
    expect(loadConfig(base).MAX_WEBHOOKS_PER_TEAM).toBe(0);
    expect(loadConfig({ ...base, MAX_WEBHOOKS_PER_TEAM: '5' }).MAX_WEBHOOKS_PER_TEAM).toBe(5);
    expect(() => loadConfig({ ...base, MAX_WEBHOOKS_PER_TEAM: '-1' })).toThrow(/MAX_WEBHOOKS_PER_TEAM/);
  });
});

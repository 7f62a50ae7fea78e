import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  assertPublicUrl,
  BlockedUrlError,
  type HostLookup,
  nonPublicReason,
  resolvePublicAddress,
} from '../../../src/webhooks/ssrf-guard';

// No real network here: every hostname is answered by an injected resolver.
const resolvesTo =
  (...addresses: string[]): HostLookup =>
  async () =>
    addresses.map((address) => ({ address, family: isIP(address) }));
const neverCalled: HostLookup = async (hostname) => {
  throw new Error(`lookup of ${hostname} should not happen`);
};
const guarded = { allowPrivate: false, lookup: neverCalled };

async function refusal(url: string, lookup: HostLookup = neverCalled, allowPrivate = false): Promise<BlockedUrlError> {
  const err: unknown = await assertPublicUrl(url, { allowPrivate, lookup }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `${url} should be refused`).toBeInstanceOf(BlockedUrlError);
  return err as BlockedUrlError;
}

describe('assertPublicUrl refuses non-public literal hosts', () => {
  it.each([
    ['http://127.0.0.1', /loopback/],
    ['http://127.0.0.1:8080/hook', /loopback/],
    ['http://169.254.169.254/latest/meta-data', /cloud metadata/],
    ['http://[::1]', /loopback/],
    ['http://10.1.2.3', /private/],
    ['http://192.168.0.1', /private/],
    ['http://172.20.0.1', /private/],
    ['http://[::ffff:127.0.0.1]', /loopback.*127\.0\.0\.1/],
    ['http://[::ffff:10.0.0.1]', /private/],
    ['http://0.0.0.0', /unspecified/],
    ['http://[::]', /unspecified/],
    ['http://0x7f.1', /loopback/],
    ['http://2130706433', /loopback/],
    ['http://017700000001', /loopback/],
    ['http://0', /unspecified/],
    ['http://169.254.10.1', /link-local/],
    ['http://[fe80::1]', /link-local/],
    ['http://[fd12:3456::1]', /private/],
    ['http://[fd00:ec2::254]', /cloud metadata/],
    ['http://100.64.0.1', /CGNAT/],
    ['http://224.0.0.1', /multicast/],
    ['http://[ff02::1]', /multicast/],
    ['http://255.255.255.255', /broadcast/],
    ['http://[64:ff9b::a00:1]', /private.*10\.0\.0\.1/],
    ['http://[2002:a00:1::1]', /private.*10\.0\.0\.1/],
    ['http://0177.0.0.1', /loopback/],
    ['http://198.18.0.1', /reserved/],
    ['http://[fc00::1]', /private/],
    ['http://[febf::1]', /link-local/],
    ['http://[::ffff:169.254.169.254]', /cloud metadata.*169\.254\.169\.254/],
    ['http://[64:ff9b:1::a00:1]', /private/],
    // IPv4-compatible (deprecated): ipaddr.js calls it unicast, but it is outside 2000::/3
    ['http://[::7f00:1]', /reserved/],
    ['http://[2001::1]', /special-purpose.*teredo/],
  ])('%s', async (url, reason) => {
    const err = await refusal(url);
    expect(err.reason).toBe('blocked-address');
    expect(err.message).toMatch(reason);
  });

  it('names the host and why in the message', async () => {
    expect((await refusal('http://10.1.2.3/x')).message).toBe('url host 10.1.2.3 is a private address');
  });
});

describe('assertPublicUrl refuses hostnames', () => {
  it('that resolve to a private address, without naming what they resolved to', async () => {
    const err = await refusal('https://hooks.internal.example/x', resolvesTo('10.0.0.5'));
    expect(err.reason).toBe('blocked-address');
    expect(err.message).toBe('url host hooks.internal.example resolves to a non-public address');
  });

  it('when any one of their addresses is not public', async () => {
    const err = await refusal('https://mixed.example', resolvesTo('93.184.216.34', '2606:4700::1', '127.0.0.1'));
    expect(err.message).toBe('url host mixed.example resolves to a non-public address');
  });

  it.each([
    ['::ffff:127.0.0.1', '127'],
    ['169.254.169.254', '169'],
    ['64:ff9b::a9fe:a9fe', 'a9fe'],
    ['2002:a00:1::1', '2002'],
    ['fd12:3456::1', 'fd12'],
  ])('that resolve to %s, keeping the answer out of the message', async (address, fragment) => {
    const err = await refusal('http://a.example', resolvesTo(address));
    expect(err.reason).toBe('blocked-address');
    expect(err.message).toBe('url host a.example resolves to a non-public address');
    expect(err.message).not.toContain(fragment);
  });

  it.each([
    'localhost',
    'LOCALHOST',
    'localhost.',
    'api.localhost',
    'metadata.google.internal',
    'metadata.google.internal.',
  ])('%s, whatever the resolver says', async (host) => {
    const err = await refusal(`http://${host}:3000/hook`, resolvesTo('93.184.216.34'));
    expect(err.reason).toBe('blocked-hostname');
  });

  it('that cannot be resolved', async () => {
    const failing: HostLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
    };
    const err = await refusal('https://nowhere.invalid', failing);
    expect(err.reason).toBe('unresolvable');
    expect(err.message).toBe('url host nowhere.invalid could not be resolved (ENOTFOUND)');
    expect((await refusal('https://empty.example', resolvesTo())).reason).toBe('unresolvable');
  });
});

describe('assertPublicUrl refuses what is not an absolute http(s) URL', () => {
  it.each([
    ['/relative/path', 'invalid-url'],
    ['not a url', 'invalid-url'],
    ['ftp://93.184.216.34/file', 'unsupported-protocol'],
    ['file:///etc/passwd', 'unsupported-protocol'],
    ['javascript:alert(1)', 'unsupported-protocol'],
  ])('%s', async (url, reason) => {
    expect((await refusal(url)).reason).toBe(reason);
    expect((await refusal(url, neverCalled, true)).reason).toBe(reason);
  });
});

describe('assertPublicUrl accepts public targets', () => {
  it('a public IPv4 or IPv6 literal, without a DNS lookup', async () => {
    await expect(assertPublicUrl('http://93.184.216.34/hook', guarded)).resolves.toBeUndefined();
    await expect(assertPublicUrl('https://[2606:4700:4700::1111]:8443/', guarded)).resolves.toBeUndefined();
    await expect(assertPublicUrl('http://[::ffff:93.184.216.34]/', guarded)).resolves.toBeUndefined();
  });

  it('a hostname whose every address is public, returning those addresses to connect to', async () => {
    const vetted = await resolvePublicAddress('https://hooks.example.com/in?x=1', {
      allowPrivate: false,
      lookup: resolvesTo('93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'),
    });
    expect(vetted.hostname).toBe('hooks.example.com');
    expect(vetted.url.href).toBe('https://hooks.example.com/in?x=1');
    expect(vetted.addresses).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
  });

  it('with allowPrivate, loopback and private targets', async () => {
    const allowed = { allowPrivate: true, lookup: resolvesTo('127.0.0.1') };
    await expect(assertPublicUrl('http://127.0.0.1:4000/hook', allowed)).resolves.toBeUndefined();
    await expect(assertPublicUrl('http://[::1]:4000/hook', allowed)).resolves.toBeUndefined();
    await expect(assertPublicUrl('http://10.1.2.3', allowed)).resolves.toBeUndefined();
    const vetted = await resolvePublicAddress('http://localhost:4000/hook', allowed);
    expect(vetted.addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect((await resolvePublicAddress('http://[::1]:4000/', allowed)).hostname).toBe('::1');
  });
});

describe('nonPublicReason', () => {
  it.each([
    ['93.184.216.34', null],
    ['8.8.8.8', null],
    ['2606:4700:4700::1111', null],
    ['64:ff9b::808:808', null], // NAT64 of a public address
    ['2002:808:808::1', null], // 6to4 of a public address
    ['172.15.255.255', null],
    ['172.32.0.0', null],
    ['100.128.0.0', null],
    ['172.31.255.255', 'a private address'],
    ['100.127.255.255', 'a shared (CGNAT) address'],
    ['192.0.2.1', 'a reserved address'],
    ['240.0.0.1', 'a reserved address'],
    ['100.63.255.255', null],
    ['100.64.0.0', 'a shared (CGNAT) address'],
    ['198.17.255.255', null],
    ['198.19.255.255', 'a reserved address'],
    ['198.20.0.0', null],
    ['239.255.255.255', 'a multicast address'],
    ['fbff:ffff::1', 'a reserved address'], // outside 2000::/3, just below fc00::/7
    ['fdff:ffff::1', 'a private address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['::ffff:0:7f00:1', 'a special-purpose address (rfc6145)'],
    ['2001:db8::1', 'a reserved address'],
    ['3fff::1', 'a reserved address'],
    ['64:ff9b::a9fe:a9fe', 'a cloud metadata address (169.254.169.254 inside 64:ff9b::a9fe:a9fe)'],
    ['not-an-ip', 'not an IP address'],
    // A resolver answer is taken in its canonical spelling only (the URL parser rewrites hosts).
    ['0x7f.1', 'not an IP address'],
    ['2130706433', 'not an IP address'],
    ['0177.0.0.1', 'not an IP address'],
  ])('%s -> %s', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });
});

// Keeps webhook deliveries from reaching the service's own network: loopback, private ranges,
// link-local, cloud metadata endpoints and other non-public addresses (decisions.md "Webhooks").
// Checked when a webhook is saved and again before every attempt; the attempt then connects to the
// very addresses that were checked, so DNS rebinding between check and connect gains nothing.
import { promises as dnsPromises } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export type BlockedUrlReason =
  | 'invalid-url'
  | 'unsupported-protocol'
  | 'blocked-hostname'
  | 'blocked-address'
  | 'unresolvable';

export class BlockedUrlError extends Error {
  override readonly name = 'BlockedUrlError';
  constructor(
    readonly reason: BlockedUrlReason,
    message: string,
  ) {
    super(message);
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves every address of a hostname, like `dns.promises.lookup(host, { all: true })`. */
export type HostLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export interface UrlGuardOptions {
  /** Skip the address checks (ALLOW_PRIVATE_WEBHOOK_URLS; local development and tests). */
  allowPrivate: boolean;
  /** Replaces the system resolver, for tests. */
  lookup?: HostLookup;
}

export interface VettedUrl {
  url: URL;
  /** The hostname as it goes in the Host header and TLS SNI (brackets removed from IPv6). */
  hostname: string;
  /** Every address the hostname resolved to, each one checked; connect only to these. */
  addresses: ResolvedAddress[];
}

const systemLookup: HostLookup = (hostname) => dnsPromises.lookup(hostname, { all: true, verbatim: true });

// Names that reach internal services whatever a resolver says about them.
const BLOCKED_HOSTNAMES: ReadonlyMap<string, string> = new Map([
  ['localhost', 'a loopback name'],
  ['metadata.google.internal', 'a cloud metadata name'],
  ['metadata.goog', 'a cloud metadata name'],
]);

// One list per family: a BlockList holding IPv6 rules also matches IPv4 addresses through their
// mapped form (::ffff:a.b.c.d), which would put every IPv4 address inside ::/8.
interface Rule {
  label: string;
  ipv4: BlockList;
  ipv6: BlockList;
}

// First match names the reason, so specific entries come before the ranges that contain them.
// Ranges from the IANA special-purpose registries; everything in them is not the public internet.
const RULES: readonly Rule[] = [
  rule('a cloud metadata address', [
    ['169.254.169.254', 32],
    ['169.254.170.2', 32], // AWS ECS task metadata
    ['100.100.100.200', 32], // Alibaba Cloud
    ['168.63.129.16', 32], // Azure platform endpoint (a public address, internal in effect)
    ['fd00:ec2::254', 128],
  ]),
  rule('the broadcast address', [['255.255.255.255', 32]]),
  rule('an unspecified address', [
    ['0.0.0.0', 8],
    ['::', 128],
  ]),
  rule('a loopback address', [
    ['127.0.0.0', 8],
    ['::1', 128],
  ]),
  rule('a private address', [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['fc00::', 7],
    ['fec0::', 10], // deprecated site-local
    ['64:ff9b:1::', 48], // local-use NAT64
  ]),
  rule('a link-local address', [
    ['169.254.0.0', 16],
    ['fe80::', 10],
  ]),
  rule('a shared (CGNAT) address', [['100.64.0.0', 10]]),
  rule('a multicast address', [
    ['224.0.0.0', 4],
    ['ff00::', 8],
  ]),
  rule('a reserved address', [
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['240.0.0.0', 4],
    ['::', 8], // IPv4-compatible, SIIT and other reserved forms; mapped addresses are unwrapped first
    ['100::', 64],
    ['2001:db8::', 32],
  ]),
];

function rule(label: string, subnets: readonly (readonly [string, number])[]): Rule {
  const built: Rule = { label, ipv4: new BlockList(), ipv6: new BlockList() };
  for (const [network, prefix] of subnets) {
    if (isIP(network) === 6) built.ipv6.addSubnet(network, prefix, 'ipv6');
    else built.ipv4.addSubnet(network, prefix, 'ipv4');
  }
  return built;
}

/**
 * Why an IP address is not a public unicast address, or null when it is. IPv6 forms that carry an
 * IPv4 address (mapped, NAT64, 6to4) are judged by that IPv4 address too.
 */
export function nonPublicReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIPv4(address);
    if (embedded !== null) {
      const reason = nonPublicReason(embedded);
      // Traffic to these forms ends at the embedded IPv4 host, so that host decides; this also
      // keeps 64:ff9b::/96 (numerically inside the reserved ::/8) usable on IPv6-only networks.
      return reason === null ? null : `${reason} (${embedded} inside ${address})`;
    }
  }
  for (const { label, ipv4, ipv6 } of RULES) {
    if (family === 4 ? ipv4.check(address, 'ipv4') : ipv6.check(address, 'ipv6')) return label;
  }
  return null;
}

/** Checks a webhook URL; throws BlockedUrlError saying why it may not be used. */
export async function assertPublicUrl(url: string, opts: UrlGuardOptions): Promise<void> {
  await resolvePublicAddress(url, opts);
}

/**
 * Checks a webhook URL and returns the addresses it may connect to. With `allowPrivate` the
 * address checks are skipped, but the URL is still validated and resolved once.
 */
export async function resolvePublicAddress(url: string, opts: UrlGuardOptions): Promise<VettedUrl> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BlockedUrlError('invalid-url', 'url must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new BlockedUrlError(
      'unsupported-protocol',
      `url must use http or https, not ${parsed.protocol.replace(/:$/, '')}`,
    );
  }

  // The WHATWG parser has already turned 0x7f.1, 2130706433 and friends into dotted IPv4.
  const hostname = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const literalFamily = isIP(hostname);
  if (literalFamily !== 0) {
    const address = { address: hostname, family: literalFamily as 4 | 6 };
    if (!opts.allowPrivate) rejectNonPublic(hostname, [address]);
    return { url: parsed, hostname, addresses: [address] };
  }

  // A trailing dot names the same host, so it must not slip past the name list.
  const name = hostname.replace(/\.+$/, '');
  if (!opts.allowPrivate) {
    const blockedName = BLOCKED_HOSTNAMES.get(name);
    if (blockedName !== undefined) {
      throw new BlockedUrlError('blocked-hostname', `url host ${name} is ${blockedName}`);
    }
    if (name.endsWith('.localhost')) {
      throw new BlockedUrlError('blocked-hostname', `url host ${name} is a loopback name`);
    }
  }

  const addresses = await lookupAll(hostname, opts.lookup ?? systemLookup);
  if (!opts.allowPrivate) rejectNonPublic(hostname, addresses);
  return { url: parsed, hostname, addresses };
}

function rejectNonPublic(hostname: string, addresses: readonly ResolvedAddress[]): void {
  for (const { address } of addresses) {
    const reason = nonPublicReason(address);
    if (reason === null) continue;
    const target = address === hostname ? `url host ${address} is` : `url host ${hostname} resolves to`;
    throw new BlockedUrlError('blocked-address', `${target} ${reason}${address === hostname ? '' : ` (${address})`}`);
  }
}

async function lookupAll(hostname: string, lookup: HostLookup): Promise<ResolvedAddress[]> {
  let results: readonly { address: string; family: number }[];
  try {
    results = await lookup(hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    throw new BlockedUrlError('unresolvable', `url host ${hostname} could not be resolved${code ? ` (${code})` : ''}`);
  }
  const addresses: ResolvedAddress[] = [];
  for (const { address } of results) {
    const family = isIP(address);
    // An answer we cannot read is one we cannot vouch for.
    if (family === 0) {
      throw new BlockedUrlError('unresolvable', `url host ${hostname} resolved to something that is not an IP address`);
    }
    addresses.push({ address, family: family as 4 | 6 });
  }
  if (addresses.length === 0) {
    throw new BlockedUrlError('unresolvable', `url host ${hostname} has no addresses`);
  }
  return addresses;
}

/** The IPv4 address carried by an IPv4-mapped (::ffff:0:0/96) IPv6 address. */
function mappedIPv4(address: string): string | null {
  const words = ipv6Words(address);
  if (words === null) return null;
  const isMapped = words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff;
  return isMapped ? wordsToIPv4(words[6], words[7]) : null;
}

/** The IPv4 address inside a mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16) IPv6 address. */
function embeddedIPv4(address: string): string | null {
  const mapped = mappedIPv4(address);
  if (mapped !== null) return mapped;
  const words = ipv6Words(address);
  if (words === null) return null;
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0)) {
    return wordsToIPv4(words[6], words[7]);
  }
  if (words[0] === 0x2002) return wordsToIPv4(words[1], words[2]);
  return null;
}

function wordsToIPv4(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (accepts `::` and a trailing dotted IPv4). */
function ipv6Words(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  const headWords = parse(head);
  const tailWords = tail === undefined ? [] : parse(tail);
  const fill = 8 - headWords.length - tailWords.length;
  return [...headWords, ...new Array<number>(tail === undefined ? 0 : fill).fill(0), ...tailWords];
}

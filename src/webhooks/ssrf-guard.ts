// Keeps webhook deliveries from reaching the service's own network: loopback, private ranges,
// link-local, cloud metadata endpoints and other non-public addresses (decisions.md "Webhooks").
// Checked when a webhook is saved and again before every attempt; the attempt then connects to the
// very addresses that were checked, so DNS rebinding between check and connect gains nothing.
import { promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type BlockedUrlReason =
  'invalid-url' | 'unsupported-protocol' | 'blocked-hostname' | 'blocked-address' | 'unresolvable';

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
  /** Replaces the resolver (dnsLookup, or the system's where private addresses are allowed), for tests. */
  lookup?: HostLookup;
}

export interface VettedUrl {
  url: URL;
  /** The hostname as it goes in the Host header and TLS SNI (brackets removed from IPv6). */
  hostname: string;
  /** Every address the hostname resolved to, each one checked; connect only to these. */
  addresses: ResolvedAddress[];
}

/** getaddrinfo, as the rest of Node resolves: the hosts file, `localhost`, mDNS (local development). */
const systemLookup: HostLookup = (hostname) => dnsPromises.lookup(hostname, { all: true, verbatim: true });

/** Answers that the name has no address, as opposed to a name server not answering or failing. */
const NO_SUCH_ADDRESS: ReadonlySet<string> = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * A public hostname's A and AAAA records, by DNS queries with a time limit (c-ares, as
 * `dns.Resolver`), not getaddrinfo: that runs on libuv's pool of four threads with no limit of its
 * own, so a tenant whose webhook names a host whose name server never answers would hold those threads
 * (each try, each save) and stall every other team's deliveries, the providers' requests and the
 * database's reconnects behind them. No hosts file: a webhook's host is a public name.
 */
export function dnsLookup(options: { timeoutMs?: number; tries?: number; servers?: string[] } = {}): HostLookup {
  const resolver = new dnsPromises.Resolver({ timeout: options.timeoutMs ?? 2_000, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers(options.servers);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length > 0) return addresses;
    // The error that says most: a name server that did not answer (or failed) over a name with no A or
    // AAAA record, so that a refusal does not say "no such name" for a timeout.
    const errors = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as NodeJS.ErrnoException] : []));
    throw (
      errors.find((err) => !NO_SUCH_ADDRESS.has(err.code ?? '')) ?? errors[0] ?? new Error(`no address for ${hostname}`)
    );
  };
}

const publicLookup = dnsLookup();

// Names that reach internal services whatever a resolver says about them.
const BLOCKED_HOSTNAMES: ReadonlyMap<string, string> = new Map([
  ['localhost', 'a loopback name'],
  ['metadata.google.internal', 'a cloud metadata name'],
  ['metadata.goog', 'a cloud metadata name'],
]);

// Cloud metadata endpoints, named before the range each sits in.
const METADATA_ADDRESSES: ReadonlySet<string> = new Set(
  [
    '169.254.169.254',
    '169.254.170.2', // AWS ECS task metadata
    '100.100.100.200', // Alibaba Cloud
    '168.63.129.16', // Azure platform endpoint (a public address, internal in effect)
    'fd00:ec2::254',
  ].map((address) => ipaddr.parse(address).toNormalizedString()),
);

// How a refusal names the ranges ipaddr.js classifies (from the IANA special-purpose registries).
// Any other name but 'unicast' (documentation, benchmarking, Teredo, AS112...) is no place for a
// webhook either, and is refused under its ipaddr.js name.
const RANGE_LABELS: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private address',
  deprecatedSiteLocal: 'a private address',
  // Only local-use NAT64 (64:ff9b:1::/48) gets here: the well-known prefix is judged by its host.
  rfc6052: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a shared (CGNAT) address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

// IANA allocates IPv6 global unicast from 2000::/3 only. ipaddr.js calls the rest 'unicast' too,
// IPv4-compatible ::a.b.c.d among it, but nothing public is there.
const GLOBAL_UNICAST_IPV6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** The IPv4 address inside a mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  const bytes = ip.toByteArray();
  if (ip.match(NAT64_WELL_KNOWN)) return new ipaddr.IPv4(bytes.slice(12));
  if (ip.range() === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  return null;
}

/**
 * Why an IP address is not a public unicast address, or null when it is. IPv6 forms that carry an
 * IPv4 address (mapped, NAT64, 6to4) are judged by that IPv4 address.
 */
export function nonPublicReason(address: string): string | null {
  // node:net reads only the canonical spellings; ipaddr.js alone would also take 0x7f.1 or 2130706433.
  if (isIP(address) === 0) return 'not an IP address';
  const ip = ipaddr.parse(address);
  if (METADATA_ADDRESSES.has(ip.toNormalizedString())) return 'a cloud metadata address';
  if (ip instanceof ipaddr.IPv6) {
    const embedded = embeddedIPv4(ip);
    if (embedded !== null) {
      const reason = nonPublicReason(embedded.toString());
      // Traffic to these forms ends at the embedded IPv4 host, so that host decides; this also
      // keeps NAT64 usable on IPv6-only networks.
      return reason === null ? null : `${reason} (${embedded.toString()} inside ${address})`;
    }
  }
  const range = ip.range();
  if (range === 'unicast') {
    return ip instanceof ipaddr.IPv6 && !ip.match(GLOBAL_UNICAST_IPV6) ? 'a reserved address' : null;
  }
  return RANGE_LABELS[range] ?? `a special-purpose address (${range})`;
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

  const addresses = await lookupAll(hostname, opts.lookup ?? (opts.allowPrivate ? systemLookup : publicLookup));
  if (!opts.allowPrivate) rejectNonPublic(hostname, addresses);
  return { url: parsed, hostname, addresses };
}

// The message is the 400 on webhook create/update and the error of a delivery record, both read by
// the tenant: a literal host is named as written, but what a hostname resolved to is never named
// (neither the address nor its kind), so a refusal cannot be used to read the service's DNS.
function rejectNonPublic(hostname: string, addresses: readonly ResolvedAddress[]): void {
  for (const { address } of addresses) {
    const reason = nonPublicReason(address);
    if (reason === null) continue;
    throw new BlockedUrlError(
      'blocked-address',
      address === hostname
        ? `url host ${address} is ${reason}`
        : `url host ${hostname} resolves to a non-public address`,
    );
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

// Whether a webhook URL may be registered (decisions.md: loopback, private, link-local and metadata
// addresses are refused unless configuration allows them). Used for team webhooks and for a call's
// own phoneCallWebhooks; every delivery checks the addresses again before connecting.
import { mapBounded } from '../concurrency/run-bounded';
import { BlockedUrlError, assertPublicUrl, type HostLookup } from './ssrf-guard';

/** Hosts looked up at once for one request's URLs. */
const LOOKUPS_AT_ONCE = 16;

/** The problem with `url` as a message that starts after the field name, or null when it is fine. */
export async function webhookUrlProblem(
  url: string,
  allowPrivate: boolean,
  lookup?: HostLookup,
): Promise<string | null> {
  try {
    await assertPublicUrl(url, { allowPrivate, ...(lookup ? { lookup } : {}) });
    return null;
  } catch (err) {
    if (!(err instanceof BlockedUrlError)) throw err;
    // A name that does not resolve yet may be registered: it cannot point anywhere now.
    if (err.reason === 'unresolvable') return null;
    return err.message.replace(/^url /, '');
  }
}

/**
 * Each URL's problem (webhookUrlProblem), for the many URLs of one request (a batch's calls' own
 * webhooks). A verdict depends on the URL's host alone, so each host is looked up once
 * however many paths and queries name it, and hosts side by side: one by one, a batch of calls whose
 * URLs differ by a query parameter made a DNS query per call, seconds each for a host whose name
 * server does not answer.
 */
export async function webhookUrlsProblems(
  urls: readonly string[],
  allowPrivate: boolean,
  lookup?: HostLookup,
): Promise<Map<string, string | null>> {
  const byHost = new Map<string, string>();
  for (const url of urls) {
    const host = hostKeyOf(url);
    if (!byHost.has(host)) byHost.set(host, url);
  }
  const hosts = [...byHost.entries()];
  const verdicts = await mapBounded(hosts, LOOKUPS_AT_ONCE, ([, url]) => webhookUrlProblem(url, allowPrivate, lookup));
  const verdictOf = new Map(hosts.map(([host], i) => [host, verdicts[i]!]));
  const problems = new Map<string, string | null>();
  for (const url of urls) problems.set(url, verdictOf.get(hostKeyOf(url))!);
  return problems;
}

/** What the guard's verdict depends on: the host of an http or https URL (any other URL stands for itself). */
function hostKeyOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.hostname : url;
  } catch {
    return url;
  }
}

// Whether a webhook URL may be registered (decisions.md: loopback, private, link-local and metadata
// addresses are refused unless configuration allows them). Used for team webhooks and for a call's
// own phoneCallWebhooks; every delivery checks the addresses again before connecting.
import { BlockedUrlError, assertPublicUrl } from './ssrf-guard';

/** The problem with `url` as a message that starts after the field name, or null when it is fine. */
export async function webhookUrlProblem(url: string, allowPrivate: boolean): Promise<string | null> {
  try {
    await assertPublicUrl(url, { allowPrivate });
    return null;
  } catch (err) {
    if (!(err instanceof BlockedUrlError)) throw err;
    // A name that does not resolve yet may be registered: it cannot point anywhere now.
    if (err.reason === 'unresolvable') return null;
    return err.message.replace(/^url /, '');
  }
}

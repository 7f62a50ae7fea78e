// A team made by `team create` where the service's provider URLs point at the provider emulator
// (`npm start`, tests) gets working emulator credentials and a from-number for every provider, so
// its calls dial with no further command. The providers' real API roots are never asked.
import { PROVIDER_API_BASE_URLS, type Config } from '../config';
import { EMULATOR_ACCOUNTS_KIND, EMULATOR_ACCOUNTS_PATH, type EmulatorAccounts } from '../contracts/emulator-accounts';
import { PROVIDERS, type ProviderName } from '../contracts/providers';
import type { SecretBox } from '../crypto/secret-box';
import { setTeamProvider } from './commands';

type BaseUrls = Pick<Config, 'TWILIO_API_BASE_URL' | 'VONAGE_API_BASE_URL' | 'TELNYX_API_BASE_URL'>;

export interface Provisioning {
  provisioned: ProviderName[];
  /** Providers whose URL is not a real provider's but did not answer as the emulator, and why. */
  unreachable: Array<{ provider: ProviderName; url: string; reason: string }>;
}

function baseUrlOf(urls: BaseUrls, provider: ProviderName): string {
  return { twilio: urls.TWILIO_API_BASE_URL, vonage: urls.VONAGE_API_BASE_URL, telnyx: urls.TELNYX_API_BASE_URL }[
    provider
  ];
}

async function fetchAccounts(baseUrl: string): Promise<EmulatorAccounts> {
  const response = await fetch(`${baseUrl}${EMULATOR_ACCOUNTS_PATH}`, {
    method: 'POST',
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json().catch(() => null)) as EmulatorAccounts | null;
  if (!response.ok || body?.kind !== EMULATOR_ACCOUNTS_KIND)
    throw new Error(`answered ${response.status}, not as the provider emulator`);
  return body;
}

export async function provisionEmulatorAccounts(
  teamId: string,
  urls: BaseUrls,
  secretBox: SecretBox,
): Promise<Provisioning> {
  const result: Provisioning = { provisioned: [], unreachable: [] };
  // One request per emulator (all three providers usually share one).
  const answers = new Map<string, Promise<EmulatorAccounts>>();
  for (const provider of PROVIDERS) {
    const url = baseUrlOf(urls, provider);
    if (url === PROVIDER_API_BASE_URLS[provider]) continue;
    if (!answers.has(url)) answers.set(url, fetchAccounts(url));
    try {
      const account = (await answers.get(url)!).providers[provider];
      await setTeamProvider(
        { team: teamId, provider, credentials: JSON.stringify(account.credentials), fromNumbers: [account.fromNumber] },
        secretBox,
      );
      result.provisioned.push(provider);
    } catch (err) {
      result.unreachable.push({ provider, url, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  return result;
}

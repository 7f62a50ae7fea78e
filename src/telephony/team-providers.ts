// Builds the adapter for a team's provider from its sealed credentials.
import type { Types } from 'mongoose';
import type { ProviderName } from '../contracts/providers';
import type { SecretBox } from '../crypto/secret-box';
import { readTeam } from '../data/team-reads';
import { checkCredentials } from './credentials';
import { createProvider, type ProviderBaseUrls } from './index';
import type { TelephonyProvider } from './provider';

/** The team has no usable credentials for the provider: retrying cannot help until an operator sets them. */
export class ProviderNotConfiguredError extends Error {
  override readonly name = 'ProviderNotConfiguredError';
}

export type TeamProviderResolver = (
  teamId: string | Types.ObjectId,
  provider: ProviderName,
) => Promise<TelephonyProvider>;

export function createTeamProviderResolver(deps: {
  secretBox: SecretBox;
  baseUrls: ProviderBaseUrls;
}): TeamProviderResolver {
  return async (teamId, provider) => {
    const team = await readTeam(String(teamId));
    const settings = team?.providerSettings.find((s) => s.provider === provider);
    if (!settings?.credentialsSealed) {
      throw new ProviderNotConfiguredError(`team ${String(teamId)} has no ${provider} credentials`);
    }
    // Sealed as `{ provider, [provider]: fields }`; fields stored before they were checked may lack some.
    const stored = JSON.parse(deps.secretBox.open(settings.credentialsSealed)) as Record<string, unknown>;
    const checked = checkCredentials(provider, stored[provider]);
    if ('problems' in checked) {
      throw new ProviderNotConfiguredError(
        `team ${String(teamId)} has unusable ${provider} credentials (${checked.problems.join('; ')}): set them again with team set-provider`,
      );
    }
    return createProvider(checked.credentials, deps.baseUrls);
  };
}

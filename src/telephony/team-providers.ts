// Builds the adapter for a team's provider from its sealed credentials.
import type { Types } from 'mongoose';
import type { ProviderName } from '../contracts/providers';
import type { SecretBox } from '../crypto/secret-box';
import { readTeam } from '../data/team-reads';
import { createProvider, type ProviderBaseUrls } from './index';
import type { ProviderCredentials, TelephonyProvider } from './provider';

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
    const credentials = JSON.parse(deps.secretBox.open(settings.credentialsSealed)) as ProviderCredentials;
    return createProvider(credentials, deps.baseUrls);
  };
}

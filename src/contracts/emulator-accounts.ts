// What the provider emulator hands out at `POST /emulator/accounts`: for each provider, credentials
// that work against it (its callbacks verify with them) and a number to call from. The operator
// command line provisions a new team with these when the service's provider URLs point at the
// emulator (README, "Operator command line"). Plain data, shared by the emulator and the CLI.
import type { ProviderName } from './providers';

export const EMULATOR_ACCOUNTS_PATH = '/emulator/accounts';

/** Tells an emulator's answer apart from anything else that might answer at that path. */
export const EMULATOR_ACCOUNTS_KIND = 'outbound-call-orchestrator.emulator-accounts';

export interface EmulatorAccounts {
  kind: typeof EMULATOR_ACCOUNTS_KIND;
  providers: Record<ProviderName, { credentials: Record<string, string>; fromNumber: string }>;
}

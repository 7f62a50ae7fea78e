// The team's adapter for a call, as every activity that talks to a provider gets it: credentials
// removed (or unusable) since the call was made cannot come back by retrying, so their absence fails
// the activity at once, not after its whole retry policy (the workflow then ends the step without the
// provider, as for any failure of that step).
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES } from '../src/contracts/failures';
import { ProviderNotConfiguredError, type TeamProviderResolver } from '../src/telephony/team-providers';

export function nonRetryableWhenUnconfigured(providers: TeamProviderResolver): TeamProviderResolver {
  return async (...args) => {
    try {
      return await providers(...args);
    } catch (err) {
      if (err instanceof ProviderNotConfiguredError) {
        throw ApplicationFailure.create({
          type: FAILURES.providerNotConfigured,
          message: err.message,
          nonRetryable: true,
        });
      }
      throw err;
    }
  };
}

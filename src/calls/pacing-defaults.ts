// The service-wide pacing defaults: the providers' own account limits for real providers, higher ones
// where a provider's API is the emulator (npm start, tests), and the configuration over both.
import type { Config } from '../config';
import { PROVIDER_API_BASE_URLS } from '../config';
import {
  DEFAULT_MAX_CONCURRENT_CALLS,
  EMULATOR_DEFAULT_DIALS_PER_SECOND,
  EMULATOR_DEFAULT_MAX_CONCURRENT_CALLS,
  PROVIDER_DEFAULT_DIALS_PER_SECOND,
  type PacingLimits,
} from '../contracts/pacing';
import { PROVIDERS } from '../contracts/providers';

type BaseUrls = Pick<Config, 'TWILIO_API_BASE_URL' | 'VONAGE_API_BASE_URL' | 'TELNYX_API_BASE_URL'>;

function isRealProvider(config: BaseUrls, provider: (typeof PROVIDERS)[number]): boolean {
  const configured = {
    twilio: config.TWILIO_API_BASE_URL,
    vonage: config.VONAGE_API_BASE_URL,
    telnyx: config.TELNYX_API_BASE_URL,
  };
  return configured[provider] === PROVIDER_API_BASE_URLS[provider];
}

export function pacingDefaults(
  config: BaseUrls & Pick<Config, 'PACING_MAX_CONCURRENT_CALLS' | 'PACING_DIALS_PER_SECOND'>,
): PacingLimits {
  const allReal = PROVIDERS.every((p) => isRealProvider(config, p));
  const dialsPerSecond = Object.fromEntries(
    PROVIDERS.map((p) => [
      p,
      config.PACING_DIALS_PER_SECOND?.[p] ??
        (isRealProvider(config, p) ? PROVIDER_DEFAULT_DIALS_PER_SECOND[p] : EMULATOR_DEFAULT_DIALS_PER_SECOND),
    ]),
  ) as PacingLimits['dialsPerSecond'];
  return {
    maxConcurrentCalls:
      config.PACING_MAX_CONCURRENT_CALLS ??
      (allReal ? DEFAULT_MAX_CONCURRENT_CALLS : EMULATOR_DEFAULT_MAX_CONCURRENT_CALLS),
    dialsPerSecond,
  };
}

import type { Config } from '../src/config';
import type { SecretBox } from '../src/crypto/secret-box';
import type { Logger } from '../src/logger';
import type { TeamProviderResolver } from '../src/telephony/team-providers';

/** What activities need from the outside world; wired only in the worker's entry point. */
export interface ActivityDeps {
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'WEBHOOK_RETRY_DELAYS' | 'ALLOW_PRIVATE_WEBHOOK_URLS'>;
  logger: Logger;
  secretBox: SecretBox;
  providers: TeamProviderResolver;
}

import type { Client } from '@temporalio/client';
import type { Config } from '../src/config';
import type { PacingLimits } from '../src/contracts/pacing';
import type { SecretBox } from '../src/crypto/secret-box';
import type { CallStore } from '../src/data/call-store';
import type { ConversationStore } from '../src/data/conversation-store';
import type { DoNotCallStore } from '../src/data/do-not-call-store';
import type { PacingStore } from '../src/data/pacing-store';
import type { TemplateStore } from '../src/data/template-store';
import type { WebhookStore } from '../src/data/webhook-store';
import type { Logger } from '../src/logger';
import type { WorkerMetrics } from '../src/observability/metrics';
import type { TeamProviderResolver } from '../src/telephony/team-providers';

/**
 * What activities need from the outside world; wired only in the worker's entry point
 * (src/worker/create-worker.ts). Data access goes through the small stores, so that an activity can
 * be run alone with MockActivityEnvironment.
 */
export interface ActivityDeps {
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'WEBHOOK_RETRY_DELAYS' | 'ALLOW_PRIVATE_WEBHOOK_URLS'> &
    Partial<Pick<Config, 'WEBHOOK_MAX_ATTEMPTS_PER_TEAM'>>;
  logger: Logger;
  secretBox: SecretBox;
  providers: TeamProviderResolver;
  calls: CallStore;
  templates: TemplateStore;
  conversations: ConversationStore;
  webhooks: WebhookStore;
  pacing: PacingStore;
  doNotCall: DoNotCallStore;
  /** The service's pacing defaults (a team's own settings override them). */
  pacingDefaults: PacingLimits;
  /** For the pacer: signal-with-start and describing call workflows. */
  temporal: { client: Client; taskQueue: string };
  /** The worker's Prometheus figures (dials, status changes, webhook attempts). */
  metrics: WorkerMetrics;
}

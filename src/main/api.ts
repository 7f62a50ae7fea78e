// Entry point: the Koa API. `npm run api` runs it against configured servers.
// First, before any other module loads (see the file).
import './api-heap-growth';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import mongoose from 'mongoose';
import { createApp } from '../api/app';
import { errorBody } from '../api/errors';
import { createHealthRouter } from '../api/routes/health';
import { createMetricsRouter } from '../api/routes/metrics';
import { createDocsRouter } from '../api/routes/docs';
import { createApiMetrics } from '../observability/metrics';
import { createMediaRouter } from '../api/routes/media';
import { createOpenApiRouter } from '../api/routes/openapi';
import { createPhoneCallsRouter } from '../api/routes/phone-calls';
import { createPhoneCallBatchesRouter } from '../api/routes/phone-call-batches';
import { createQueuedCallControl } from '../calls/queued-call-control';
import { createDispatcher } from '../calls/dispatch';
import { createCallbackProviderResolver, createProviderEventSink } from '../calls/provider-events';
import type { Config } from '../config';
import { loadConfigWithLocalStack } from '../local/stack-settings';
import { createSecretBox } from '../crypto/secret-box';
import { backfillListPositions } from '../data/call-list-backfill';
import { backfillTranscriptSlices } from '../data/transcript-list-backfill';
import { connectMongo, ensureIndexes, pingMongo } from '../data/connection';
import { createLogger, type Logger } from '../logger';
import { createTelephonyCallbackRouter } from '../api/routes/provider-callbacks';
import { createTeamProviderResolver } from '../telephony/team-providers';
import { connectTemporalClient, pingTemporal } from '../temporal/connection';
import { createTranscriptsRouter } from '../api/routes/transcripts';
import { createDoNotCallRouter } from '../api/routes/do-not-call';
import { createDoNotCallStore } from '../data/do-not-call-store';
import { createVoiceSamplesRouter, createVoicesRouter } from '../api/routes/voices';
import { createWebhooksRouter } from '../api/routes/webhooks';
import { createWebhookDeliveriesRouter } from '../api/routes/webhook-deliveries';
import { createRedelivery } from '../webhooks/redelivery';
import { createRateLimiter } from '../api/rate-limit';
import { createVoiceSampleTokens } from '../voices/sample-tokens';
import { syncVoiceCatalogue } from '../voices/sync';

export interface ApiDeps {
  config: Config;
  logger: Logger;
  temporal: Client;
}

/** The Koa app with every router, over connections the caller owns. */
export function createApiApp({ config, logger, temporal }: ApiDeps): Koa {
  const secretBox = createSecretBox(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_PREVIOUS);
  const sampleTokens = createVoiceSampleTokens(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_PREVIOUS);
  const providers = createTeamProviderResolver({
    secretBox,
    baseUrls: {
      twilio: config.TWILIO_API_BASE_URL,
      vonage: config.VONAGE_API_BASE_URL,
      telnyx: config.TELNYX_API_BASE_URL,
    },
  });
  const dispatcher = createDispatcher({ client: temporal, config: config });
  const control = createQueuedCallControl({ client: temporal, dispatcher });
  const metrics = createApiMetrics();
  const rateLimiter =
    config.RATE_LIMIT_PER_SECOND > 0
      ? createRateLimiter(
          { perSecond: config.RATE_LIMIT_PER_SECOND, burst: config.RATE_LIMIT_BURST },
          { onSyncError: (err) => logger.warn({ err }, 'rate limit counts not shared this time') },
        )
      : undefined;
  return createApp({
    rateLimiter,
    logger,
    metrics,
    bodyLimit: config.REQUEST_BODY_LIMIT,
    trustProxy: config.TRUST_PROXY,
    publicRouters: [
      createHealthRouter({ checks: { mongodb: pingMongo, temporal: () => pingTemporal(temporal) } }),
      createMetricsRouter({ metrics, token: config.METRICS_BEARER_TOKEN }),
      createMediaRouter(),
      createVoiceSamplesRouter({ sampleTokens }),
      createOpenApiRouter({ publicBaseUrl: config.PUBLIC_BASE_URL }),
      createDocsRouter(),
      createTelephonyCallbackRouter({
        publicBaseUrl: config.PUBLIC_BASE_URL,
        resolveProvider: createCallbackProviderResolver(providers),
        onEvents: createProviderEventSink({ temporal, logger }),
        logger,
      }),
    ],
    v1Routers: [
      createPhoneCallsRouter({
        dispatcher,
        control,
        secretBox,
        batchStartConcurrency: config.BATCH_START_CONCURRENCY,
        allowPrivateWebhookUrls: config.ALLOW_PRIVATE_WEBHOOK_URLS,
      }),
      createPhoneCallBatchesRouter({ control, concurrency: config.BATCH_START_CONCURRENCY }),
      createWebhooksRouter({
        secretBox,
        allowPrivateUrls: config.ALLOW_PRIVATE_WEBHOOK_URLS,
        maxPerTeam: config.MAX_WEBHOOKS_PER_TEAM,
      }),
      createWebhookDeliveriesRouter({
        redelivery: createRedelivery({
          client: temporal,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          retryDelaysMs: config.WEBHOOK_RETRY_DELAYS,
        }),
      }),
      createTranscriptsRouter(),
      createDoNotCallRouter({ list: createDoNotCallStore() }),
      createVoicesRouter({ publicBaseUrl: config.PUBLIC_BASE_URL, sampleTokens }),
    ],
  });
}

export async function listen(app: Koa, port: number, host: string): Promise<Server> {
  const server = app.listen(port, host);
  answerClientErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Large batches must not be cut by Node's default request timeout; a client that trickles its
  // headers (slowloris) is cut after 20 s.
  server.requestTimeout = 5 * 60 * 1000;
  server.headersTimeout = 20 * 1000;
  return server;
}

/**
 * Requests Node's HTTP parser refuses never reach Koa: oversized headers (431), a request cut by the
 * timeouts (408), malformed HTTP (400). They get the error shape too instead of Node's bare answer.
 */
function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, message] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'request headers are too large']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'the request took too long to arrive']
          : [400, 'malformed HTTP request'];
    const body = JSON.stringify(errorBody(status, [message]));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/** Connects to MongoDB and Temporal, and serves the API. */
export async function startApi(config: Config, logger: Logger): Promise<{ server: Server; close(): Promise<void> }> {
  await connectMongo(config.MONGODB_URI, config.MONGODB_POOL_SIZE, { logger });
  await ensureIndexes();
  const placed = await backfillListPositions();
  if (placed) logger.info({ calls: placed }, 'placed calls stored before list positions in their teams’ lists');
  const sliced = await backfillTranscriptSlices();
  if (sliced) logger.info({ rows: sliced }, 'placed transcript rows stored before time slices in their teams’ slices');
  await syncVoiceCatalogue();
  const temporal = await connectTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
  });
  const server = await listen(createApiApp({ config, logger, temporal }), config.PORT, config.HOST);
  return {
    server,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await temporal.connection.close();
      await mongoose.disconnect();
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfigWithLocalStack();
  const logger = createLogger(config.LOG_LEVEL, 'api');
  const api = await startApi(config, logger);
  logger.info({ port: config.PORT, url: config.PUBLIC_BASE_URL }, 'API listening');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'API stopping: finishing requests in flight');
    api.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'API did not stop cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`API failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

// A whole service stack over given servers: its own database and task queue, the API, a worker (with
// the reconciler) in this process, and the provider emulator; plus a seeded team. Used by every
// integration test file (test/helpers/stack.ts) and by the benchmarks.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import { createDispatcher } from '../../src/calls/dispatch';
import { startReconciler } from '../../src/calls/reconciler';
import { createSecretBox } from '../../src/crypto/secret-box';
import { loadConfig, type Config } from '../../src/config';
import { createEmulator } from '../../src/emulator';
import { createLogger } from '../../src/logger';
import { createWorkerMetrics } from '../../src/observability/metrics';
import { startWorkerMetricsServer } from '../../src/observability/metrics-endpoint';
import { checkReadiness } from '../../src/observability/readiness';
import { startApi } from '../../src/main/api';
import { connectTemporalClient } from '../../src/temporal/connection';
import { activityLogContext } from '../../src/worker/activity-log-context';
import { createCallWorker, type CallWorker } from '../../src/worker/create-worker';
import { workerReadinessChecks } from '../../src/worker/readiness';
import { seedEmulatedTeam, type EmulatedTeam } from '../../src/local/emulated-team';
import { freePorts } from '../../src/local/servers';
import type { Client } from '@temporalio/client';
import type { DestinationStream } from 'pino';
import { withDatabase } from './database-uri';

export type SeededTeam = EmulatedTeam;

export interface TestStack {
  config: Config;
  baseUrl: string;
  temporal: Client;
  emulator: ReturnType<typeof createEmulator>;
  /** The worker's /metrics (served while the worker runs). */
  workerMetricsUrl(): string;
  team: SeededTeam;
  seedTeam(name?: string): Promise<SeededTeam>;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

export interface StackServers {
  mongoUri: string;
  temporalAddress: string;
  workflowBundlePath?: string;
}

/** The stack over given servers; the benchmarks use it outside Vitest. */
export async function startServiceStack(
  servers: StackServers,
  options: {
    env?: Record<string, string>;
    speedFactor?: number;
    /** Where the API, worker and emulator write their log lines (stdout by default). */
    logDestination?: DestinationStream;
  } = {},
): Promise<TestStack> {
  const database = `test_${randomBytes(6).toString('hex')}`;
  const [port, emulatorPort] = (await freePorts(2)) as [number, number];
  const vonageSignatureSecret = randomBytes(24).toString('base64url');
  const telnyxKeys = generateKeyPairSync('ed25519');
  const logLevel = options.env?.LOG_LEVEL ?? process.env.TEST_LOG_LEVEL ?? 'silent';
  const logger = createLogger(logLevel, 'test', { context: activityLogContext, destination: options.logDestination });
  const emulator = createEmulator({
    logger: logger.child({ service: 'emulator' }),
    port: emulatorPort,
    host: '127.0.0.1',
    speedFactor: options.speedFactor ?? 0.02,
    vonageSignatureSecret,
    telnyxSigningKeyPem: telnyxKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  });
  const { url: emulatorUrl } = await emulator.start();
  const mongoUri = withDatabase(servers.mongoUri, database);
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MONGODB_URI: mongoUri,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    TEMPORAL_TASK_QUEUE: `test-${database}`,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: logLevel,
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    WEBHOOK_RETRY_DELAYS: '200ms,400ms,800ms',
    TWILIO_API_BASE_URL: emulatorUrl,
    VONAGE_API_BASE_URL: emulatorUrl,
    TELNYX_API_BASE_URL: emulatorUrl,
    ...options.env,
  });
  const api = await startApi(config, logger);
  const temporal = await connectTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
  });
  const secretBox = createSecretBox(config.ENCRYPTION_KEY);
  const telnyxPublicKey = telnyxKeys.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64');

  // The worker process: the Temporal worker and the reconciler, as src/main/worker.ts runs them.
  const dispatcher = createDispatcher({ client: temporal, config: config });
  let running: {
    worker: CallWorker;
    done: Promise<void>;
    stopReconciler: () => Promise<void>;
    metricsServer: { url: string; close(): Promise<void> };
  } | null = null;
  async function startWorker() {
    const metrics = createWorkerMetrics();
    const { worker, sdkMetricsUrl } = await createCallWorker({
      config,
      logger,
      metrics,
      workflowBundlePath: servers.workflowBundlePath,
    });
    const metricsServer = await startWorkerMetricsServer({
      host: '127.0.0.1',
      port: 0,
      token: config.METRICS_BEARER_TOKEN,
      registry: metrics.registry,
      sdkMetricsUrl: () => sdkMetricsUrl,
      logger,
      readiness: () => checkReadiness(workerReadinessChecks({ mongodb: true, client: temporal, worker }), logger),
    });
    const stopReconciler = startReconciler({ dispatcher, logger, afterSeconds: config.RECONCILE_AFTER_SECONDS });
    running = { worker, done: worker.run(), stopReconciler, metricsServer };
  }
  async function stopWorker() {
    if (!running) return;
    const reconcilerStopped = running.stopReconciler();
    running.worker.shutdown();
    await running.done;
    await reconcilerStopped;
    await running.metricsServer.close();
    running = null;
  }
  function workerMetricsUrl(): string {
    if (!running) throw new Error('the worker is not running');
    return running.metricsServer.url;
  }

  async function seedTeam(name = 'Test team'): Promise<SeededTeam> {
    return seedEmulatedTeam({ name, secretBox, vonageSignatureSecret, telnyxPublicKey });
  }

  await startWorker();
  const team = await seedTeam();
  const address = api.server.address() as AddressInfo;
  return {
    config,
    baseUrl: `http://127.0.0.1:${address.port}`,
    temporal,
    emulator,
    team,
    seedTeam,
    startWorker,
    stopWorker,
    workerMetricsUrl,
    async stop() {
      await stopWorker();
      await mongoose.connection.db?.dropDatabase().catch(() => undefined);
      await temporal.connection.close();
      await api.close();
      await emulator.stop();
    },
  };
}

// Entry point: the Temporal worker, plus the reconciler that starts workflows of records left
// pending by a crash. `npm run worker` runs it against configured servers.
// First, before any other module loads (see the file).
import './worker-heap-growth';
import mongoose from 'mongoose';
import { createDispatcher } from '../calls/dispatch';
import { startReconciler } from '../calls/reconciler';
import { loadConfigWithLocalStack } from '../local/stack-settings';
import { connectMongo, ensureIndexes } from '../data/connection';
import { createLogger } from '../logger';
import { createWorkerMetrics } from '../observability/metrics';
import { startWorkerMetricsServer } from '../observability/metrics-endpoint';
import { checkReadiness } from '../observability/readiness';
import { connectTemporalClient } from '../temporal/connection';
import { activityLogContext } from '../worker/activity-log-context';
import { createCallWorker } from '../worker/create-worker';
import { workerReadinessChecks, type WorkerProcess } from '../worker/readiness';

async function main(): Promise<void> {
  const config = loadConfigWithLocalStack();
  const logger = createLogger(config.LOG_LEVEL, 'worker', { context: activityLogContext });
  const metrics = createWorkerMetrics();
  // Served from the start: /healthz at once, /readyz saying what the worker waits for while it connects
  // and loads its workflow code (bundling it takes seconds without WORKFLOW_BUNDLE_PATH).
  const started: WorkerProcess = { mongodb: false, client: null, worker: null };
  let sdkMetricsUrl: string | null = null;
  const metricsServer =
    config.WORKER_METRICS_PORT === 0
      ? null
      : await startWorkerMetricsServer({
          host: config.HOST,
          port: config.WORKER_METRICS_PORT,
          token: config.METRICS_BEARER_TOKEN,
          registry: metrics.registry,
          sdkMetricsUrl: () => sdkMetricsUrl,
          logger,
          readiness: () => checkReadiness(workerReadinessChecks(started), logger),
        });
  await connectMongo(config.MONGODB_URI, config.MONGODB_POOL_SIZE, {
    socketTimeoutMs: config.WORKER_MONGODB_SOCKET_TIMEOUT_SECONDS * 1000,
    logger,
  });
  started.mongodb = true;
  await ensureIndexes();
  const client = await connectTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
  });
  started.client = client;
  const created = await createCallWorker({
    config,
    logger,
    metrics,
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
  });
  const { worker, connection } = created;
  sdkMetricsUrl = created.sdkMetricsUrl;
  const dispatcher = createDispatcher({ client, config: config });

  const stopReconciler = startReconciler({ dispatcher, logger, afterSeconds: config.RECONCILE_AFTER_SECONDS });

  const stop = (signal: string) => {
    logger.info({ signal }, 'worker stopping: no new tasks, finishing activities in flight');
    void stopReconciler();
    worker.shutdown();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  logger.info(
    {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      namespace: config.TEMPORAL_NAMESPACE,
      metrics: metricsServer?.url ?? null,
    },
    'worker running',
  );
  // Its states from here: `RUNNING` as soon as run() begins (INITIALIZED before would read as a stop).
  started.worker = worker;
  await worker.run();
  // The SDK stops the worker on signals of its own too (SIGQUIT, SIGUSR2, or a SIGTERM that came while
  // the worker started, before the handler above): the reconciler's timer must not keep the process.
  await stopReconciler();
  await metricsServer?.close();
  await connection.close();
  await client.connection.close();
  await mongoose.disconnect();
  logger.info('worker stopped');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

// Builds the Temporal worker with its activities. Used by src/main/worker.ts and by the tests.
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type LogEntry,
  type LogLevel,
  type State as WorkerState,
} from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import pino from 'pino';
import { createActivities } from '../../activities';
import { HEARTBEAT_WORKER_OPTIONS } from '../../activities/heartbeats';
import { pacingDefaults } from '../calls/pacing-defaults';
import type { Config } from '../config';
import { createSecretBox } from '../crypto/secret-box';
import { createMongoStores } from '../data/stores';
import type { Logger } from '../logger';
import { freePort } from '../local/servers';
import type { WorkerMetrics } from '../observability/metrics';
import { ActivityFailureMetrics } from './activity-failure-metrics';
import { ActivityCallIdFromInput } from './activity-log-context';
import { workerTuning } from './tuning';
import { createTeamProviderResolver } from '../telephony/team-providers';
import { webhookAttemptTaskQueue } from '../contracts/ids';

export interface WorkerSetup {
  config: Config;
  logger: Logger;
  metrics: WorkerMetrics;
  /** A prebuilt bundle (tests build one per run); otherwise workflows are bundled at start. */
  workflowBundlePath?: string;
}

/** The SDK's Prometheus exporter of this process (its Runtime is installed once per process). */
let sdkMetricsUrl: Promise<string> | null = null;

/** What the SDK says, as a warning, of a Worker without workflows. */
const NO_WORKFLOWS_REGISTERED = 'No workflows registered, not polling for workflow tasks';

/**
 * The SDK's log entries as our lines, its fields under `sdk`. Its errors ("Activity failed" carries
 * the activity's) go through pino's serialiser: pino serialises only a top-level `err`, and an Error
 * nested as it is would print as `{}`. The serialiser names the class; an ApplicationFailure's own
 * type (why it failed, e.g. PROVIDER_REJECTED) is kept beside it.
 */
export function sdkLogFunction(logger: Logger): (entry: LogEntry) => void {
  return ({ level, message, meta }) => {
    // The webhook attempts' Worker runs activities only, by design: no warning at every start.
    const expected = message === NO_WORKFLOWS_REGISTERED;
    const warn = expected ? 'info' : 'warn';
    const method = level === 'ERROR' ? 'error' : level === 'WARN' ? warn : level === 'INFO' ? 'info' : 'debug';
    const fields = Object.entries(meta ?? {}).map(([name, value]) => {
      if (!(value instanceof Error)) return [name, value];
      const serialised = pino.stdSerializers.err(value);
      if (value instanceof ApplicationFailure && value.type) serialised.failureType = value.type;
      return [name, serialised];
    });
    logger[method]({ sdk: meta && Object.fromEntries(fields) }, message);
  };
}

/**
 * Installs the SDK's Runtime: its logs (worker state changes, task failures) go into our JSON logs,
 * and its metrics (task slots, poll and schedule-to-start latencies, cache) to a loopback exporter
 * that the worker's /metrics reads. Answers that exporter's URL.
 */
function installRuntime(logger: Logger): Promise<string> {
  sdkMetricsUrl ??= freePort().then((port) => {
    const level: LogLevel = logger.isLevelEnabled('info') ? 'INFO' : 'WARN';
    Runtime.install({
      logger: new DefaultLogger(level, sdkLogFunction(logger)),
      telemetryOptions: {
        metrics: {
          prometheus: { bindAddress: `127.0.0.1:${port}`, countersTotalSuffix: true, useSecondsForDurations: true },
        },
      },
    });
    return `http://127.0.0.1:${port}/metrics`;
  });
  return sdkMetricsUrl;
}

/** The bundler reports every module it packed at info (about 1.5 KB a start): that is debug detail. */
function bundlerLogger(logger: Logger) {
  return {
    trace: (message: string, meta?: object) => logger.trace({ bundler: meta }, message),
    debug: (message: string, meta?: object) => logger.debug({ bundler: meta }, message),
    info: (message: string, meta?: object) => logger.debug({ bundler: meta }, message),
    warn: (message: string, meta?: object) => logger.warn({ bundler: meta }, message),
    error: (message: string, meta?: object) => logger.error({ bundler: meta }, message),
    log: (level: LogLevel, message: string, meta?: object) => logger.debug({ bundler: meta, level }, message),
  };
}

/**
 * The process's workers, run and stopped together: the calls' (their workflows, and every activity but
 * webhook attempts) and the webhook attempts' on their own queue (webhookAttemptTaskQueue).
 */
export interface CallWorker {
  /** Runs both until shutdown; one that stops (or fails) stops the other. */
  run(): Promise<void>;
  shutdown(): void;
  /** Each worker's state by its task queue (`RUNNING` while it polls), for the worker's /readyz. */
  states(): Record<string, WorkerState>;
}

function runTogether(workers: Worker[]): CallWorker {
  const shutdown = () => {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  return {
    async run() {
      const runs = workers.map((worker) => worker.run());
      // One stopping leaves the process half a worker: the other stops too, draining its activities in
      // flight for its grace time, and then a failure is reported.
      await Promise.race(runs.map((run) => run.catch(() => undefined)));
      shutdown();
      const failed = (await Promise.allSettled(runs)).find((run) => run.status === 'rejected');
      if (failed) throw failed.reason;
    },
    shutdown,
    states: () => Object.fromEntries(workers.map((worker) => [worker.options.taskQueue, worker.getState()])),
  };
}

export async function createCallWorker(
  setup: WorkerSetup,
): Promise<{ worker: CallWorker; connection: NativeConnection; sdkMetricsUrl: string }> {
  const { config, logger, metrics } = setup;
  const sdkMetricsUrl = await installRuntime(logger);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const secretBox = createSecretBox(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_PREVIOUS);
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const activities = createActivities({
    config,
    logger,
    secretBox,
    ...createMongoStores(),
    pacingDefaults: pacingDefaults(config),
    temporal: { client, taskQueue: config.TEMPORAL_TASK_QUEUE },
    metrics,
    providers: createTeamProviderResolver({
      secretBox,
      baseUrls: {
        twilio: config.TWILIO_API_BASE_URL,
        vonage: config.VONAGE_API_BASE_URL,
        telnyx: config.TELNYX_API_BASE_URL,
      },
    }),
  });
  const workflowBundle = setup.workflowBundlePath
    ? { codePath: setup.workflowBundlePath }
    : await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: bundlerLogger(logger) });
  const interceptors = {
    activity: [
      () => ({ inbound: new ActivityFailureMetrics(metrics) }),
      () => ({ inbound: new ActivityCallIdFromInput() }),
    ],
  };
  // On shutdown, activities in flight get this long to finish before they are handed back.
  const shutdownGraceTime = '20 seconds';
  const calls = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle,
    activities,
    interceptors,
    ...workerTuning(config),
    ...HEARTBEAT_WORKER_OPTIONS,
    shutdownGraceTime,
  });
  // Activities only: webhook attempts, each up to 15 s against a receiver that may hang.
  const { attemptWebhookDelivery, recordAttemptNotMade } = activities;
  const webhookAttempts = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: webhookAttemptTaskQueue(config.TEMPORAL_TASK_QUEUE),
    activities: { attemptWebhookDelivery, recordAttemptNotMade },
    interceptors,
    maxConcurrentActivityTaskExecutions: config.WEBHOOK_MAX_CONCURRENT_ATTEMPTS,
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 2 },
    shutdownGraceTime,
  });
  return { worker: runTogether([calls, webhookAttempts]), connection, sdkMetricsUrl };
}

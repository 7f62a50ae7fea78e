// The worker's slots, pollers and threads from the configuration. Each unset one keeps the SDK's
// default: an option present but undefined would override it (bench/performance-log.md, "Worker
// tuning", for what they did on 2 cores). Pollers are set as poller behaviours: the SDK 1.24 ignores
// its older `maxConcurrent*TaskPolls` options.
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config';

type PollerBehavior = NonNullable<WorkerOptions['workflowTaskPollerBehavior']>;

type TuningConfig = Pick<
  Config,
  | 'WORKER_MAX_CONCURRENT_ACTIVITIES'
  | 'WORKER_MAX_CACHED_WORKFLOWS'
  | 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS'
  | 'WORKER_WORKFLOW_TASK_POLLERS'
  | 'WORKER_ACTIVITY_TASK_POLLERS'
  | 'WORKER_WORKFLOW_THREADS'
>;

type TuningOptions = Pick<
  WorkerOptions,
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxCachedWorkflows'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'workflowTaskPollerBehavior'
  | 'activityTaskPollerBehavior'
  | 'workflowThreadPoolSize'
>;

function pollerBehavior(setting: number | 'auto' | undefined): PollerBehavior | undefined {
  if (setting === undefined) return undefined;
  return setting === 'auto' ? { type: 'autoscaling' } : { type: 'simple-maximum', maximum: setting };
}

export function workerTuning(config: TuningConfig): TuningOptions {
  const optional = {
    maxConcurrentWorkflowTaskExecutions: config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    workflowTaskPollerBehavior: pollerBehavior(config.WORKER_WORKFLOW_TASK_POLLERS),
    activityTaskPollerBehavior: pollerBehavior(config.WORKER_ACTIVITY_TASK_POLLERS),
    workflowThreadPoolSize: config.WORKER_WORKFLOW_THREADS,
  };
  return {
    maxConcurrentActivityTaskExecutions: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}

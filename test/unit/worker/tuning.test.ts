import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config';
import { workerTuning } from '../../../src/worker/tuning';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/calls', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

describe('workerTuning', () => {
  it('leaves the SDK its own defaults for what is not configured', () => {
    const options = workerTuning(loadConfig(base));
    expect(options).toEqual({ maxConcurrentActivityTaskExecutions: 100, maxCachedWorkflows: 500 });
    // Present but undefined would override the SDK's default with nothing.
    expect(Object.keys(options)).not.toContain('workflowThreadPoolSize');
  });

  it('passes each configured slot, poller and thread count to the worker', () => {
    const options = workerTuning(
      loadConfig({
        ...base,
        WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '100',
        WORKER_WORKFLOW_TASK_POLLERS: '20',
        WORKER_ACTIVITY_TASK_POLLERS: 'auto',
        WORKER_WORKFLOW_THREADS: '2',
      }),
    );
    expect(options).toEqual({
      maxConcurrentActivityTaskExecutions: 100,
      maxCachedWorkflows: 500,
      maxConcurrentWorkflowTaskExecutions: 100,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 20 },
      activityTaskPollerBehavior: { type: 'autoscaling' },
      workflowThreadPoolSize: 2,
    });
  });

  it('refuses counts the SDK would refuse at start', () => {
    // The SDK needs at least two workflow-task pollers (one sticky, one not).
    expect(() => loadConfig({ ...base, WORKER_WORKFLOW_TASK_POLLERS: '1' })).toThrow(/WORKER_WORKFLOW_TASK_POLLERS/);
    expect(() => loadConfig({ ...base, WORKER_ACTIVITY_TASK_POLLERS: 'many' })).toThrow(
      /WORKER_ACTIVITY_TASK_POLLERS must be `auto` or a whole number from 1 to 100/,
    );
    expect(() => loadConfig({ ...base, WORKER_WORKFLOW_THREADS: '0' })).toThrow(/WORKER_WORKFLOW_THREADS/);
  });
});

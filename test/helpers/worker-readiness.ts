// The worker's /readyz as a test expects it once the worker runs: shared by the in-process worker's
// test (metrics.test.ts) and npm start's (npm-start.test.ts).
import { expect } from 'vitest';
import { webhookAttemptTaskQueue } from '../../src/contracts/ids';

/** `base` is the worker's metrics port's URL: 200, MongoDB and Temporal reached, both task queues polled. */
export async function expectWorkerReady(base: string, taskQueue: string): Promise<void> {
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({
    status: 'ready',
    checks: { mongodb: 'ok', temporal: 'ok', [taskQueue]: 'ok', [webhookAttemptTaskQueue(taskQueue)]: 'ok' },
  });
}

// The baselines' workflows: what raw Temporal does with no service around it. Bundled on their own
// (bundleWorkflowCode) and run by the bench-only worker (bench/baseline/worker.ts) on its own task queue.
import { proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { BaselineActivities } from './activities';

const remote = proxyActivities<BaselineActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<BaselineActivities>({ startToCloseTimeout: '1 minute' });

/** Started and done: the create and batch baselines. */
export async function noopWorkflow(): Promise<void> {}

/** Sleeps until `dueAtMs` (epoch ms), then runs one activity; answers when that activity ran. */
export async function sleepThenActivityWorkflow(dueAtMs: number): Promise<number> {
  const waitMs = dueAtMs - Date.now();
  if (waitMs > 0) await sleep(waitMs);
  return remote.now();
}

/** As many activities as a call runs, each doing nothing: the end-to-end baseline. */
export async function activitiesWorkflow(input: { activities: number; localActivities: number }): Promise<void> {
  for (let i = 0; i < input.localActivities; i += 1) await local.noop();
  for (let i = 0; i < input.activities; i += 1) await remote.noop();
}

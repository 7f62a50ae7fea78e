// The bench-only worker: the baseline workflows and activities on their own task queue, in a process
// of its own as the service's worker is, with the same activity concurrency as the service's default.
// BENCH_BASELINE_TASK_QUEUE, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE; BENCH_BASELINE_BUNDLE: the bundle
// of ./workflows built ahead of time (otherwise it is bundled here at start).
import path from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { baselineActivities } from './activities';

export const BASELINE_WORKFLOWS = path.join(__dirname, 'workflows.ts');

const quiet = () => undefined;
export const quietBundlerLogger = { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet, log: quiet };

/** The baseline workflows bundled, as the service's worker gets its own (WORKFLOW_BUNDLE_PATH). */
export async function bundleBaselineWorkflows(): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: BASELINE_WORKFLOWS, logger: quietBundlerLogger });
  return code;
}

async function main(): Promise<void> {
  const taskQueue = process.env.BENCH_BASELINE_TASK_QUEUE;
  if (!taskQueue) throw new Error('BENCH_BASELINE_TASK_QUEUE is required');
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const bundlePath = process.env.BENCH_BASELINE_BUNDLE;
  const worker = await Worker.create({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue,
    workflowBundle: bundlePath ? { codePath: bundlePath } : { code: await bundleBaselineWorkflows() },
    activities: baselineActivities,
    maxConcurrentActivityTaskExecutions: 100,
  });
  process.once('SIGTERM', () => worker.shutdown());
  process.once('SIGINT', () => worker.shutdown());
  process.stdout.write(`baseline worker polling ${taskQueue}\n`);
  await worker.run();
  await connection.close();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `baseline worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}

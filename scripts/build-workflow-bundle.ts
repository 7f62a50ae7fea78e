// The workflow bundle built ahead of time (`npm run build`, after tsc): the code the worker would
// otherwise pack with webpack at every start. The worker loads it when WORKFLOW_BUNDLE_PATH names it
// (the Docker image sets that), with the same options src/worker/create-worker.ts bundles with.
//
//   tsx scripts/build-workflow-bundle.ts [output file, default dist/workflow-bundle.js]
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const ROOT = path.resolve(__dirname, '..');

export async function buildWorkflowBundle(outFile: string): Promise<{ file: string; bytes: number; ms: number }> {
  const started = performance.now();
  const quiet = () => undefined;
  const say = (message: string) => process.stderr.write(`[bundler] ${message}\n`);
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
    logger: { trace: quiet, debug: quiet, info: quiet, warn: say, error: say, log: quiet },
  });
  await mkdir(path.dirname(outFile), { recursive: true });
  await writeFile(outFile, code);
  return { file: outFile, bytes: Buffer.byteLength(code), ms: performance.now() - started };
}

if (require.main === module) {
  const out = path.resolve(process.argv[2] ?? path.join(ROOT, 'dist', 'workflow-bundle.js'));
  buildWorkflowBundle(out).then(
    ({ file, bytes, ms }) =>
      process.stdout.write(
        `Workflow bundle: ${path.relative(process.cwd(), file) || file} (${(bytes / 2 ** 20).toFixed(1)} MiB, ${(ms / 1000).toFixed(1)} s)\n`,
      ),
    (err: unknown) => {
      process.stderr.write(
        `Workflow bundle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    },
  );
}

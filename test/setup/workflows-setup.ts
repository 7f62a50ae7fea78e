// Workflow tests run on Temporal's time-skipping test server (Java, fetched once into the cache) with
// the workflow code bundled once per run. A missing Java or Maven fails the run with what to install.
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { ensureTimeSkippingServer } from '../../src/local/time-skipping-server';

declare module 'vitest' {
  export interface ProvidedContext {
    timeSkippingServerPath: string;
    workflowBundlePath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'oco-workflow-tests-'));
  // Vitest exits at once on Ctrl-C, without the teardown below: the folder goes all the same.
  const removeNow = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeNow);
  const serverPath = await ensureTimeSkippingServer();
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(process.cwd(), 'workflows/index.ts'),
    logger: {
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: (m) => process.stderr.write(`[bundler] ${m}\n`),
      error: (m) => process.stderr.write(`[bundler] ${m}\n`),
      log: () => undefined,
    },
  });
  const workflowBundlePath = path.join(dir, 'workflow-bundle.js');
  await writeFile(workflowBundlePath, bundle.code);
  project.provide('timeSkippingServerPath', serverPath);
  project.provide('workflowBundlePath', workflowBundlePath);
  return async () => {
    process.off('exit', removeNow);
    await rm(dir, { recursive: true, force: true });
  };
}

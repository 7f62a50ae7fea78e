// Replays saved histories of real calls against today's workflow code: a change that would break
// calls already running in production (non-determinism) fails here.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { expect, inject, it } from 'vitest';

const dir = path.resolve('test/fixtures/histories');

it('replays every saved call history without non-determinism', async () => {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json'));
  expect(files.length).toBeGreaterThan(0);
  for (const file of files) {
    const history = JSON.parse(await readFile(path.join(dir, file), 'utf8'));
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, path.basename(file, '.json'));
  }
});

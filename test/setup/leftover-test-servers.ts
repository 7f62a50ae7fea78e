// A test run's servers outlive it when Vitest ends without the global setup's teardown: on Ctrl-C it
// exits at once, and a killed run never tears down. They run in process groups of their own
// (src/local/servers.ts), so nothing else stops them, and each interrupted run left PostgreSQL and a
// Temporal dev server running and its folder in /tmp. So the global setup records its servers in its
// folder (src/local/leftover-processes.ts). When Vitest exits without tearing down, a detached run of
// stop-left-test-servers.ts waits for it to be gone, then stops them in order and removes the folder;
// and each run's setup does the same for any earlier run that left its folder behind.
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StackRunningError, processRecordPath, stopLeftoverProcesses } from '../../src/local/leftover-processes';

/** The folders of the suite's test runs, in the temporary directory. */
export const TEST_RUN_PREFIX = 'oco-test-';

/**
 * Once the run that owns `dir` is gone (waiting up to `waitMs` for it), stops the servers it recorded
 * there and removes the folder. False when that run still runs: its folder is left as it is.
 */
export async function stopLeftTestServers(dir: string, waitMs = 0): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await stopLeftoverProcesses(processRecordPath(dir), () => undefined);
      break;
    } catch (err) {
      if (!(err instanceof StackRunningError) || Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await rm(dir, { recursive: true, force: true });
  return true;
}

/** What earlier runs left in `tmpDir`: their servers stopped and folders removed. Their count. */
export async function sweepEarlierTestRuns(tmpDir = os.tmpdir()): Promise<number> {
  let swept = 0;
  for (const entry of await readdir(tmpDir).catch((): string[] => [])) {
    if (!entry.startsWith(TEST_RUN_PREFIX)) continue;
    const dir = path.join(tmpDir, entry);
    // Only a folder with a record: one without is still being set up, or is not a run's.
    const records = await readdir(dir).catch((): string[] => []);
    if (!records.includes(path.basename(processRecordPath(dir)))) continue;
    if (await stopLeftTestServers(dir)) swept += 1;
  }
  return swept;
}

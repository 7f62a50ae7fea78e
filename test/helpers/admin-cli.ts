// The operator command line run as an operator runs it: a separate process, its own environment.
// The suite's compiled build (test/setup/global-setup.ts), as the deployment image runs it: the same
// code as `npm run admin`, which runs the sources through tsx, for less CPU per start.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import type { Config } from '../../src/config';

export interface AdminResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runAdmin(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<AdminResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(inject('compiledDistPath'), 'src', 'main', 'admin.js'), ...args],
      { env },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The same command left running, for a test that interrupts it. */
export function spawnAdmin(env: NodeJS.ProcessEnv, args: readonly string[]): ChildProcess {
  return spawn(process.execPath, [path.join(inject('compiledDistPath'), 'src', 'main', 'admin.js'), ...args], {
    env,
    stdio: 'ignore',
  });
}

/** The environment that points the CLI at a test stack's database and Temporal. */
export function stackAdminEnv(config: Config): NodeJS.ProcessEnv {
  return {
    ...process.env,
    MONGODB_URI: config.MONGODB_URI,
    ENCRYPTION_KEY: config.ENCRYPTION_KEY,
    TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
  };
}

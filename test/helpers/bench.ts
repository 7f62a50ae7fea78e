// What a bench run started by a test is given: the suite's servers and workflow bundle, so that it
// starts none of its own (see bench/run.ts: MONGODB_URI, TEMPORAL_ADDRESS, BENCH_WORKFLOW_BUNDLE).
import path from 'node:path';
import { inject } from 'vitest';

export const ROOT = path.resolve(__dirname, '..', '..');

export function benchEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    MONGODB_URI: inject('mongoUri'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    BENCH_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    ...extra,
  };
}

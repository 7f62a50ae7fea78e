// One service stack per test file, on the real servers the global setup started.
import { inject } from 'vitest';
import { startServiceStack, type TestStack } from './service-stack';

export type { SeededTeam, TestStack } from './service-stack';

export async function startTestStack(
  options: { env?: Record<string, string>; speedFactor?: number } = {},
): Promise<TestStack> {
  return startServiceStack(
    {
      mongoUri: inject('mongoUri'),
      temporalAddress: inject('temporalAddress'),
      workflowBundlePath: inject('workflowBundlePath'),
    },
    options,
  );
}

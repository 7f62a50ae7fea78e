// One service stack per test file, on the real servers the global setup started.
import { inject } from 'vitest';
import { startServiceStack, type SeededTeam, type TestStack } from './service-stack';

export type { SeededTeam, TestStack } from './service-stack';

export async function startTestStack(options: Parameters<typeof startServiceStack>[1] = {}): Promise<TestStack> {
  return startServiceStack(
    {
      mongoUri: inject('mongoUri'),
      temporalAddress: inject('temporalAddress'),
      workflowBundlePath: inject('workflowBundlePath'),
    },
    options,
  );
}

/** A create body for a seeded team's template (its one required variable given), to `to`. */
export function seededCallBody(
  team: Pick<SeededTeam, 'teamId' | 'templateId'>,
  to: string,
  extra: Record<string, unknown> = {},
) {
  return {
    teamId: team.teamId,
    callTemplateId: team.templateId,
    toPhoneNumber: to,
    promptVariableValues: [{ key: 'firstName', value: 'Lin' }],
    ...extra,
  };
}

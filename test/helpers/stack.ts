// One service stack per test file, on the real servers the global setup started.
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';
import type { Config } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createApiApp, listen } from '../../src/main/api';
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

/**
 * The stack's API again, in this process on a port of its own, with some of its configuration changed
 * (e.g. private webhook addresses refused): its URL, and `close`.
 */
export async function startApiWith(
  stack: Pick<TestStack, 'config' | 'temporal'>,
  overrides: Partial<Config>,
): Promise<{ url: string; close: () => void }> {
  const server = await listen(
    createApiApp({
      config: { ...stack.config, ...overrides },
      logger: createLogger('silent', 'test'),
      temporal: stack.temporal,
    }),
    0,
    '127.0.0.1',
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

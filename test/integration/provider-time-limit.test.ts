// A call whose hang-up fails at its maximum duration is ended by the provider at the time limit the
// dial gave it: the maximum duration, 30 s, and the status poll's interval (30 s). The emulator runs at
// half speed, so that the workflow has given up its hang-up (about 15 s of retries) well before the
// limit (31 s). Not in the timing group: nothing here races a timer closely.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTemplate } from '../../src/admin/commands';
import { callStateQuery } from '../../workflows/messages';
import { apiClient, callReaching, eventually } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
beforeAll(async () => {
  stack = await startTestStack({ speedFactor: 0.5 });
  api = apiClient(stack.baseUrl, stack.team.key);
});
afterAll(async () => {
  await stack?.stop();
});

it('a call whose hang-up fails at the maximum duration is ended by the provider at its time limit', async () => {
  const { callTemplateId } = await createTemplate({
    team: stack.team.teamId,
    name: 'Short, its hang-up refused',
    prompt: 'Hi {{firstName}}, a very quick question.',
    maxDurationSeconds: '2',
  });
  // Nobody on the line hangs up a number ending 1440.
  const to = '+14155551440';
  const created = await api.post('/v1/phoneCalls', seededCallBody({ ...stack.team, templateId: callTemplateId }, to));
  expect(created.status).toBe(201);
  const id = created.body.data._id as string;
  await callReaching(api, id, 'inProgress', 30_000, 'the call to be answered');
  const emulated = () => stack.emulator.calls().find((c) => c.to === to)!;
  // From now on the provider's API refuses every request (503): each try of the hang-up, the polls.
  stack.emulator.setFaults({ refuseShare: 1 });
  try {
    const workflow = stack.temporal.workflow.getHandle(`phoneCall-${id}`);
    await eventually(
      async () => ((await workflow.query(callStateQuery)).endedAt !== null ? true : undefined),
      60_000,
      'the workflow to give up its hang-up',
    );
    // The call stays connected at the provider: until the limit the dial gave it.
    expect(emulated().state).toBe('answered');
    expect(emulated().timeLimitSeconds).toBe(2 + 30 + 30);
    const ended = await eventually(
      async () => (emulated().state === 'ended' ? emulated() : undefined),
      60_000,
      'the provider to end the call at its time limit',
    );
    expect(ended.end).toEqual({ outcome: 'completed', hungUpBy: 'time-limit' });
  } finally {
    stack.emulator.setFaults(null);
  }
  // The workflow ended the call at its maximum duration, as it does when its hang-up works.
  const call = await callReaching(api, id, ['failed', 'completed'], 60_000, 'the call to end');
  expect(call).toMatchObject({ status: 'failed', statusExtraInfo: { statusCode: 'max-duration' } });
});

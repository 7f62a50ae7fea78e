// Calls that last: the emulator runs at half speed so that a conversation outlasts a short maximum
// duration, an operator can cancel a call while it is live, an unanswered call rings only as long
// as the ring timeout (RING_TIMEOUT_SECONDS 4, which the dial gives the provider; the workflow's own
// hang-up 10 s later, for a provider that no longer answers, is in provider-unreachable.test.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTemplate } from '../../src/admin/commands';
import { apiClient, callReaching, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
beforeAll(async () => {
  stack = await startTestStack({ speedFactor: 0.5, env: { RING_TIMEOUT_SECONDS: '4' } });
  api = apiClient(stack.baseUrl, stack.team.key);
});
afterAll(async () => {
  await stack?.stop();
});

async function place(to: string, callTemplateId = stack.team.templateId) {
  const res = await api.post('/v1/phoneCalls', {
    teamId: stack.team.teamId,
    callTemplateId,
    toPhoneNumber: to,
    promptVariableValues: [{ key: 'firstName', value: 'Sam' }],
  });
  expect(res.status).toBe(201);
  return res.body.data._id as string;
}

const read = async (id: string) => (await api.get(`/v1/phoneCalls/${id}`)).body.data;

it("hangs up an answered call that outlives the template's maximum duration", async () => {
  const { callTemplateId } = await createTemplate({
    team: stack.team.teamId,
    name: 'Short',
    prompt: 'Hi {{firstName}}, a very quick question.',
    maxDurationSeconds: '2',
  });
  const to = '+14155559201';
  const id = await place(to, callTemplateId);
  const call = await callReaching(api, id, ['failed', 'completed'], 60_000, 'the call to end');
  expect(call).toMatchObject({ status: 'failed', statusExtraInfo: { statusCode: 'max-duration' } });
  const lasted = (Date.parse(call.callEndedAt) - Date.parse(call.callStartedAt)) / 1000;
  expect(lasted).toBeGreaterThanOrEqual(2);
  expect(lasted).toBeLessThan(6);
  await eventually(
    async () => {
      const emulated = stack.emulator.calls().find((c) => c.to === to);
      return emulated?.state === 'ended' ? emulated : undefined;
    },
    20_000,
    'the provider to end the call',
  );
  expect(stack.emulator.calls().find((c) => c.to === to)?.end?.hungUpBy).toBe('caller');
});

it('an operator cancelling a live call hangs up and ends it as cancelled', async () => {
  const to = '+14155559202';
  const id = await place(to);
  await callReaching(api, id, 'inProgress', 30_000, 'the call to be answered');
  await stack.temporal.workflow.getHandle(`phoneCall-${id}`).cancel();
  const call = await callReaching(api, id, 'cancelled');
  expect(call.statusExtraInfo.statusCode).toBe('cancelled-by-operator');
  expect(call.callEndedAt).toBeTypeOf('string');
  const emulated = await eventually(
    async () => {
      const found = stack.emulator.calls().find((c) => c.to === to);
      return found?.state === 'ended' ? found : undefined;
    },
    20_000,
    'the provider to end the call',
  );
  expect(emulated.end?.hungUpBy).toBe('caller');
  // A terminal status never changes: the provider's later "completed" callback is ignored.
  await new Promise((r) => setTimeout(r, 2_000));
  expect((await read(id)).status).toBe('cancelled');
});

it('a call nobody answers rings for the ring timeout: the provider is told it, and ends the call', async () => {
  const to = '+14155551408';
  const id = await place(to);
  const call = await callReaching(api, id, 'noAnswer', 30_000, 'the call to end unanswered');
  expect(call.statusExtraInfo.statusCode).toBe('no-answer');
  expect(Date.parse(call.callEndedAt) - Date.parse(call.callTriggeredAt)).toBeLessThan(10_000);
  const emulated = await eventually(
    async () => {
      const found = stack.emulator.calls().find((c) => c.to === to);
      return found?.state === 'ended' ? found : undefined;
    },
    20_000,
    'the provider to end the call',
  );
  expect(emulated.ringTimeoutSeconds).toBe(4);
  // The provider gave up ringing (no hang-up of ours was needed).
  expect(emulated.end).toEqual({ outcome: 'no-answer', hungUpBy: 'network' });
});

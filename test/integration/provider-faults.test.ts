// Nobody is rung twice when a provider loses its answer: every dial is placed by the emulator (the
// phone rings) and then answered 500 or cut off without an answer. The dial activity's retry asks the
// provider whether the call was placed before dialling again, on all three providers; every call
// ends completed, and the emulator saw exactly one dial per number.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiClient, eventually } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  stack?.emulator.setDialFaults(null);
  await stack?.stop();
});

it('rings each callee once when every dial’s answer is lost after the call was placed', async () => {
  stack.emulator.setDialFaults({ every: 1, kinds: ['answer-500', 'drop'] });
  const api = apiClient(stack.baseUrl, stack.team.key);
  const placed: { id: string; to: string }[] = [];
  for (const [p, provider] of ['twilio', 'vonage', 'telnyx'].entries()) {
    for (const n of [0, 1]) {
      const to = `+1415555${4100 + p * 10 + n}`;
      const res = await api.post('/v1/phoneCalls', seededCallBody(stack.team, to, { telephonyProvider: provider }));
      expect(res.status).toBe(201);
      placed.push({ id: res.body.data._id as string, to });
    }
  }
  const ended = await eventually(
    async () => {
      const calls = await Promise.all(placed.map(async ({ id }) => (await api.get(`/v1/phoneCalls/${id}`)).body.data));
      return calls.every((c) => ['completed', 'failed', 'busy', 'noAnswer'].includes(c.status)) ? calls : undefined;
    },
    90_000,
    'every call to end',
  );
  expect(ended.map((c) => c.status)).toEqual(Array(placed.length).fill('completed'));
  // Each dial's answer was lost, once per call, both ways, on every provider.
  const lost = stack.emulator.dialFaults();
  expect(lost).toHaveLength(placed.length);
  expect(new Set(lost.map((f) => f.kind))).toEqual(new Set(['answer-500', 'drop']));
  expect(new Set(lost.map((f) => f.provider))).toEqual(new Set(['twilio', 'vonage', 'telnyx']));
  // And still one ring per callee: the retry found the placed call instead of dialling again.
  for (const { to } of placed) expect(stack.emulator.callsTo(to), to).toBe(1);
  expect(new Set(ended.map((c) => c.attempts[0]?.providerCallId))).toEqual(new Set(lost.map((f) => f.providerCallId)));
});

// Faults at the provider's side. Nobody is rung twice when a provider loses its answer: every dial is
// placed by the emulator (the phone rings) and then answered 500 or cut off without an answer. The
// dial activity's retry asks the provider whether the call was placed before dialling again, on all
// three providers; every call ends completed, and the emulator saw exactly one dial per number.
// And a call whose callbacks never arrive still ends as the provider saw it end.
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { apiClient, eventually } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  // A call silent for a second is looked up at its provider.
  stack = await startTestStack({ env: { CALL_STATUS_POLL_SECONDS: '1' } });
});
afterAll(async () => {
  stack?.emulator.setDialFaults(null);
  stack?.emulator.setFaults(null);
  await stack?.stop();
});

it('rings each callee once when every dial’s answer is lost after the call was placed', async () => {
  stack.emulator.setDialFaults({ every: 1, kinds: ['answer-500', 'drop'] });
  onTestFinished(() => stack.emulator.setDialFaults(null));
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

it('ends every call as the provider saw it end when none of its callbacks arrives', async () => {
  stack.emulator.setFaults({ callbacks: { lostShare: 1 } });
  try {
    const api = apiClient(stack.baseUrl, stack.team.key);
    // Completed (a conversation), busy, not answered: on each provider.
    const outcomes = [
      ['4201', 'completed'],
      ['1486', 'busy'],
      ['1408', 'noAnswer'],
    ] as const;
    const placed: { id: string; expected: string }[] = [];
    for (const [p, provider] of ['twilio', 'vonage', 'telnyx'].entries()) {
      for (const [lastFour, expected] of outcomes) {
        const to = `+1415${String(556 + p)}${lastFour}`;
        const res = await api.post('/v1/phoneCalls', seededCallBody(stack.team, to, { telephonyProvider: provider }));
        expect(res.status).toBe(201);
        placed.push({ id: res.body.data._id as string, expected });
      }
    }
    const ended = await eventually(
      async () => {
        const calls = await Promise.all(
          placed.map(async ({ id }) => (await api.get(`/v1/phoneCalls/${id}`)).body.data),
        );
        return calls.every((c) => ['completed', 'failed', 'busy', 'noAnswer'].includes(c.status)) ? calls : undefined;
      },
      90_000,
      'every call to end',
    );
    expect(ended.map((c) => c.status)).toEqual(placed.map((p) => p.expected));
    // The emulator sent nothing: what the workflows learnt, they learnt by asking.
    expect(stack.emulator.faults().injected.lost).toBeGreaterThanOrEqual(placed.length);
    const completed = ended.filter((c) => c.status === 'completed');
    // Answered and ended as the provider dated them (whole seconds for some: the same second here).
    for (const call of completed) {
      expect(Date.parse(call.callEndedAt)).toBeGreaterThanOrEqual(Date.parse(call.callStartedAt));
    }
  } finally {
    stack.emulator.setFaults(null);
  }
});

// A ringing call whose provider can no longer be reached still ends: the workflow hangs up itself
// 10 s after the ring timeout (RING_TIMEOUT_SECONDS 4; the emulator's speed factor 0.5, as in
// telephony-timing.test.ts, rather than the suite's 0.02, so that the call is still ringing when
// the emulator stops). Not in the timing group: it waits about 30 s on the workflow's own timers
// and the hang-up's retries, and checks only a lower bound.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiClient, callReaching } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
beforeAll(async () => {
  stack = await startTestStack({ speedFactor: 0.5, env: { RING_TIMEOUT_SECONDS: '4' } });
  api = apiClient(stack.baseUrl, stack.team.key);
});
afterAll(async () => {
  await stack?.stop();
});

it('ends a ringing call even when the provider can no longer be reached', async () => {
  // Nobody answers a number ending 1408.
  const created = await api.post('/v1/phoneCalls', seededCallBody(stack.team, '+14155561408'));
  expect(created.status).toBe(201);
  const id = created.body.data._id as string;
  await callReaching(api, id, 'ringing', 20_000, 'the call to ring');
  await stack.emulator.stop();
  const call = await callReaching(api, id, 'noAnswer', 60_000, 'the call to end although the provider is gone');
  // The workflow's own hang-up, 10 s after the ring timeout: nothing told it the call had ended.
  expect(call.statusExtraInfo.statusCode).toBe('no-answer');
  expect(Date.parse(call.callEndedAt) - Date.parse(call.callTriggeredAt)).toBeGreaterThanOrEqual(14_000);
}, 90_000);

// MAX_WEBHOOKS_PER_TEAM: each call runs one delivery stream per endpoint of its team, so a team's
// webhooks are capped; one more is a 400 in the error shape, and other teams are not affected.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Webhook } from '../../src/data/models/webhook';
import { apiClient, errorMessages } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

const CAP = 3;

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ env: { MAX_WEBHOOKS_PER_TEAM: String(CAP) } });
});
afterAll(async () => {
  await stack?.stop();
});

const body = (teamId: string, n: number) => ({
  teamId,
  // Private addresses are allowed in the test stack; no call is made, so nothing is sent there.
  url: `http://127.0.0.1:9/hook-${n}`,
  subscribedEvents: ['*'],
  method: 'POST',
});

it('refuses a webhook past the cap with a 400 naming it, and leaves the others usable', async () => {
  expect(stack.config.MAX_WEBHOOKS_PER_TEAM).toBe(CAP);
  const api = apiClient(stack.baseUrl, stack.team.key);
  const ids: string[] = [];
  for (let n = 0; n < CAP; n += 1) {
    const res = await api.post('/v1/webhooks', body(stack.team.teamId, n));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(res.body.data._id as string);
  }

  const refused = await api.post('/v1/webhooks', body(stack.team.teamId, CAP));
  expect(errorMessages(refused, 400)).toEqual([
    `a team has at most ${CAP} webhooks; change one of them (PATCH /v1/webhooks/{_id}) instead of adding another`,
  ]);
  // The refusal stored nothing: the team has its CAP webhooks, none of them the refused one.
  const stored = await Webhook.find({ teamId: stack.team.teamId }).lean();
  expect(stored.map((w) => w.url).sort()).toEqual(ids.map((_, n) => `http://127.0.0.1:9/hook-${n}`).sort());

  // The team's webhooks can still be changed, and another team has its own allowance.
  const patched = await api.patch(`/v1/webhooks/${ids[0]}`, { url: 'http://127.0.0.1:9/moved' });
  expect(patched.status).toBe(200);
  const other = await stack.seedTeam('Another team');
  const res = await apiClient(stack.baseUrl, other.key).post('/v1/webhooks', body(other.teamId, 0));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});

// The pacer's cap through the API under a burst of 500 calls across three teams, and a fourth team's
// call not held up behind them. A file of its own: the longest of the timing group
// (vitest.config.mts), it runs beside the others rather than before them in one lane.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTeamLimits } from '../../src/admin/commands';
import { callBody, maxOverlap, teamCallsEnded, type CampaignCall as Call } from '../helpers/campaign-calls';
import { apiClient, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('pacing through the API', () => {
  it('holds each team to its cap under a burst of 500 calls across 3 teams, and no team waits on another', async () => {
    const plans = [
      { calls: 200, maxConcurrentCalls: 20 },
      { calls: 150, maxConcurrentCalls: 10 },
      { calls: 150, maxConcurrentCalls: 15 },
    ];
    const teams = await Promise.all(plans.map((_, i) => stack.seedTeam(`Burst ${i}`)));
    for (const [i, team] of teams.entries())
      await setTeamLimits({
        team: team.teamId,
        maxConcurrentCalls: String(plans[i]!.maxConcurrentCalls),
        dialsPerSecond: 'twilio=25',
      });
    // Busy lines: short calls, so 500 of them pass in seconds; each is live from dial to busy signal.
    const number = '+14155551486';
    const batches = await Promise.all(
      teams.map(async (team, i) => {
        const client = apiClient(stack.baseUrl, team.key);
        const res = await client.post('/v1/phoneCalls/batch', {
          phoneCalls: Array.from({ length: plans[i]!.calls }, () => callBody(team, number)),
        });
        expect(res.status).toBe(201);
        expect(res.body.batchId).toMatch(/^[0-9a-f]{24}$/);
        return { client, ids: (res.body.data as Call[]).map((c) => c._id) };
      }),
    );
    // A fourth team's single call is not held up by the 500 queued before it.
    const lone = await stack.seedTeam('Lone caller');
    const loneClient = apiClient(stack.baseUrl, lone.key);
    const loneId = (await loneClient.post('/v1/phoneCalls', callBody(lone, number))).body.data._id as string;
    const loneCall = await eventually(
      async () => {
        const call = (await loneClient.get(`/v1/phoneCalls/${loneId}`)).body.data as Call;
        return call.status !== 'queued' ? call : undefined;
      },
      // Bounded by the worker and Temporal working through 500 starts (slower when another file
      // loads the servers too), not by the pacer: the check that matters comes below.
      150_000,
      'the lone call to be dialled',
    );

    for (const [i, { client, ids }] of batches.entries()) {
      const done = await teamCallsEnded(client, ids, 180_000, `team ${i}'s calls to end`);
      expect(done.every((c) => c.status === 'busy')).toBe(true);
      const overlap = maxOverlap(done);
      expect(overlap).toBeLessThanOrEqual(plans[i]!.maxConcurrentCalls);
      expect(overlap).toBeGreaterThanOrEqual(2); // the cap was reached, not merely never approached
      if (i === 1) {
        // The slowest queue (cap 10) was still dialling when the lone call, created after all of it, went out.
        const lastDial = Math.max(...done.map((c) => Date.parse(c.callTriggeredAt!)));
        expect(Date.parse(loneCall.callTriggeredAt!)).toBeLessThan(lastDial);
      }
    }
  }, 300_000);
});

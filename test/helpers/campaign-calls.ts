// What the campaign tests read of a team's calls through the API: their dial and end times, the most
// live at once, and the wait for every one of them to end.
import { expect } from 'vitest';
import { apiClient, eventually } from './http';
import { seededCallBody, type SeededTeam } from './stack';

export type CampaignCall = {
  _id: string;
  status: string;
  callTriggeredAt?: string;
  callEndedAt?: string;
  statusExtraInfo?: { statusCode: string };
};
export const TERMINAL = ['completed', 'busy', 'noAnswer', 'failed', 'cancelled'];

/** A create body for the team's template, through Twilio unless `extra` says otherwise. */
export const callBody = (team: SeededTeam, to: string, extra: Record<string, unknown> = {}) =>
  seededCallBody(team, to, { telephonyProvider: 'twilio', ...extra });

/** The most calls whose [dial, end] intervals overlap at one instant. */
export function maxOverlap(calls: CampaignCall[]): number {
  const edges = calls.flatMap((c) => [
    { at: Date.parse(c.callTriggeredAt!), step: 1 },
    { at: Date.parse(c.callEndedAt!), step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step); // an end and a start at one instant: the end first
  let live = 0;
  let max = 0;
  for (const edge of edges) max = Math.max(max, (live += edge.step));
  return max;
}

/** The team's calls among `ids`, read in one list page (these teams have at most 1,000 calls). */
export async function teamCalls(client: ReturnType<typeof apiClient>, ids: string[]): Promise<CampaignCall[]> {
  const wanted = new Set(ids);
  const res = await client.get('/v1/phoneCalls?limit=1000');
  expect(res.status).toBe(200);
  const calls = (res.body.data as CampaignCall[]).filter((c) => wanted.has(c._id));
  return calls.length === ids.length ? calls : [];
}

/**
 * The team's calls among `ids` once every one of them has ended. Asked once a second: each ask lists
 * up to 1,000 calls, work that would otherwise slow the calls it waits for.
 */
export function teamCallsEnded(client: ReturnType<typeof apiClient>, ids: string[], timeoutMs: number, what: string) {
  return eventually(
    async () => {
      const calls = await teamCalls(client, ids);
      return calls.length && calls.every((c) => TERMINAL.includes(c.status)) ? calls : undefined;
    },
    timeoutMs,
    what,
    1_000,
  );
}

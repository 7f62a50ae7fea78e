// Spaces this worker's provider requests for each team's provider account at the team's dial rate,
// by the pacer's own rule (src/contracts/dial-spacing.ts). The pacer spaces its grants, but a dial
// granted on time can reach the provider late (its call's tasks queue behind a batch's others) and
// arrive together with the next one: the provider would then see two dials closer than the rate.
// Spacing the requests themselves, right before they go, keeps what the provider sees at the rate.
// Per process: with several workers, each spaces its own dials, and the pacer spaces the grants.
import { setTimeout as delay } from 'node:timers/promises';
import { takeDial } from '../contracts/dial-spacing';
import type { PacingLimits } from '../contracts/pacing';
import type { ProviderName } from '../contracts/providers';

/** As often as the pacer reads them: `team set-limits` takes effect within this long. */
const LIMITS_TTL_MS = 30_000;
/** Accounts remembered before the ones whose next dial is past are forgotten. */
const REMEMBERED_ACCOUNTS_MAX = 10_000;

export interface DialTurn {
  /** The dial may go now: its turn is taken. */
  taken: boolean;
  /** Otherwise, how long until it would be (more than `maxWaitMs`). */
  waitMs: number;
}

export function createDialSpacer(
  readLimits: (teamId: string) => Promise<PacingLimits>,
  options: { maxWaitMs: number },
) {
  const limits = new Map<string, { readAt: number; limits: Promise<PacingLimits> }>();
  const nextDialAt = new Map<string, number>();

  function limitsOf(teamId: string): Promise<PacingLimits> {
    const cached = limits.get(teamId);
    if (cached && Date.now() - cached.readAt < LIMITS_TTL_MS) return cached.limits;
    const read = readLimits(teamId);
    limits.set(teamId, { readAt: Date.now(), limits: read });
    // A failed read is not kept: the next dial reads again.
    read.catch(() => limits.get(teamId)?.limits === read && limits.delete(teamId));
    return read;
  }

  function forgetPast(): void {
    const at = Date.now();
    for (const [key, next] of nextDialAt) if (next < at) nextDialAt.delete(key);
    for (const [teamId, cached] of limits) if (at - cached.readAt >= LIMITS_TTL_MS) limits.delete(teamId);
  }

  return {
    /**
     * Waits for the dial's turn on the team's provider account and takes it; when the turn is more
     * than `maxWaitMs` away, takes nothing and says how far (the dial activity's time is bounded).
     */
    async takeTurn(teamId: string, provider: ProviderName): Promise<DialTurn> {
      const rate = (await limitsOf(teamId)).dialsPerSecond[provider];
      const key = `${teamId}:${provider}`;
      const at = Date.now();
      const turn = takeDial(nextDialAt.get(key) ?? 0, at, rate);
      if (turn.waitMs > options.maxWaitMs) return { taken: false, waitMs: turn.waitMs };
      // The turn is taken now, for when it comes: dials waiting together go in the order they asked.
      const taken = turn.waitMs === 0 ? turn : takeDial(turn.nextDialAt, at + turn.waitMs, rate);
      if (nextDialAt.size >= REMEMBERED_ACCOUNTS_MAX) forgetPast();
      nextDialAt.set(key, taken.nextDialAt);
      if (turn.waitMs > 0) await delay(turn.waitMs);
      return { taken: true, waitMs: 0 };
    },
  };
}

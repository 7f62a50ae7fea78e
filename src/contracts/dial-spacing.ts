// How the team pacer spaces the dials of one provider account: a virtual-scheduling rate limiter (the
// "generic cell rate algorithm"). `nextDialAt` is the theoretical time of the next dial; a dial may go
// when it is no more than the burst tolerance ahead of now, and moves it on by one interval.
//
// Why a burst at all: the pacer decides in workflow tasks, and workflow time stands still within one,
// so strict spacing grants at most one dial per account per task. Under load a task takes tens of ms
// to come round: strict spacing capped a team at about 15 dials/s however high its limit. Up to
// 20 dials/s the tolerance is zero (exact spacing, as the providers' 1-30 dials/s defaults want);
// above, up to BURST_SECONDS of the rate may go at once, so that over any window of W seconds an
// account sees at most rate x W + rate x BURST_SECONDS dials. Quiet time beyond one burst is not
// saved up: a pacer whose tasks come round less often than every BURST_SECONDS dials below the rate.
// Plain arithmetic, no I/O: used inside the deterministic pacer workflow and tested on its own.

export const BURST_SECONDS = 0.05;

/** Dials that may go at once after a quiet spell: 1 (exact spacing) up to 20 dials/s. */
export function burstSize(dialsPerSecond: number): number {
  return Math.max(1, Math.floor(dialsPerSecond * BURST_SECONDS));
}

/**
 * With the account's next theoretical dial at `nextDialAt` (epoch ms; 0 when it never dialled):
 * `{ waitMs: 0, nextDialAt }` with the moved-on time when a dial may go now, else how long until one may.
 */
export function takeDial(
  nextDialAt: number,
  now: number,
  dialsPerSecond: number,
  withBurst = true,
): { waitMs: number; nextDialAt: number } {
  const intervalMs = 1000 / dialsPerSecond;
  const toleranceMs = withBurst ? (burstSize(dialsPerSecond) - 1) * intervalMs : 0;
  const aheadMs = nextDialAt - now;
  if (aheadMs > toleranceMs) return { waitMs: aheadMs - toleranceMs, nextDialAt };
  return { waitMs: 0, nextDialAt: Math.max(now, nextDialAt) + intervalMs };
}

import { describe, expect, it } from 'vitest';
import { BURST_SECONDS, burstSize, takeDial } from '../../../src/contracts/dial-spacing';

/** Grants dials greedily at the given instants (ms) and answers when each went. */
function grantTimes(rate: number, attempts: number[], withBurst = true): number[] {
  let next = 0;
  const granted: number[] = [];
  for (const now of attempts) {
    for (;;) {
      const dial = takeDial(next, now, rate, withBurst);
      if (dial.waitMs > 0) break;
      next = dial.nextDialAt;
      granted.push(now);
    }
  }
  return granted;
}

/** The most grants inside any window of `windowMs`. */
function busiestWindow(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i += 1) {
    while (times[i]! - times[j]! >= windowMs) j += 1;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('dial spacing', () => {
  it('spaces dials exactly up to 20 per second, as the providers default limits want', () => {
    expect(burstSize(1)).toBe(1);
    expect(burstSize(20)).toBe(1);
    // Asked every millisecond for 3 s at 3 dials/s: one dial per 333 ms, never two closer.
    const times = grantTimes(
      3,
      Array.from({ length: 3000 }, (_, i) => i),
    );
    expect(times).toHaveLength(9);
    for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(333);
  });

  it('above 20 per second lets a burst of BURST_SECONDS of the rate go at once, and keeps the rate', () => {
    expect(burstSize(1000)).toBe(1000 * BURST_SECONDS);
    // Workflow time stands still within a task: one instant can grant a whole burst.
    expect(grantTimes(1000, [5_000])).toHaveLength(50);
    // Decided every 20 ms for 10 s at 1,000/s: the rate holds on average, and in any second the
    // burst is all it may exceed it by.
    const ticks = Array.from({ length: 500 }, (_, i) => 10_000 + i * 20);
    const times = grantTimes(1000, ticks);
    expect(times.length).toBeGreaterThanOrEqual(9_950);
    expect(times.length).toBeLessThanOrEqual(10_000 + 50);
    expect(busiestWindow(times, 1000)).toBeLessThanOrEqual(1000 + 50);
    // A pacer that decides less often than every BURST_SECONDS dials below the rate: quiet time
    // beyond one burst is not saved up (every 100 ms: 50 a decision, 500/s).
    expect(
      grantTimes(
        1000,
        Array.from({ length: 100 }, (_, i) => 10_000 + i * 100),
      ),
    ).toHaveLength(100 * 50);
  });

  it('without bursts (pacer runs from before them) it is strict spacing at every rate', () => {
    expect(grantTimes(1000, [5_000], false)).toHaveLength(1);
    const dial = takeDial(5_000.5, 5_000, 1000, false);
    expect(dial).toEqual({ waitMs: 0.5, nextDialAt: 5_000.5 });
  });
});

// The bench waits for a quiet machine between a scenario's sides; both of its answers are reachable.
import { describe, expect, it } from 'vitest';
import { settle } from '../../../bench/load/cpu';

describe('settle', () => {
  it('answers quiet after one second when the threshold is above what the machine can use', async () => {
    const result = await settle({ busyCores: 1_000, maxMs: 10_000 });
    expect(result.quiet).toBe(true);
    expect(result.waitedMs).toBeGreaterThanOrEqual(990);
    expect(result.waitedMs).toBeLessThan(5_000);
  });

  it('samples over the whole wait when it is shorter than a second (a quick run)', async () => {
    const result = await settle({ busyCores: 1_000, maxMs: 300 });
    expect(result.quiet).toBe(true);
    expect(result.waitedMs).toBeGreaterThanOrEqual(290);
    expect(result.waitedMs).toBeLessThan(990);
  });

  it('gives up at its limit when the machine never gets under the threshold', async () => {
    // No second's busy time is below a negative threshold: it waits out maxMs.
    const result = await settle({ busyCores: -1, maxMs: 1_500 });
    expect(result.quiet).toBe(false);
    expect(result.waitedMs).toBeGreaterThanOrEqual(1_500);
  });
});

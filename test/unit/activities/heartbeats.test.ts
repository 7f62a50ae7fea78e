// withHeartbeats under MockActivityEnvironment: heartbeats while the work runs, none for work that ends
// sooner than the interval, and none once it has ended (or failed).
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { withHeartbeats } from '../../../activities/heartbeats';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function heartbeatsDuring(work: () => Promise<unknown>, everyMs: number, settleMs = 0) {
  const env = new MockActivityEnvironment();
  let beats = 0;
  env.on('heartbeat', () => (beats += 1));
  const outcome = await env
    .run(() => withHeartbeats(work, everyMs))
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  const atEnd = beats;
  await sleep(settleMs);
  return { outcome, atEnd, later: beats };
}

describe('withHeartbeats', () => {
  it('heartbeats every interval while long work runs, and answers what the work answered', async () => {
    const { outcome, atEnd } = await heartbeatsDuring(() => sleep(230).then(() => 'done'), 50);
    expect(outcome).toEqual({ value: 'done' });
    // 4 on time; a loaded machine fires interval timers late, never early.
    expect(atEnd).toBeGreaterThanOrEqual(2);
    expect(atEnd).toBeLessThanOrEqual(4);
  });

  it('sends none for work that ends sooner than the interval', async () => {
    const { atEnd, later } = await heartbeatsDuring(() => sleep(5), 100, 150);
    expect(atEnd).toBe(0);
    expect(later).toBe(0);
  });

  it('stops once the work has failed, and passes the failure on', async () => {
    const { outcome, atEnd, later } = await heartbeatsDuring(
      () => sleep(120).then(() => Promise.reject(new Error('provider down'))),
      30,
      120,
    );
    expect((outcome as { error: Error }).error.message).toBe('provider down');
    expect(atEnd).toBeGreaterThanOrEqual(1);
    expect(later).toBe(atEnd);
  });
});

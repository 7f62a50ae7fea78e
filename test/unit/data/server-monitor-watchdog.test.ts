// The watchdog's bookkeeping of checks, with a stand-in for the driver's client: which heartbeat
// events end the check on record. The restart itself, against the real driver and server, is shown
// by test/integration/mongo-monitor-watchdog.test.ts.
import { EventEmitter } from 'node:events';
import type mongoose from 'mongoose';
import { afterEach, describe, expect, it } from 'vitest';
import { watchServerMonitors } from '../../../src/data/server-monitor-watchdog';

const ADDRESS = 'db.example:27017';
const HUNG_AFTER_MS = 200;

/** A client whose one server's monitor starts a check (as the driver's does) each time it connects. */
function standInClient() {
  const client = new EventEmitter();
  let checkStartedAt = 0;
  const monitor = {
    close() {},
    connect() {
      checkStartedAt = Date.now();
      client.emit('serverHeartbeatStarted', { connectionId: ADDRESS, awaited: false });
    },
  };
  Object.assign(client, {
    options: { connectTimeoutMS: 10_000, heartbeatFrequencyMS: 10_000 },
    topology: { s: { servers: new Map([[ADDRESS, { monitor }]]) } },
  });
  return {
    client: client as unknown as mongoose.mongo.MongoClient,
    monitor,
    /** The driver's end of a check, timed from `startedAt` as the driver times it. */
    failed: (startedAt: number) =>
      client.emit('serverHeartbeatFailed', { connectionId: ADDRESS, duration: Date.now() - startedAt }),
    get checkStartedAt() {
      return checkStartedAt;
    },
  };
}

const stops: Array<() => void> = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

/** A stand-in client under a watchdog; `restarts` lists how long each restarted check had hung. */
function watched() {
  const driver = standInClient();
  const restarts: number[] = [];
  const watchdog = watchServerMonitors(driver.client, {
    hungAfterMs: () => HUNG_AFTER_MS,
    onRestart: ({ hungForMs }) => restarts.push(hungForMs),
  });
  stops.push(watchdog.stop);
  return { driver, restarts };
}

async function until(probe: () => boolean, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!probe() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return probe();
}

describe('watchServerMonitors', () => {
  it("keeps watching a restarted monitor's check when the check it gave up on ends late", async () => {
    const { driver, restarts } = watched();

    driver.monitor.connect(); // the first check, which hangs
    const hungCheckStartedAt = driver.checkStartedAt;
    expect(await until(() => restarts.length === 1, 3_000)).toBe(true);
    // The restart started a new check; the one given up on now fails, long after it began.
    driver.failed(hungCheckStartedAt);
    // The new check hangs too: it is restarted in its turn, not forgotten.
    expect(await until(() => restarts.length === 2, 3_000)).toBe(true);
    expect(restarts[1]).toBeGreaterThan(HUNG_AFTER_MS);
  });

  it('forgets a check that ended in time, and restarts nothing', async () => {
    const { driver, restarts } = watched();

    driver.monitor.connect();
    await new Promise((resolve) => setTimeout(resolve, 50));
    driver.failed(driver.checkStartedAt);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(restarts).toEqual([]);
  });
});

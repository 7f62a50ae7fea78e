// The MongoDB driver's server monitor can hang for good when the server closes every connection at
// once while operations run (src/data/server-monitor-watchdog.ts says how). Shown through a TCP relay
// in front of the real server that closes every relayed connection at once, as a restart does: the
// watchdog sees a check hung past the driver's own limits, restarts the monitor, and the process
// finds its database again.
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';
import { mongoConnectOptions } from '../../src/data/connection';
import { watchServerMonitors } from '../../src/data/server-monitor-watchdog';
import { useMongoRelay } from '../helpers/tcp-relay';

const relayed = useMongoRelay();

const CONNECT_TIMEOUT_MS = 1_500;
/** The watchdog's default limit for a polled check at that timeout: a connect and a handshake, and 2 s. */
const HUNG_AFTER_MS = 2 * CONNECT_TIMEOUT_MS + 2_000;
/** Rounds at most: eight once went by without a hang, in a full `npm test` run. */
const ROUNDS_MAX = 20;

describe('a database that closes every connection at once while operations run', () => {
  it("gets a hung server monitor restarted, and the process's operations answered again", async () => {
    const connection = mongoose.createConnection(relayed.uri, {
      ...mongoConnectOptions(4, { connectTimeoutMs: CONNECT_TIMEOUT_MS }),
      serverSelectionTimeoutMS: 1_000,
    });
    const restarts: Array<{ address: string; hungForMs: number }> = [];
    const watchdog = watchServerMonitors(connection.getClient(), { onRestart: (event) => restarts.push(event) });
    await connection.asPromise();
    try {
      const probes = connection.db!.collection('monitor_watchdog_probes');
      await probes.insertOne({ at: new Date() });
      const rounds: string[] = [];
      // A round hangs the monitor when its check starts in the moment between the monitor's socket
      // being destroyed and its saying so: most rounds here (4 of 4 in a probe). Rounds go on until one has.
      for (let round = 0; round < ROUNDS_MAX && restarts.length === 0; round += 1) {
        let running = true;
        const load = [1, 2, 3].map(async () => {
          while (running) await probes.findOne({}).catch(() => undefined);
        });
        await new Promise((resolve) => setTimeout(resolve, 600));
        relayed.relay.dropConnections();
        await new Promise((resolve) => setTimeout(resolve, 300));
        running = false;
        await Promise.all(load);

        // Answered again within the hung check's limit, its restart and a few checks.
        const dropped = Date.now();
        let answeredAfterMs: number | null = null;
        while (Date.now() - dropped < HUNG_AFTER_MS + 6_000) {
          const answered = await probes.findOne({}).then(
            () => true,
            () => false,
          );
          if (answered) {
            answeredAfterMs = Date.now() - dropped;
            break;
          }
        }
        rounds.push(`round ${round}: answered after ${answeredAfterMs ?? 'never'} ms, ${restarts.length} restarts`);
        expect(answeredAfterMs, rounds.join('\n')).not.toBeNull();
      }
      expect(restarts.length, 'no round hung the monitor (has the driver been fixed? then the watchdog can go)').toBe(
        1,
      );
      expect(restarts[0]!.hungForMs).toBeGreaterThan(HUNG_AFTER_MS);
      expect(restarts[0]!.hungForMs).toBeLessThan(HUNG_AFTER_MS + 3_000);
    } finally {
      watchdog.stop();
      await connection.close(true);
    }
  }, 120_000);
});

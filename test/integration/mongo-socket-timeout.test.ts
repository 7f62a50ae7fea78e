// The worker's database connection gives up on a round trip the server never answers
// (WORKER_MONGODB_SOCKET_TIMEOUT_SECONDS): the operation fails, so its activity is retried at once
// instead of waiting out its start-to-close timeout, and the pool carries on with a new connection.
// Every process's connections give up on a handshake that is never answered after the connect timeout,
// so the server monitor finds the database again soon after it answers. Shown through a TCP relay in
// front of the real server that stops passing the server's answers on.
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';
import { CONNECT_TIMEOUT_MS, mongoConnectOptions } from '../../src/data/connection';
import { watchServerMonitors } from '../../src/data/server-monitor-watchdog';
import { useMongoRelay } from '../helpers/tcp-relay';

const relayed = useMongoRelay();

describe('a database round trip that is never answered', () => {
  it('fails after the socket timeout, and the next operation runs on a new connection', async () => {
    const connection = await mongoose
      .createConnection(relayed.uri, mongoConnectOptions(2, { socketTimeoutMs: 1_000 }))
      .asPromise();
    try {
      const probes = connection.db!.collection('socket_timeout_probes');
      await probes.insertOne({ at: new Date() });

      relayed.relay.setSilent(true);
      const started = Date.now();
      await expect(probes.findOne({})).rejects.toThrow(/timed out/i);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(900);
      expect(waited).toBeLessThan(10_000);

      relayed.relay.setSilent(false);
      expect(await probes.findOne({})).toMatchObject({ at: expect.any(Date) });
    } finally {
      relayed.relay.setSilent(false);
      await connection.close();
    }
  });

  it('without a socket timeout (the driver default) is waited for, for ever', async () => {
    const connection = await mongoose.createConnection(relayed.uri, mongoConnectOptions(2)).asPromise();
    try {
      const probes = connection.db!.collection('socket_timeout_probes');
      await probes.findOne({});
      relayed.relay.setSilent(true);
      const pending = probes.findOne({}).then(
        () => 'answered',
        () => 'failed',
      );
      const outcome = await Promise.race([
        pending,
        new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 3_000)),
      ]);
      expect(outcome).toBe('still waiting');
    } finally {
      relayed.relay.setSilent(false);
      await connection.close(true);
    }
  });
});

describe('a database that takes connections but does not answer them, as one coming back up may', () => {
  it('holds the server monitor only for the connect timeout per check, then is used again at once', async () => {
    expect(mongoConnectOptions(2).connectTimeoutMS).toBe(CONNECT_TIMEOUT_MS);
    const connection = mongoose.createConnection(relayed.uri, {
      ...mongoConnectOptions(2, { connectTimeoutMs: 1_500 }),
      serverSelectionTimeoutMS: 30_000,
    });
    const failures: number[] = [];
    connection.getClient().on('serverHeartbeatFailed', () => failures.push(Date.now()));
    // As in every process: a check hung by the driver's fault (mongo-monitor-watchdog.test.ts) is
    // restarted after 5 s here. A check left waiting by the connect timeout is not: 30 s would be.
    const watchdog = watchServerMonitors(connection.getClient());
    await connection.asPromise();
    try {
      const probes = connection.db!.collection('connect_timeout_probes');
      await probes.insertOne({ at: new Date() });

      // The server goes away and its listener comes back, answering nothing: the monitor's new
      // connection waits for a handshake that never comes.
      relayed.relay.setSilent(true);
      const dropped = Date.now();
      relayed.relay.dropConnections();
      const pending = probes.findOne({});
      pending.catch(() => undefined); // awaited below; should a check fail first, the close ends it
      // The dropped connection fails one check; the next one, on a new connection, gives up after the
      // connect timeout. With the driver's 30 s it would still be waiting when this poll gives up (a
      // loaded machine may slow each check, not lengthen it to 20 s).
      await expect
        .poll(() => failures.filter((at) => at > dropped).length, { timeout: 20_000, interval: 100 })
        .toBeGreaterThanOrEqual(2);

      relayed.relay.setSilent(false);
      const answered = Date.now();
      expect(await pending).toMatchObject({ at: expect.any(Date) });
      // Within a check or two of the timeout, not the 30 s of a check left hanging.
      expect(Date.now() - answered).toBeLessThan(10_000);
    } finally {
      watchdog.stop();
      relayed.relay.setSilent(false);
      await connection.close(true);
    }
  });
});

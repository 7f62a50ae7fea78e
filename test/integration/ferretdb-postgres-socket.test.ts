// The local stack's FerretDB reaches its PostgreSQL through PostgreSQL's Unix socket, not loopback
// TCP (src/local/servers.ts says why: over TCP, reads stalled for TCP's persist timer now and then).
// A stack of its own, so that its PostgreSQL's sessions are FerretDB's and this test's alone.
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { mongo as driver } from 'mongoose';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePorts, startMongoStack } from '../../src/local/servers';

let dir: string;
let stack: Awaited<ReturnType<typeof startMongoStack>> | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'oco-socket-'));
  const [postgresPort, mongoPort] = (await freePorts(2)) as [number, number];
  stack = await startMongoStack({ dataDir: path.join(dir, 'mongo'), postgresPort, mongoPort, log: () => undefined });
});
afterAll(async () => {
  for (const server of stack?.servers ?? []) await server.stop();
  await rm(dir, { recursive: true, force: true });
});

it("FerretDB's sessions with PostgreSQL all come through the Unix socket", async () => {
  // A write and a read through FerretDB, so that it holds sessions with PostgreSQL.
  const mongo = new driver.MongoClient(stack!.uri);
  try {
    const things = mongo.db('socket_check').collection<{ _id: string; n: number }>('things');
    await things.insertOne({ _id: 'a', n: 1 });
    expect(await things.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 1 });
  } finally {
    await mongo.close();
  }

  const pg = new Client({ connectionString: stack!.postgresUrl });
  await pg.connect();
  try {
    // A session over a Unix socket has no client address; this test's own comes over TCP.
    const { rows } = await pg.query<{ client_addr: string | null }>(
      `SELECT client_addr FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((row) => row.client_addr)).toEqual(rows.map(() => null));
  } finally {
    await pg.end();
  }
});

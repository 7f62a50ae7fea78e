// The local stack's FerretDB reaches its PostgreSQL through PostgreSQL's Unix socket, not loopback
// TCP (src/local/servers.ts says why: over TCP, reads stalled for TCP's persist timer now and then).
// A stack of its own, so that its PostgreSQL's sessions are FerretDB's and this test's alone. Its data
// folder is deeper than a Unix socket's path allows (107 bytes), as a checkout a few folders down would
// make it: the socket then lives in a short folder of its own (src/local/postgres-socket-dir.ts).
import os from 'node:os';
import path from 'node:path';
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { mongo as driver } from 'mongoose';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_SOCKET_PATH_BYTES, postgresSocketDir } from '../../src/local/postgres-socket-dir';
import { freePorts, startMongoStack } from '../../src/local/servers';

let dir: string;
let dataDir: string;
let postgresPort: number;
let stack: Awaited<ReturnType<typeof startMongoStack>> | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'oco-socket-'));
  // PostgreSQL runs as its own user when this runs as root: it must reach its data folder.
  await chmod(dir, 0o755);
  dataDir = path.join(dir, 'a-checkout-some-folders-deeper-than-most', 'outbound-call-orchestrator', '.data', 'mongo');
  let mongoPort: number;
  [postgresPort, mongoPort] = (await freePorts(2)) as [number, number];
  stack = await startMongoStack({ dataDir, postgresPort, mongoPort, log: () => undefined });
});
afterAll(async () => {
  for (const server of stack?.servers ?? []) await server.stop();
  await rm(dir, { recursive: true, force: true });
});

const socketName = () => `.s.PGSQL.${postgresPort}`;

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

it('a data folder too deep for a Unix socket gets a short socket folder, removed when PostgreSQL stops', async () => {
  const pgDir = path.join(dataDir, 'postgres');
  expect(Buffer.byteLength(path.join(pgDir, socketName()))).toBeGreaterThan(MAX_SOCKET_PATH_BYTES);
  const socketDir = postgresSocketDir(pgDir);
  expect(socketDir).not.toBe(pgDir);
  expect(await readdir(socketDir)).toContain(socketName());
  expect(await readdir(pgDir)).not.toContain(socketName());

  // Stopped here rather than in afterAll, to see the folder go.
  for (const server of stack!.servers) await server.stop();
  await expect(lstat(socketDir)).rejects.toMatchObject({ code: 'ENOENT' });
  stack = undefined;
});

// The PostgreSQL indexes the local stack gives FerretDB's tables (src/local/ferretdb-indexes.ts) keep no
// pending list: with GIN's default `fastupdate`, every row written goes to a pending list that each
// read of the index scans in full until a vacuum folds it in, and a list page read right after a bulk
// insert took twice as long. Run on a PostgreSQL of its own, as FerretDB's tables are only reachable
// through PostgreSQL. Also: the install waits while PostgreSQL refuses sessions as still starting up.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST_FILTER_FIELDS } from '../../src/data/call-list-positions';
import { INDEXED_FIELDS_BY_COLLECTION, installFerretdbIndexes } from '../../src/local/ferretdb-indexes';
import { POSTGRES_SUPERUSER, freePort, startPostgres, type RunningServer } from '../../src/local/servers';

let dir: string;
let server: RunningServer | undefined;
let url: string;
let pg: Client;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'oco-gin-'));
  // PostgreSQL runs as its own user when this runs as root: it must reach its data folder.
  await chmod(dir, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  server = await startPostgres(dir, port, password, () => undefined);
  url = `postgres://${POSTGRES_SUPERUSER}:${password}@127.0.0.1:${port}/postgres`;
  await installFerretdbIndexes(url);
  pg = new Client({ connectionString: url });
  await pg.connect();
  await pg.query('CREATE EXTENSION IF NOT EXISTS pgstattuple');
  await pg.query('CREATE SCHEMA app');
});
afterAll(async () => {
  await pg?.end();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Each index of the table: its name, whether its pending list is off, and the rows waiting in it. */
async function ginIndexes(table: string) {
  const { rows } = await pg.query<{ name: string; options: string[] | null; pending: string }>(
    `SELECT i.relname AS name, i.reloptions AS options, (pgstatginindex(i.oid)).pending_tuples AS pending
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      WHERE t.relname = $1 ORDER BY i.relname`,
    [table],
  );
  return rows.map((row) => ({
    name: row.name,
    fastupdateOff: (row.options ?? []).includes('fastupdate=off'),
    pending: Number(row.pending),
  }));
}

/** Rows as FerretDB stores them: the document in `_jsonb`. */
async function insertDocs(table: string, count: number) {
  await pg.query(
    `INSERT INTO app.${table} (_jsonb)
     SELECT jsonb_build_object('_id', md5(n::text), 'teamId', 't1', 'status', 'completed', 'phoneCallId', md5(n::text),
                               'token', md5(n::text), 'listKeys', jsonb_build_array('t1:0:' || (n / 32)))
       FROM generate_series(1, $1) AS n`,
    [count],
  );
}

describe('GIN indexes on FerretDB tables', () => {
  it('a table FerretDB creates gets one per listed field, and rows written go straight into them', async () => {
    await pg.query('CREATE TABLE app.phonecalls_0a1b2c3d (_jsonb jsonb)');
    await insertDocs('phonecalls_0a1b2c3d', 5_000);
    const indexes = await ginIndexes('phonecalls_0a1b2c3d');
    expect(indexes.map((index) => index.name).sort()).toEqual(
      ['_id', 'listKeys', ...LIST_FILTER_FIELDS]
        .map((field) => `phonecalls_0a1b2c3d_${field.toLowerCase()}_oco_gin`)
        .sort(),
    );
    expect(INDEXED_FIELDS_BY_COLLECTION.phonecalls).toEqual(['listKeys', ...LIST_FILTER_FIELDS]);
    for (const index of indexes) expect(index, index.name).toMatchObject({ fastupdateOff: true, pending: 0 });
  });

  it('an index made by an earlier release (pending list on) is switched off and emptied at install', async () => {
    await pg.query('CREATE TABLE app.recordings_0a1b2c3d (_jsonb jsonb)');
    const earlier = 'recordings_0a1b2c3d_phonecallid_oco_gin';
    await pg.query(`ALTER INDEX app.${earlier} SET (fastupdate = on)`);
    await insertDocs('recordings_0a1b2c3d', 2_000);
    const before = (await ginIndexes('recordings_0a1b2c3d')).find((index) => index.name === earlier);
    expect(before?.fastupdateOff).toBe(false);
    expect(before?.pending).toBeGreaterThan(0);

    await installFerretdbIndexes(url);
    const after = await ginIndexes('recordings_0a1b2c3d');
    expect(after.map((index) => index.name).sort()).toEqual([
      'recordings_0a1b2c3d__id_oco_gin',
      'recordings_0a1b2c3d_phonecallid_oco_gin',
      'recordings_0a1b2c3d_token_oco_gin',
    ]);
    for (const index of after) expect(index, index.name).toMatchObject({ fastupdateOff: true, pending: 0 });
  });
});

/**
 * A relay in front of the PostgreSQL of this file that refuses the first `refusals` sessions as
 * PostgreSQL does while it starts up (ErrorResponse with `code`, then close) and passes later ones on.
 */
async function refusingRelay(refusals: number, code: string, message: string) {
  const target = new URL(url);
  const field = (type: string, value: string) => Buffer.concat([Buffer.from(type), Buffer.from(`${value}\0`)]);
  const fields = Buffer.concat([
    field('S', 'FATAL'),
    field('V', 'FATAL'),
    field('C', code),
    field('M', message),
    Buffer.from([0]),
  ]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(fields.length + 4);
  const refusal = Buffer.concat([Buffer.from('E'), length, fields]);
  let refused = 0;
  const relay = net.createServer((client) => {
    if (refused < refusals) {
      refused += 1;
      // Answered once the startup message is in, as PostgreSQL does.
      client.once('data', () => client.end(refusal));
      client.on('error', () => undefined);
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const relayUrl = new URL(url);
  relayUrl.port = String((relay.address() as net.AddressInfo).port);
  return {
    url: relayUrl.toString(),
    refused: () => refused,
    close: () => new Promise<void>((resolve) => relay.close(() => resolve())),
  };
}

describe('installing while PostgreSQL starts up', () => {
  it('waits while sessions are refused with 57P03, then installs', async () => {
    const trigger = () => pg.query("SELECT 1 FROM pg_event_trigger WHERE evtname = 'oco_ferretdb_indexes'");
    await pg.query('DROP EVENT TRIGGER oco_ferretdb_indexes');
    expect((await trigger()).rows).toHaveLength(0);
    const relay = await refusingRelay(4, '57P03', 'the database system is starting up');
    try {
      await installFerretdbIndexes(relay.url);
      expect(relay.refused()).toBe(4);
      expect((await trigger()).rows).toHaveLength(1);
    } finally {
      await relay.close();
    }
  });

  it('any other refusal fails at once', async () => {
    const relay = await refusingRelay(4, '53300', 'sorry, too many clients already');
    try {
      await expect(installFerretdbIndexes(relay.url)).rejects.toMatchObject({ code: '53300' });
      expect(relay.refused()).toBe(1);
    } finally {
      await relay.close();
    }
  });
});

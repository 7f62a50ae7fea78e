// Statistics of freshly bulk-written calls for the store's query planner. On FerretDB each collection
// is a PostgreSQL table, and PostgreSQL picks between the list's expression indexes
// (src/local/ferretdb-indexes.ts) by the table's statistics: without them it may take a filter's index
// that matches half the team over the slice's, which no running service sees, since autovacuum
// analyses a table within seconds of a bulk write (src/local/servers.ts sets it so).
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';

/** autovacuum_naptime (5 s) twice, and the analysis itself: the wait when the bench cannot ask. */
const AUTOVACUUM_WAIT_MS = 12_000;

/**
 * Analyses FerretDB's PostgreSQL at once when this run started it (what autovacuum would do within
 * seconds); on a configured store, waits as long as autovacuum takes. Answers which it did.
 */
export async function freshStatistics(postgresUrl: string | null): Promise<string> {
  if (!postgresUrl) {
    await sleep(AUTOVACUUM_WAIT_MS);
    return `waited ${AUTOVACUUM_WAIT_MS / 1000} s for the store to analyse the writes`;
  }
  const began = performance.now();
  const client = new Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
  return `ANALYZE on FerretDB's PostgreSQL (${((performance.now() - began) / 1000).toFixed(1)} s)`;
}

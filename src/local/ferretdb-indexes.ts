// PostgreSQL indexes that match the SQL FerretDB 1.x generates for equality filters.
//
// FerretDB turns each top-level equality of a query into `_jsonb -> 'field' @> '<value>'` and does not
// use the btree indexes it creates for MongoDB indexes (FerretDB issue 4646), not even its unique
// index on `_id`: every lookup by `_id` (a call's status write, a dial, a team or key read) scanned
// the whole table, so each cost grew with the number of calls stored. A GIN index on that very
// expression serves it. Indexed here:
// - `_id` of every collection's table, so that a lookup by id is an index lookup;
// - per collection, each other field that a lookup on a hot path names (INDEXED_FIELDS_BY_COLLECTION):
//   without it the lookup reads every row, and a row's whole document (a recording's audio too)
//   is decompressed to find the field.
// Each is made without GIN's pending list (`fastupdate = off`): with it, new entries wait in a list
// that every read of the index scans in full until a vacuum or an analyse folds them in, and a list
// page read soon after many writes took twice as long; without it a write puts its few entries
// straight into the index, at about the same cost.
// An event trigger adds them to every table FerretDB creates (one set per database: the tests make
// many), and existing tables get them at start. Custom plans are forced (plan_cache_mode, set on the
// server by src/local/servers.ts) because FerretDB's prepared statements name the field as a
// parameter, which a generic plan cannot match to an expression index.
//
// A deployment on FerretDB and its own PostgreSQL runs this once, and again after an upgrade (it brings
// indexes of earlier releases up to date): `npx tsx src/local/ferretdb-indexes.ts <postgres URL>`.
import { Client } from 'pg';
import { LIST_FILTER_FIELDS } from '../data/call-list-positions';
import { DoNotCallEntry } from '../data/models/do-not-call-entry';
import { IdempotencyRecord } from '../data/models/idempotency-record';
import { PhoneCall } from '../data/models/phone-call';
import { ProviderCallSighting } from '../data/models/provider-call-sighting';
import { Recording } from '../data/models/recording';
import { RecordingChunk } from '../data/models/recording-chunk';
import { Transcript } from '../data/models/transcript';
import { TranscriptSlice } from '../data/models/transcript-slice';
import { Webhook } from '../data/models/webhook';
import { WebhookDelivery } from '../data/models/webhook-delivery';

/**
 * The fields indexed besides `_id`, by collection. Only fields that narrow a lookup to a few rows:
 * a team's webhooks or do-not-call entries, but not a team's calls (every list read names the team,
 * and with an index on it the planner may intersect a whole team's calls instead of reading one
 * slice). Each index costs every write of its table a little, so a lookup made only on rare paths (a
 * dispatch batch's calls, read when recovering) goes without.
 */
export const INDEXED_FIELDS_BY_COLLECTION: Readonly<Record<string, readonly string[]>> = {
  // The list slice key and each list filter (src/data/call-list-query.ts).
  [PhoneCall.collection.collectionName]: ['listKeys', ...LIST_FILTER_FIELDS],
  // Capture's upsert of a call's recording, and the recording's public URL.
  [Recording.collection.collectionName]: ['phoneCallId', 'token'],
  // The pieces of a long recording, written by the capture and read by its public URL.
  [RecordingChunk.collection.collectionName]: ['phoneCallId'],
  // Capture replaces a call's transcript; GET /v1/transcripts?phoneCallId=; a team-wide page reads
  // day, slice or minute (src/data/transcript-list.ts).
  [Transcript.collection.collectionName]: ['phoneCallId', 'listDay', 'listSlice', 'listMinute'],
  // A team-wide transcripts page reads the team's days, then each day's slices.
  [TranscriptSlice.collection.collectionName]: ['parent'],
  // The record of every delivery attempt (by event); a call's deliveries (GET and redelivery).
  [WebhookDelivery.collection.collectionName]: ['eventId', 'phoneCallId'],
  // Every event's endpoints, and every create (the team's webhooks).
  [Webhook.collection.collectionName]: ['teamId'],
  // A retried dial reads its call's sightings, and whether another call was seen with a provider call
  // it found: rare, but a day of calls' worth of rows, and retries come in numbers when a provider falters.
  [ProviderCallSighting.collection.collectionName]: ['callId', 'providerCallId'],
  // Every create with an Idempotency-Key.
  [IdempotencyRecord.collection.collectionName]: ['key'],
  // Every dial checks its number against the team's list (equality); a create of several numbers
  // reads the team's entries ($in is not pushed down), a team's list being short beside all teams'.
  [DoNotCallEntry.collection.collectionName]: ['phoneNumber', 'teamId'],
};
/** FerretDB names a collection's table `<collection>_<8 hex of a hash>`, with the document in `_jsonb`. */
const COLLECTION_TABLE = '_[0-9a-f]{8}$';

const quoteLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

function installSql(): string {
  // A collection's name is matched literally (it may hold underscores, never regex syntax).
  const byCollection = Object.entries(INDEXED_FIELDS_BY_COLLECTION)
    .map(
      ([collection, fields]) =>
        `    WHEN target_table ~ ${quoteLiteral(`^${collection}${COLLECTION_TABLE}`)} THEN ARRAY[${fields.map(quoteLiteral).join(', ')}]`,
    )
    .join('\n');
  return `
CREATE OR REPLACE FUNCTION public.oco_ferretdb_indexes(target_schema text, target_table text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  field text;
  index_name text;
  indexed text[] := ARRAY['_id'] || CASE
${byCollection}
    ELSE ARRAY[]::text[]
  END;
BEGIN
  FOREACH field IN ARRAY indexed LOOP
    index_name := target_table || '_' || lower(field) || '_oco_gin';
    EXECUTE format(
      'CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin ((_jsonb -> %L) jsonb_path_ops) WITH (fastupdate = off)',
      index_name, target_schema, target_table, field);
    -- Indexes of earlier releases were made with the pending list on: turn it off, and fold in
    -- what it holds so that no read scans it again.
    IF EXISTS (SELECT 1 FROM pg_class i JOIN pg_namespace n ON n.oid = i.relnamespace
               WHERE n.nspname = target_schema AND i.relname = index_name
                 AND NOT coalesce(i.reloptions, '{}') @> ARRAY['fastupdate=off']) THEN
      EXECUTE format('ALTER INDEX %I.%I SET (fastupdate = off)', target_schema, index_name);
      PERFORM gin_clean_pending_list(format('%I.%I', target_schema, index_name)::regclass);
    END IF;
  END LOOP;
END
$fn$;

CREATE OR REPLACE FUNCTION public.oco_ferretdb_indexes_on_create() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  created record;
BEGIN
  FOR created IN
    SELECT n.nspname AS schema_name, c.relname AS table_name
    FROM pg_event_trigger_ddl_commands() d
    JOIN pg_class c ON c.oid = d.objid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE d.command_tag = 'CREATE TABLE' AND c.relname ~ ${quoteLiteral(COLLECTION_TABLE)}
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = '_jsonb')
  LOOP
    BEGIN
      PERFORM public.oco_ferretdb_indexes(created.schema_name, created.table_name);
    EXCEPTION WHEN others THEN
      -- Never fail FerretDB's own CREATE TABLE: reads are slower without the indexes, not wrong.
      RAISE WARNING 'indexes not created on %.%: %', created.schema_name, created.table_name, SQLERRM;
    END;
  END LOOP;
END
$fn$;

-- The trigger of earlier releases indexed only the phone-call tables.
DROP EVENT TRIGGER IF EXISTS oco_phone_call_list_indexes;
DROP FUNCTION IF EXISTS public.oco_phone_call_list_indexes_on_create();
DROP FUNCTION IF EXISTS public.oco_phone_call_list_indexes(text, text);
DROP EVENT TRIGGER IF EXISTS oco_ferretdb_indexes;
CREATE EVENT TRIGGER oco_ferretdb_indexes ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
  EXECUTE FUNCTION public.oco_ferretdb_indexes_on_create();

SELECT public.oco_ferretdb_indexes(t.table_schema, t.table_name)
FROM information_schema.columns t
WHERE t.column_name = '_jsonb' AND t.table_name ~ ${quoteLiteral(COLLECTION_TABLE)};
`;
}

/**
 * A session, once PostgreSQL takes them: it listens before it has finished starting (recovery after a
 * stop) and refuses sessions meanwhile with 57P03, "the database system is starting up". The chaos
 * suite's database restart met that refusal here.
 */
async function connectWhenReady(postgresUrl: string, timeoutMs = 60_000): Promise<InstanceType<typeof Client>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Client({ connectionString: postgresUrl });
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => undefined);
      if ((err as { code?: string }).code !== '57P03' || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Installs the trigger and indexes every collection table that exists. Needs a superuser (event triggers do). */
export async function installFerretdbIndexes(postgresUrl: string): Promise<void> {
  const client = await connectWhenReady(postgresUrl);
  try {
    await client.query(installSql());
  } finally {
    await client.end();
  }
}

if (require.main === module) {
  const url = process.argv[2];
  if (!url) {
    process.stderr.write('usage: npx tsx src/local/ferretdb-indexes.ts <postgres URL of FerretDB>\n');
    process.exit(2);
  }
  installFerretdbIndexes(url).then(
    () => process.stdout.write('FerretDB indexes installed.\n'),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

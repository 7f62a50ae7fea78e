// Where the local PostgreSQL puts its Unix socket (`unix_socket_directories`), which FerretDB connects
// through. Beside its data when the path fits; else in a short folder of its own under the temporary
// directory. A Unix socket's path is capped (107 bytes on Linux: `sun_path`), and PostgreSQL refuses
// to start when it can create none: a checkout a few folders deeper than most made `npm start` fail.
import { createHash } from 'node:crypto';
import { chown, lstat, mkdir, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The longest socket path: `sun_path` with its terminating zero is 108 bytes on Linux, 104 on macOS. */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'darwin' ? 103 : 107;

/** The socket's name in its folder, at its longest (PostgreSQL names it after its port). */
const LONGEST_SOCKET_NAME = '.s.PGSQL.65535';

/**
 * `unix_socket_directories` is a comma-separated list whose items may be double-quoted and are
 * trimmed: a folder with a comma, a double quote or whitespace in its path is moved to the short
 * folder as well.
 */
const PLAIN_PATH = /^[^\s,"]+$/;

function fits(dir: string): boolean {
  return PLAIN_PATH.test(dir) && Buffer.byteLength(path.join(dir, LONGEST_SOCKET_NAME)) <= MAX_SOCKET_PATH_BYTES;
}

/**
 * The socket folder for PostgreSQL's data folder `pgDir`: `pgDir` itself when its socket's path fits,
 * else `oco-pg-<hash of pgDir>` under `tmpDir` (or /tmp when even that is too long). The same data
 * folder always gets the same socket folder, so the servers of one stack agree on it.
 */
export function postgresSocketDir(pgDir: string, tmpDir: string = os.tmpdir()): string {
  const resolved = path.resolve(pgDir);
  if (fits(resolved)) return resolved;
  const name = `oco-pg-${createHash('sha256').update(resolved).digest('hex').slice(0, 16)}`;
  const underTmp = path.join(path.resolve(tmpDir), name);
  return fits(underTmp) ? underTmp : path.join('/tmp', name);
}

/** Whether `socketDir` is a short folder of its own rather than the data folder. */
function isOwnFolder(socketDir: string, pgDir: string): boolean {
  return socketDir !== path.resolve(pgDir);
}

/**
 * Makes the socket folder when it is a short one of its own: private to PostgreSQL's user (`owner`,
 * when this runs as root), and refused when something else already holds that name in a shared
 * temporary directory (another user's folder, a link), rather than putting the socket there.
 */
export async function preparePostgresSocketDir(
  socketDir: string,
  pgDir: string,
  owner?: { uid: number; gid: number },
): Promise<void> {
  if (!isOwnFolder(socketDir, pgDir)) return;
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  const uid = process.getuid?.();
  const found = await lstat(socketDir);
  const ownedByUs = found.uid === uid || (owner !== undefined && found.uid === owner.uid);
  if (!found.isDirectory() || !ownedByUs) {
    throw new Error(
      `PostgreSQL's socket folder ${socketDir} (its data folder's path is too long for a Unix socket) ` +
        'exists and is not a folder of this user: remove it, or set OCO_DATA_DIR to a shorter path.',
    );
  }
  if (owner && found.uid !== owner.uid) await chown(socketDir, owner.uid, owner.gid);
}

/** Removes a short socket folder of its own once PostgreSQL has stopped (it removes its socket itself). */
export async function removePostgresSocketDir(socketDir: string, pgDir: string): Promise<void> {
  if (!isOwnFolder(socketDir, pgDir)) return;
  // Not recursive: a folder that still holds something is left as it is.
  await rmdir(socketDir).catch(() => undefined);
}

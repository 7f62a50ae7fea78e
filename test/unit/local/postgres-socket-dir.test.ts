// Where the local PostgreSQL's Unix socket goes: beside its data when the path fits a socket's 107
// bytes, else in a short folder of its own that no other user or link can stand in for.
import { lstat, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MAX_SOCKET_PATH_BYTES,
  postgresSocketDir,
  preparePostgresSocketDir,
  removePostgresSocketDir,
} from '../../../src/local/postgres-socket-dir';

/** The socket PostgreSQL makes in `dir` for the highest port. */
const socketPath = (dir: string) => path.join(dir, '.s.PGSQL.65535');
const deep = (...parts: string[]) => path.join('/home/someone', 'a-checkout-a-few-folders-deeper-than-most', ...parts);

describe('postgresSocketDir', () => {
  it("keeps the socket in PostgreSQL's data folder when its path fits", () => {
    expect(postgresSocketDir('/work/main/.data/mongo/postgres', '/tmp')).toBe('/work/main/.data/mongo/postgres');
  });

  it('moves it to a short folder of its own, the same for the same data folder, when the path is too long', () => {
    const pgDir = deep('outbound-call-orchestrator', '.data', 'mongo', 'postgres');
    expect(Buffer.byteLength(socketPath(pgDir))).toBeGreaterThan(MAX_SOCKET_PATH_BYTES);
    const dir = postgresSocketDir(pgDir, '/tmp');
    expect(dir).toMatch(/^\/tmp\/oco-pg-[0-9a-f]{16}$/);
    expect(Buffer.byteLength(socketPath(dir))).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
    expect(postgresSocketDir(pgDir, '/tmp')).toBe(dir);
    expect(postgresSocketDir(deep('another-checkout', '.data', 'mongo', 'postgres'), '/tmp')).not.toBe(dir);
  });

  it('counts bytes, not characters', () => {
    // The euro sign takes three bytes: 45 characters, 135 bytes.
    const pgDir = path.join('/srv', '\u20ac'.repeat(45), 'postgres');
    expect(pgDir.length + '/.s.PGSQL.65535'.length).toBeLessThan(MAX_SOCKET_PATH_BYTES);
    expect(postgresSocketDir(pgDir, '/tmp')).toMatch(/^\/tmp\/oco-pg-/);
  });

  it('moves a folder whose name the setting would split or unquote (a comma, a space, a quote)', () => {
    for (const name of ['a,b', 'My Projects', 'say"hi"']) {
      expect(postgresSocketDir(path.join('/srv', name, 'postgres'), '/tmp')).toMatch(/^\/tmp\/oco-pg-[0-9a-f]{16}$/);
    }
  });

  it('falls back to /tmp when the temporary directory is itself too long', () => {
    const longTmp = path.join('/var', 'x'.repeat(100));
    expect(postgresSocketDir(deep('x'.repeat(60), 'postgres'), longTmp)).toMatch(/^\/tmp\/oco-pg-[0-9a-f]{16}$/);
  });
});

describe('preparePostgresSocketDir', () => {
  let base: string | undefined;
  afterEach(async () => {
    if (base) await rm(base, { recursive: true, force: true });
    base = undefined;
  });
  const pgDir = deep('.data', 'mongo', 'postgres');

  it('makes a private folder, and removes it again once empty', async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'oco-socket-test-'));
    const dir = path.join(base, 'oco-pg-0123456789abcdef');
    await preparePostgresSocketDir(dir, pgDir);
    const made = await lstat(dir);
    expect(made.isDirectory()).toBe(true);
    expect(made.mode & 0o777).toBe(0o700);
    // Made again on the next start: it is already there and ours.
    await preparePostgresSocketDir(dir, pgDir);
    await removePostgresSocketDir(dir, pgDir);
    await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a link in its place', async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'oco-socket-test-'));
    const elsewhere = path.join(base, 'elsewhere');
    await mkdir(elsewhere);
    const dir = path.join(base, 'oco-pg-0123456789abcdef');
    await symlink(elsewhere, dir);
    await expect(preparePostgresSocketDir(dir, pgDir)).rejects.toThrow(/is not a folder of this user.*OCO_DATA_DIR/);
  });

  it('leaves the data folder alone when the socket is there', async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'oco-socket-test-'));
    const dataFolder = path.join(base, 'postgres');
    await mkdir(dataFolder);
    await preparePostgresSocketDir(dataFolder, dataFolder);
    await removePostgresSocketDir(dataFolder, dataFolder);
    expect((await lstat(dataFolder)).isDirectory()).toBe(true);
  });
});

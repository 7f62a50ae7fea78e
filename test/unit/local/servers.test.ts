// The local-server scripts fail with messages a person can act on.
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { MissingToolchainError, cacheDir, ensureBinaries, goVersionProblem } from '../../../src/local/binaries';
import {
  FERRETDB_GC_PERCENT,
  PortInUseError,
  assertPortFree,
  ferretdbEnv,
  spawnServer,
  waitForPort,
} from '../../../src/local/servers';

describe('local servers', () => {
  const saved = { PATH: process.env.PATH, OCO_CACHE_DIR: process.env.OCO_CACHE_DIR };
  afterEach(async () => {
    // The empty cache a test made for itself goes with it (the user's own cache is never touched).
    if (process.env.OCO_CACHE_DIR && process.env.OCO_CACHE_DIR !== saved.OCO_CACHE_DIR)
      await rm(process.env.OCO_CACHE_DIR, { recursive: true, force: true });
    process.env.PATH = saved.PATH;
    if (saved.OCO_CACHE_DIR === undefined) delete process.env.OCO_CACHE_DIR;
    else process.env.OCO_CACHE_DIR = saved.OCO_CACHE_DIR;
  });

  it('says which port is taken and how to choose another', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      await expect(assertPortFree(port, 'API, set PORT')).rejects.toThrow(PortInUseError);
      await expect(assertPortFree(port, 'API, set PORT')).rejects.toThrow(
        `Port ${port} (API, set PORT) is already in use`,
      );
    } finally {
      server.close();
    }
  });

  it('explains what to install, or which variables to set, when Go is missing', async () => {
    process.env.OCO_CACHE_DIR = await mkdtemp(path.join(os.tmpdir(), 'oco-empty-cache-'));
    process.env.PATH = '/nonexistent';
    expect(cacheDir()).toBe(process.env.OCO_CACHE_DIR);
    const attempt = ensureBinaries({ temporal: true, ferretdb: false }, () => undefined);
    await expect(attempt).rejects.toThrow(MissingToolchainError);
    await expect(attempt).rejects.toThrow(/to build the Temporal CLI into/);
    await expect(ensureBinaries({ temporal: false, ferretdb: true }, () => undefined)).rejects.toThrow(
      /to build FerretDB into .*Install Go .*MONGODB_URI and TEMPORAL_ADDRESS/s,
    );
  });

  it('says which Go is too old to build the binaries, and how to get one that can', () => {
    expect(goVersionProblem('go1.26.8', 'local')).toBeNull();
    expect(goVersionProblem('go1.25.0', 'local')).toBeNull();
    // Older ones that fetch the toolchain the modules ask for (GOTOOLCHAIN=auto, the default) can.
    expect(goVersionProblem('go1.22.2', 'auto')).toBeNull();
    expect(goVersionProblem('go1.24.3', 'local')).toMatch(/GOTOOLCHAIN=local cannot build them: go 1\.25 or newer/);
    // Debian 12's golang package.
    expect(goVersionProblem('go1.19.8', 'auto')).toMatch(/go1\.19\.8 is too old: go 1\.25 or newer is needed/);
    expect(goVersionProblem('devel go1.27-abcdef', 'auto')).toBeNull();
  });

  it('says a server binary could not be run, rather than ending the process', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'oco-not-executable-'));
    try {
      const binary = path.join(dir, 'server');
      await writeFile(binary, '#!/bin/sh\n', { mode: 0o644 });
      const server = spawnServer('test server', binary, [], () => undefined);
      await expect(waitForPort(9, server.child, server.output, 'The test server', 5_000)).rejects.toThrow(
        /The test server could not be started \(spawn .*EACCES\).*noexec.*cannot run/s,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("sets FerretDB's collector target unless the environment sets its own", () => {
    expect(ferretdbEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', GOGC: FERRETDB_GC_PERCENT });
    expect(ferretdbEnv({ PATH: '/bin', GOGC: '100' })).toEqual({ PATH: '/bin', GOGC: '100' });
    expect(ferretdbEnv({ GOGC: '' }).GOGC).toBe(FERRETDB_GC_PERCENT);
  });
});

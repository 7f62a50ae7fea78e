// Starts the real servers once per test run: FerretDB on PostgreSQL and the Temporal dev server,
// on free ports in a temporary folder (or uses MONGODB_URI / TEMPORAL_ADDRESS when given), bundles
// the workflow code once and compiles the service once. A server that cannot start fails the run
// with its own output.
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { createProcessRecord, processRecordPath } from '../../src/local/leftover-processes';
import { freePorts, startMongoStack, startTemporal, type RunningServer } from '../../src/local/servers';
import { TEST_RUN_PREFIX, sweepEarlierTestRuns } from './leftover-test-servers';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
    temporalAddress: string;
    /** The Temporal Web UI of that server; null when TEMPORAL_ADDRESS is given without TEMPORAL_UI_URL. */
    temporalUiUrl: string | null;
    workflowBundlePath: string;
    /** The service compiled as the deployment image runs it: `<dist>/src/main/<name>.js`. */
    compiledDistPath: string;
  }
}

interface Servers {
  mongoUri: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  workflowBundlePath: string;
  compiledDistPath: string;
  stop(): Promise<void>;
}

// Every integration project (vitest.config.mts) runs this setup; they share one set of servers,
// stopped when the last of them tears down. Vitest runs every project's setup in its main process.
const shared = globalThis as { ocoIntegrationServers?: { users: number; servers: Promise<Servers> } };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const entry = (shared.ocoIntegrationServers ??= { users: 0, servers: startServers() });
  entry.users += 1;
  const servers = await entry.servers;
  project.provide('mongoUri', servers.mongoUri);
  project.provide('temporalAddress', servers.temporalAddress);
  project.provide('temporalUiUrl', servers.temporalUiUrl);
  project.provide('workflowBundlePath', servers.workflowBundlePath);
  project.provide('compiledDistPath', servers.compiledDistPath);
  return async () => {
    entry.users -= 1;
    if (entry.users > 0) return;
    shared.ocoIntegrationServers = undefined;
    await servers.stop();
  };
}

async function startServers(): Promise<Servers> {
  // Servers an interrupted or killed run left running, and its folder (leftover-test-servers.ts).
  const swept = await sweepEarlierTestRuns();
  if (swept) process.stderr.write(`Stopped the servers of ${swept} earlier test run(s) that were cut short.\n`);
  const dir = await mkdtemp(path.join(os.tmpdir(), TEST_RUN_PREFIX));
  // PostgreSQL runs as its own user (it refuses root) and must be able to reach its data folder.
  await chmod(dir, 0o755);
  const servers: RunningServer[] = [];
  const recorded = createProcessRecord(processRecordPath(dir));
  // Vitest exits at once on Ctrl-C, without the teardown below: a process of its own then stops the
  // servers and removes the folder once this one is gone.
  const stopWhenGone = () =>
    spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'stop-left-test-servers.ts'), dir], {
      cwd: process.cwd(),
      detached: true,
      stdio: 'ignore',
    }).unref();
  process.once('exit', stopWhenGone);
  const log = (line: string) => {
    // Building the binaries takes minutes on a fresh machine: always show that progress.
    const building = /^(Building| {2}\.\.\.|Temporal CLI ready|FerretDB ready|Granted)/.test(line);
    if (building || process.env.TEST_SERVER_LOGS) process.stderr.write(`${line}\n`);
  };
  const teardown = async () => {
    process.off('exit', stopWhenGone);
    for (const server of servers.reverse()) await server.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  };
  // Each server as soon as it is spawned, not once it is ready: a run interrupted while one starts
  // (Ctrl-C as PostgreSQL comes up) stops it too, as `npm start` does (before, such a server ran on
  // unrecorded, and no later run could find it).
  const onSpawned = (server: RunningServer) => {
    servers.push(server);
    recorded.add(server.name, server.pid, server.stopSignal);
  };
  // Built while the servers start, and awaited once they are up.
  const builds = [bundleWorkflows(dir), compileService(dir)] as const;
  const built = Promise.all(builds);
  built.catch(() => undefined); // a server's failure comes first: this one must not go unhandled
  try {
    // One draw for the four, so that no two are the same.
    const [postgresPort, mongoPort, temporalPort, temporalUiPort] = (await freePorts(4)) as [
      number,
      number,
      number,
      number,
    ];
    let mongoUri = process.env.MONGODB_URI;
    if (!mongoUri) {
      const stack = await startMongoStack({
        dataDir: path.join(dir, 'mongo'),
        postgresPort,
        mongoPort,
        log,
        onSpawned,
      });
      mongoUri = stack.uri;
    }
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    let temporalUiUrl = process.env.TEMPORAL_UI_URL ?? null;
    if (!temporalAddress) {
      // With its Web UI: a test reads a call's timeline in it through a real browser. Its state in
      // memory: nothing outlives the run, and each workflow costs the server less (startTemporal).
      const temporal = await startTemporal({
        dataDir: path.join(dir, 'temporal'),
        port: temporalPort,
        uiPort: temporalUiPort,
        log,
        inMemory: true,
        onSpawned,
      });
      temporalAddress = temporal.address;
      temporalUiUrl = temporal.uiUrl;
    }
    const [workflowBundlePath, compiledDistPath] = await built;
    return { mongoUri, temporalAddress, temporalUiUrl, workflowBundlePath, compiledDistPath, stop: teardown };
  } catch (err) {
    // Not while either build still writes into the folder.
    await Promise.allSettled(builds);
    await teardown();
    throw err;
  }
}

async function bundleWorkflows(dir: string): Promise<string> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(process.cwd(), 'workflows/index.ts'),
    logger: quietBundlerLogger,
  });
  const workflowBundlePath = path.join(dir, 'workflow-bundle.js');
  await writeFile(workflowBundlePath, bundle.code);
  return workflowBundlePath;
}

/**
 * The service compiled as the image runs it, for the tests that start its processes again and again
 * (the operator command line, the chaos runs, the quick bench): each start costs about 1.4 s less
 * CPU than through tsx, which transforms and maps every module it loads. Without a type check (the
 * static checks make it); `npm start`'s test and the new operator's setup still run the sources
 * through tsx.
 */
async function compileService(dir: string): Promise<string> {
  const root = path.join(dir, 'compiled');
  await mkdir(root);
  // The compiled files find the checkout's packages as the image's find their own.
  await symlink(path.resolve('node_modules'), path.join(root, 'node_modules'), 'dir');
  const dist = path.join(root, 'dist');
  const tsc = require.resolve('typescript/bin/tsc');
  const args = ['-p', 'tsconfig.build.json', '--noCheck', '--outDir', dist, '--sourceMap', 'false'];
  try {
    await promisify(execFile)(process.execPath, [tsc, ...args], { cwd: process.cwd() });
  } catch (err) {
    // tsc says what failed on stdout.
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`compiling the service for the tests failed (tsc ${args.join(' ')}):\n${stdout}${stderr}`, {
      cause: err,
    });
  }
  return dist;
}

const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
  error: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
  log: () => undefined,
};

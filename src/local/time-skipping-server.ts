// Temporal's time-skipping test server for workflow tests: a day of timers runs in seconds. Its
// native binary cannot be downloaded here, but the Java test server from Maven Central can: this
// fetches io.temporal:temporal-test-server with its dependencies once into the cache folder (about
// 33 MB) and writes a wrapper script that @temporalio/testing runs as an `existing-path` executable
// (it passes the port, then any extra arguments).
//
// The tests start a server per file, and per test where a test moves the clock far: a JVM start each
// time, most of whose CPU went to compiling code the server runs for seconds. The wrapper runs it with
// the client compiler only and the serial collector, and with a class-data archive written once from a
// start of the server (Java 17's application CDS): the workflow tests took 74 s instead of 99 s, and
// 111 s of CPU instead of 162 s, on 2 cores; a start opens its port in 0.34 s instead of 0.93 s.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cacheDir } from './binaries';
import { freePort, stopChild, waitForPort } from './servers';

export const TEST_SERVER_VERSION = '1.31.0';

export class MissingJavaError extends Error {
  override readonly name = 'MissingJavaError';
}

function run(command: string, args: string[], cwd?: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (err) => resolve({ code: 127, output: err.message }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** The wrapper script's path; the server fetched, and its class-data archive written, on first use. */
export async function ensureTimeSkippingServer(
  progress: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string> {
  const home = path.join(cacheDir(), `temporal-test-server-${TEST_SERVER_VERSION}`);
  if (!existsSync(path.join(home, 'lib'))) await fetchServer(home, progress);
  // An archive serves only the Java that wrote it: another one (an upgrade) writes it again.
  const java = (await requireTool('java', ['-version'])).trim();
  const archive = path.join(home, 'classes.jsa');
  const stamp = `${archive}.java`;
  const current = existsSync(archive) && (await readFile(stamp, 'utf8').catch(() => '')) === java;
  const archived = current || (await writeClassArchive(home, archive, progress));
  if (archived && !current) await writeFile(stamp, java);
  return writeWrapper(home, archived ? archive : null);
}

/** The JVM's options for a server that lives for seconds to minutes (see the top of this file). */
const JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

const javaArgs = (home: string, extra: string[]) => [
  ...JVM_OPTIONS,
  ...extra,
  '-cp',
  `${path.join(home, 'lib')}/*`,
  'io.temporal.testserver.TestServer',
];

/**
 * Written again whenever its text changes (a cache made by an earlier version of this file, an archive
 * written or not), through a rename: a run reading it meanwhile sees the old script or the new one,
 * never half of one. Without an archive it names none: Java 17 given one it cannot use would load even
 * its own classes without its default archive.
 */
async function writeWrapper(home: string, archive: string | null): Promise<string> {
  const wrapper = path.join(home, 'temporal-test-server');
  const args = javaArgs(home, archive ? [`-XX:SharedArchiveFile=${archive}`, '-Xlog:cds=off'] : []);
  // `exec`: the SDK stops the server by signalling this process, which must then be Java itself.
  const text = `#!/bin/sh\nexec java ${args.map((a) => `"${a}"`).join(' ')} "$@"\n`;
  if ((await readFile(wrapper, 'utf8').catch(() => '')) === text) return wrapper;
  const staged = `${wrapper}.${process.pid}.tmp`;
  await writeFile(staged, text);
  await chmod(staged, 0o755);
  await rename(staged, wrapper);
  return wrapper;
}

/**
 * Starts the server once with Java's archiving at exit, and stops it (SIGTERM: Java exits through its
 * shutdown, writing the archive) once its port is open. Answers whether the archive was written whole;
 * without it the tests only start their servers more slowly, and the next run tries again.
 */
async function writeClassArchive(home: string, archive: string, progress: (line: string) => void): Promise<boolean> {
  const staged = `${archive}.${process.pid}.tmp`;
  const port = await freePort();
  const child = spawn(
    'java',
    [...javaArgs(home, [`-XX:ArchiveClassesAtExit=${staged}`, '-Xlog:cds=off']), String(port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const spawnFailed = new Promise<never>((_, reject) => child.once('error', reject));
  try {
    await Promise.race([waitForPort(port, child, () => output, 'the time-skipping test server', 60_000), spawnFailed]);
    await stopChild(child, 30_000);
    // 143: Java's own exit on SIGTERM, after its shutdown wrote the archive; a kill leaves half of one.
    if (child.exitCode !== 143 && child.exitCode !== 0)
      throw new Error(`Java ended with ${child.exitCode ?? child.signalCode}. Its output:\n${output}`);
    if (!existsSync(staged)) throw new Error(`Java wrote no archive. Its output:\n${output}`);
    await rename(staged, archive);
    return true;
  } catch (err) {
    progress(`The test server's class-data archive was not written: ${err instanceof Error ? err.message : err}`);
    await stopChild(child, 5_000, 'SIGKILL');
    await rm(staged, { force: true });
    return false;
  }
}

/** Runs `tool args` and answers its output; missing or failing, a MissingJavaError saying what to install. */
async function requireTool(tool: 'java' | 'mvn', args: string[]): Promise<string> {
  const { code, output } = await run(tool, args);
  if (code !== 0) {
    throw new MissingJavaError(
      `${tool} is needed for Temporal's time-skipping test server (the workflow tests use it; Maven fetches it once): ` +
        'install Java 17 or newer and Maven (Debian: apt-get install openjdk-17-jre-headless maven).',
    );
  }
  return output;
}

async function fetchServer(home: string, progress: (line: string) => void): Promise<void> {
  await requireTool('java', ['-version']);
  await requireTool('mvn', ['-v']);
  progress(`Fetching Temporal's Java test server ${TEST_SERVER_VERSION} with Maven (about 33 MB, once)...`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'oco-test-server-'));
  try {
    const pom = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.oco</groupId><artifactId>temporal-test-server-fetch</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${TEST_SERVER_VERSION}</version></dependency>
  </dependencies>
</project>
`;
    await writeFile(path.join(work, 'pom.xml'), pom);
    const lib = path.join(work, 'lib');
    const fetched = await run(
      'mvn',
      ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${lib}`, '-DincludeScope=runtime'],
      work,
    );
    if (fetched.code !== 0) throw new Error(`mvn could not fetch the test server:\n${fetched.output.slice(-4000)}`);
    const staged = path.join(work, 'home');
    await mkdir(staged);
    await rename(lib, path.join(staged, 'lib'));
    await mkdir(path.dirname(home), { recursive: true });
    await rm(home, { recursive: true, force: true });
    // Moved into place last, so an interrupted fetch never leaves a half-made server behind.
    await rename(staged, home);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  progress(`Time-skipping test server fetched into ${home}`);
}

// Temporal's time-skipping test server for workflow tests: a day of timers runs in seconds. Its
// native binary cannot be downloaded here, but the Java test server from Maven Central can: this
// fetches io.temporal:temporal-test-server with its dependencies once into the cache folder (about
// 33 MB) and writes a wrapper script that @temporalio/testing runs as an `existing-path` executable
// (it passes the port, then any extra arguments).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cacheDir } from './binaries';

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

/** The wrapper script's path; fetched and written on first use. */
export async function ensureTimeSkippingServer(
  progress: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string> {
  const home = path.join(cacheDir(), `temporal-test-server-${TEST_SERVER_VERSION}`);
  const wrapper = path.join(home, 'temporal-test-server');
  if (existsSync(wrapper)) return wrapper;

  for (const [tool, args] of [
    ['java', ['-version']],
    ['mvn', ['-v']],
  ] as const) {
    if ((await run(tool, [...args])).code !== 0) {
      throw new MissingJavaError(
        `${tool} is needed once to fetch Temporal's time-skipping test server (the workflow tests use it): ` +
          'install Java 17 or newer and Maven (Debian: apt-get install openjdk-17-jre-headless maven).',
      );
    }
  }
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
    const script = path.join(staged, 'temporal-test-server');
    // `exec`: the SDK stops the server by signalling this process, which must then be Java itself.
    await writeFile(
      script,
      `#!/bin/sh\nexec java -cp "${path.join(home, 'lib')}/*" io.temporal.testserver.TestServer "$@"\n`,
    );
    await chmod(script, 0o755);
    await mkdir(path.dirname(home), { recursive: true });
    await rm(home, { recursive: true, force: true });
    // Moved into place last, so an interrupted fetch never leaves a half-made server behind.
    await rename(staged, home);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  progress(`Time-skipping test server ready: ${wrapper}`);
  return wrapper;
}

// Makes sure the Temporal CLI and FerretDB binaries exist in a cache folder outside the repository,
// building them with the Go toolchain when missing. `npm run setup` runs it on its own; `npm start`
// and the test suite's global setup call ensureBinaries() before starting servers. The Temporal
// server itself (for `npm run bench -- --temporal-postgres`) is built only when asked for:
// ensureTemporalServerBinaries().
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile, chmod, rename } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const FERRETDB_VERSION = 'v1.24.2';
/** go.temporal.io/server: the real server (not the CLI's dev server), run on PostgreSQL by the bench. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';

export interface Binaries {
  temporal: string;
  ferretdb: string;
}

/** `OCO_CACHE_DIR`, else `$XDG_CACHE_HOME/outbound-call-orchestrator`, else `~/.cache/...`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OCO_CACHE_DIR) return path.resolve(env.OCO_CACHE_DIR);
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'outbound-call-orchestrator');
}

export class MissingToolchainError extends Error {
  override readonly name = 'MissingToolchainError';
}

type Progress = (line: string) => void;

export async function ensureBinaries(
  needs: { temporal: boolean; ferretdb: boolean },
  progress: Progress = (line) => process.stderr.write(`${line}\n`),
): Promise<Partial<Binaries>> {
  const binDir = path.join(cacheDir(), 'bin', process.platform + '-' + process.arch);
  const result: Partial<Binaries> = {};
  const temporal = path.join(binDir, `temporal-${TEMPORAL_CLI_VERSION}`);
  const ferretdb = path.join(binDir, `ferretdb-${FERRETDB_VERSION}`);
  if (needs.temporal) {
    if (!existsSync(temporal)) await buildTemporal(binDir, temporal, progress);
    result.temporal = temporal;
  }
  if (needs.ferretdb) {
    if (!existsSync(ferretdb)) await buildFerretDb(ferretdb, progress);
    result.ferretdb = ferretdb;
  }
  return result;
}

async function buildTemporal(binDir: string, target: string, progress: Progress): Promise<void> {
  await requireGo('the Temporal CLI');
  const gobin = await mkdtemp(path.join(os.tmpdir(), 'oco-temporal-'));
  progress(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with Go (about 3 minutes on 2 cores, once)...`);
  try {
    await run('go', ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' },
      progress,
    });
    await mkdir(binDir, { recursive: true });
    // Rename last so that an interrupted build never leaves a half-written binary in the cache; under a
    // name of this process's own, so that two first starts building at once each rename a whole one.
    const partial = `${target}.partial-${process.pid}`;
    await cp(path.join(gobin, 'temporal'), partial);
    await chmod(partial, 0o755);
    await rename(partial, target);
  } finally {
    await rm(gobin, { recursive: true, force: true });
  }
  progress(`Temporal CLI ready: ${target}`);
}

// `go install github.com/FerretDB/FerretDB@v1.24.2` fails (the module proxy refuses the version
// list go install reads), and a plain module build panics without the generated version file.
// So: download the module, copy it somewhere writable, write build/version/version.txt, build.
async function buildFerretDb(target: string, progress: Progress): Promise<void> {
  await requireGo('FerretDB');
  progress(`Building FerretDB ${FERRETDB_VERSION} with Go (about 70 seconds on 2 cores, once)...`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'oco-ferretdb-'));
  try {
    const json = await run('go', ['mod', 'download', '-json', `github.com/FerretDB/FerretDB@${FERRETDB_VERSION}`], {
      cwd: work,
      progress,
      capture: true,
    });
    const moduleDir = (JSON.parse(json) as { Dir?: string }).Dir;
    if (!moduleDir) throw new Error(`go mod download gave no module directory: ${json}`);
    const src = path.join(work, 'src');
    await cp(moduleDir, src, { recursive: true });
    await run('chmod', ['-R', 'u+w', src], { progress });
    await writeFile(path.join(src, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
    await mkdir(path.dirname(target), { recursive: true });
    // As for the Temporal CLI: a whole binary, renamed into place under a name of this process's own.
    const partial = `${target}.partial-${process.pid}`;
    await run('go', ['build', '-o', partial, './cmd/ferretdb'], { cwd: src, progress });
    await rename(partial, target);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  progress(`FerretDB ready: ${target}`);
}

export interface TemporalServerBinaries {
  /** The server (`server start`). */
  server: string;
  /** temporal-sql-tool (go.temporal.io/server/cmd/tools/sql): creates databases and their schemas. */
  sqlTool: string;
  /** The PostgreSQL schemas of that version: `temporal/versioned` and `visibility/versioned` under it. */
  schemaDir: string;
}

/**
 * The Temporal server and its SQL tool, built with Go into the cache (about 2 minutes on 2 cores,
 * once), with the version's PostgreSQL schemas copied beside them so that nothing later depends on
 * Go's module cache. The folder is assembled under another name and renamed last: it exists only
 * whole.
 */
export async function ensureTemporalServerBinaries(
  progress: Progress = (line) => process.stderr.write(`${line}\n`),
): Promise<TemporalServerBinaries> {
  const dir = path.join(
    cacheDir(),
    'bin',
    `${process.platform}-${process.arch}`,
    `temporal-server-${TEMPORAL_SERVER_VERSION}`,
  );
  const binaries = {
    server: path.join(dir, 'temporal-server'),
    sqlTool: path.join(dir, 'temporal-sql-tool'),
    schemaDir: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
  if (existsSync(dir)) return binaries;
  await requireGo(`the Temporal server ${TEMPORAL_SERVER_VERSION} (only --temporal-postgres needs it)`);
  progress(`Building the Temporal server ${TEMPORAL_SERVER_VERSION} with Go (about 2 minutes on 2 cores, once)...`);
  const gobin = await mkdtemp(path.join(os.tmpdir(), 'oco-temporal-server-'));
  const partial = `${dir}.partial-${process.pid}`;
  try {
    const module = `go.temporal.io/server@${TEMPORAL_SERVER_VERSION}`;
    await run(
      'go',
      [
        'install',
        `go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION}`,
        `go.temporal.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
      ],
      { env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' }, progress },
    );
    // go install has just downloaded the module: this only names its folder in the module cache.
    const json = await run('go', ['mod', 'download', '-json', module], { cwd: gobin, progress, capture: true });
    const moduleDir = (JSON.parse(json) as { Dir?: string }).Dir;
    if (!moduleDir) throw new Error(`go mod download gave no module directory: ${json}`);
    const schemas = path.join(moduleDir, 'schema', 'postgresql', 'v12');
    for (const sub of ['temporal', 'visibility'])
      if (!existsSync(path.join(schemas, sub, 'versioned')))
        throw new Error(`${module} has no ${path.join(schemas, sub, 'versioned')}`);
    await rm(partial, { recursive: true, force: true });
    await mkdir(partial, { recursive: true });
    // go install names the binaries after their folders: cmd/server -> server, cmd/tools/sql -> sql.
    await cp(path.join(gobin, 'server'), path.join(partial, 'temporal-server'));
    await cp(path.join(gobin, 'sql'), path.join(partial, 'temporal-sql-tool'));
    await chmod(path.join(partial, 'temporal-server'), 0o755);
    await chmod(path.join(partial, 'temporal-sql-tool'), 0o755);
    await cp(schemas, path.join(partial, 'schema', 'postgresql', 'v12'), { recursive: true });
    // The module cache is read-only: make the copy writable so that the cache can be deleted.
    await run('chmod', ['-R', 'u+w', path.join(partial, 'schema')], { progress, capture: true });
    await rename(partial, dir);
  } finally {
    await rm(gobin, { recursive: true, force: true });
    await rm(partial, { recursive: true, force: true });
  }
  progress(`Temporal server ready: ${dir}`);
  return binaries;
}

/** The Go the modules built here ask for: the Temporal CLI v1.5.1's go.mod says 1.25.0 (FerretDB's 1.24). */
const GO_MODULES_NEED: readonly [number, number] = [1, 25];
/** The first Go that fetches the toolchain a module asks for by itself (unless GOTOOLCHAIN=local). */
const GO_FETCHES_TOOLCHAINS: readonly [number, number] = [1, 21];

/**
 * Why the Go found cannot build the binaries, or null when it can: `goVersion` and `goToolchain` as
 * `go env GOVERSION GOTOOLCHAIN` prints them (`go1.26.8`, `auto`).
 */
export function goVersionProblem(goVersion: string, goToolchain: string): string | null {
  const match = /^go(\d+)\.(\d+)/.exec(goVersion.trim());
  if (!match) return null; // a development build: let the build say what it lacks
  const version = [Number(match[1]), Number(match[2])];
  const atLeast = ([major, minor]: readonly [number, number]) =>
    version[0]! > major || (version[0] === major && version[1]! >= minor);
  const needed = `go ${GO_MODULES_NEED.join('.')} or newer`;
  if (!atLeast(GO_FETCHES_TOOLCHAINS))
    return `${goVersion.trim()} is too old: ${needed} is needed (go ${GO_FETCHES_TOOLCHAINS.join('.')} or newer fetches it by itself)`;
  if (!atLeast(GO_MODULES_NEED) && goToolchain.trim().startsWith('local'))
    return `${goVersion.trim()} with GOTOOLCHAIN=local cannot build them: ${needed} is needed (or GOTOOLCHAIN=auto, which fetches it)`;
  return null;
}

/** `what`: the binary about to be built, named in the message. */
async function requireGo(what: string): Promise<void> {
  const instead =
    'Install Go (https://go.dev/doc/install), or point the service at servers you already run with ' +
    'MONGODB_URI and TEMPORAL_ADDRESS (see README).';
  let env: string;
  try {
    env = await run('go', ['env', 'GOVERSION', 'GOTOOLCHAIN'], { capture: true, progress: () => undefined });
  } catch {
    throw new MissingToolchainError(
      `The Go toolchain (go ${GO_MODULES_NEED.join('.')} or newer) is needed once, to build ${what} into ` +
        `${cacheDir()}. ${instead}`,
    );
  }
  const [goVersion = '', goToolchain = ''] = env.split('\n');
  const problem = goVersionProblem(goVersion, goToolchain);
  if (problem) throw new MissingToolchainError(`Building ${what} into ${cacheDir()}: ${problem}. ${instead}`);
}

/**
 * Runs a build command; its stdout when `capture`. The command is stopped (SIGTERM) should this process
 * exit first: `npm start` stopped during a first build exits from its own signal handler, and `go`
 * would otherwise build on with nobody to rename its result into place.
 */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; progress: Progress; capture?: boolean },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env });
    const stopWithThisProcess = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    };
    process.once('exit', stopWithThisProcess);
    for (const ended of ['close', 'error'] as const)
      child.once(ended, () => process.removeListener('exit', stopWithThisProcess));
    let stdout = '';
    let stderr = '';
    const started = Date.now();
    let lastProgress = started;
    // Compiling prints nothing for minutes after the last "go: downloading": show it is still working.
    const heartbeat = options.capture
      ? undefined
      : setInterval(() => {
          if (Date.now() - lastProgress < 10_000) return;
          lastProgress = Date.now();
          options.progress(`  ... still building (${Math.round((Date.now() - started) / 1000)} s)`);
        }, 2_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      stderr += text;
      // go prints one "downloading" line per module: show a heartbeat, not hundreds of lines.
      if (!options.capture && Date.now() - lastProgress > 5_000) {
        lastProgress = Date.now();
        const last = text.trim().split('\n').pop();
        if (last) options.progress(`  ... ${last}`);
      }
    });
    child.on('error', (err) => {
      clearInterval(heartbeat);
      reject(err);
    });
    child.on('close', (code) => {
      clearInterval(heartbeat);
      if (code === 0) resolve(stdout);
      // `go mod download -json` says why it failed (no route to the module proxy) on stdout.
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${(stderr + stdout).slice(-4000)}`));
    });
  });
}

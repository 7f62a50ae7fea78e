// What `npm run build` makes for the image runs with plain `node`: tsc's JavaScript loads every module
// of each entry point and needs only production dependencies (the image installs no others), and the
// workflow bundle is written ahead of time. Emits without a type check (`npm test`'s static checks
// type-check the same files; the JavaScript is the same) into a temporary folder.
import { execFile, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorkflowBundle } from '../../../scripts/build-workflow-bundle';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ENTRY_POINTS = ['api', 'worker', 'emulator', 'admin'] as const;

let dir = '';
let dist = '';

/** Runs a compiled entry point with only PATH set; answers its exit code and output. */
function runCompiled(
  entry: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(dist, 'src', 'main', `${entry}.js`), ...args], {
      cwd: dir,
      // An empty data folder: no local stack's settings are found, so a missing variable stops it.
      env: { PATH: process.env.PATH, OCO_DATA_DIR: path.join(dir, 'data'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Every package the compiled code of `entry` requires, with the chain of files that leads to it. */
async function packagesRequiredBy(entry: string): Promise<Map<string, string>> {
  const packages = new Map<string, string>(); // package -> entry -> ... -> the file requiring it
  const requiredBy = new Map<string, string>(); // file -> the file that first required it
  const chain = (file: string): string => {
    const parent = requiredBy.get(file);
    return `${parent ? `${chain(parent)} -> ` : ''}${path.relative(dist, file)}`;
  };
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith('.js')) continue;
    const code = await readFile(file, 'utf8');
    // tsc writes an import's require with double quotes; a require in the source (the CLI loads each
    // command's module when it runs) keeps the source's single ones.
    for (const [, , specifier] of code.matchAll(/\brequire\((["'])([^"']+)\1\)/g)) {
      if (specifier!.startsWith('.')) {
        const base = path.resolve(path.dirname(file), specifier!);
        const target = [`${base}.js`, path.join(base, 'index.js'), base].find(
          (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
        );
        expect(target, `${path.relative(dist, file)} requires ${specifier}`).toBeDefined();
        if (!requiredBy.has(target!) && target !== entry) requiredBy.set(target!, file);
        queue.push(target!);
      } else if (!isBuiltin(specifier!)) {
        const parts = specifier!.split('/');
        const name = specifier!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
        if (!packages.has(name)) packages.set(name, chain(file));
      }
    }
  }
  return packages;
}

describe('the compiled build', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'oco-compiled-'));
    dist = path.join(dir, 'dist');
    // The compiled files find the checkout's packages as they would find the image's.
    await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    await promisify(execFile)(
      process.execPath,
      [
        path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        ...['-p', 'tsconfig.build.json', '--noCheck', '--outDir', dist, '--sourceMap', 'false'],
      ],
      { cwd: ROOT },
    );
  }, 60_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(ENTRY_POINTS)('%s needs production dependencies only', async (entry) => {
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const required = await packagesRequiredBy(path.join(dist, 'src', 'main', `${entry}.js`));
    const missing = [...required].filter(([name]) => !(name in manifest.dependencies));
    expect(missing.map(([name, by]) => `${name}, required by ${by}`)).toEqual([]);
  });

  // Each starts Node on the compiled files (two here, two below): on two cores busy with the rest of the
  // suite, a start has taken longer than the unit tests' default 5 s.
  it('loads every module of the API and the worker, and stops at a missing setting', async () => {
    for (const entry of ['api', 'worker']) {
      const { code, output } = await runCompiled(entry);
      expect(output).toContain('MONGODB_URI is required');
      expect(code).toBe(1);
    }
  }, 30_000);

  it('starts the emulator and answers the operator command line', async () => {
    const admin = await runCompiled('admin', ['--help']);
    expect(admin.output).toContain('Usage: oco');
    expect(admin.code).toBe(0);

    const child = spawn(process.execPath, [path.join(dist, 'src', 'main', 'emulator.js')], {
      cwd: dir,
      env: { PATH: process.env.PATH, EMULATOR_PORT: '0', EMULATOR_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        const timer = setTimeout(() => reject(new Error(`no emulator within 15 s:\n${output}`)), 15_000);
        const keep = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /listening on (http:\/\/\S+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        };
        child.stdout.on('data', keep);
        child.stderr.on('data', keep);
        child.once('exit', (code) => reject(new Error(`the emulator exited with ${code}:\n${output}`)));
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('writes the workflow bundle ahead of time', async () => {
    const { file, bytes } = await buildWorkflowBundle(path.join(dir, 'workflow-bundle.js'));
    expect(bytes).toBeGreaterThan(100_000);
    const code = await readFile(file, 'utf8');
    for (const workflow of ['phoneCallWorkflow', 'teamPacerWorkflow', 'deliverWebhookEventsWorkflow']) {
      expect(code).toContain(workflow);
    }
  }, 60_000);
});

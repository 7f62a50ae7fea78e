// `npm run bench -- --quick` once, so that the harness cannot rot: on the suite's servers
// (MONGODB_URI, TEMPORAL_ADDRESS and the suite's workflow bundle) and its compiled build (`--dist`:
// building one would cost the suite time), with its JSON file in a temporary folder and nothing
// appended to bench/results.md. It asserts that every default scenario ran and that the JSON is
// well formed, never how fast anything was: a budget not met is a figure, not a failure.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { selectedScenarios } from '../../bench/run';
import { benchEnv, ROOT } from '../helpers/bench';

let outDir: string;

beforeAll(async () => {
  outDir = await mkdtemp(path.join(os.tmpdir(), 'oco-bench-test-'));
});

afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

function runQuickBench(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const args = ['--quick', '--dist', inject('compiledDistPath'), '--no-append', '--out-dir', outDir];
    const child = spawn('npm', ['run', '-s', 'bench', '--', ...args], {
      cwd: ROOT,
      env: benchEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

interface Figure {
  name: string;
  value: number | null;
  unit: string;
  baseline?: number | null;
  ratio?: number | null;
  budget?: string;
  met?: boolean;
}

it('runs every default scenario of the quick bench and writes a well-formed JSON result', async () => {
  const { code, output } = await runQuickBench();
  process.stdout.write(output);
  expect(code, output).toBe(0);
  const files = (await readdir(outDir)).filter((f) => f.endsWith('.json'));
  expect(files, output).toHaveLength(1);
  const report = JSON.parse(await readFile(path.join(outDir, files[0]!), 'utf8'));

  expect(report.quick).toBe(true);
  expect(Date.parse(report.startedAt)).toBeLessThanOrEqual(Date.parse(report.finishedAt));
  expect(report.machine).toMatchObject({ cores: expect.any(Number), memoryGiB: expect.any(Number) });
  expect(report.machine.node).toBe(process.version);
  expect(report.servers.mongodb.server).toEqual(expect.any(String));
  expect(report.servers.temporal.serverVersion).toEqual(expect.any(String));

  const defaults = selectedScenarios({ scenarios: [], all: false }).map((s) => s.name);
  expect(report.scenarios.map((s: { name: string }) => s.name)).toEqual(defaults);
  for (const scenario of report.scenarios) {
    expect(scenario.error, `${scenario.name}: ${scenario.error}\n${output}`).toBeUndefined();
    expect(scenario.figures.length, scenario.name).toBeGreaterThan(0);
    expect(Object.keys(scenario.rss.peakMiB).sort()).toEqual(['api', 'baselineWorker', 'emulator', 'worker']);
    // Where the cores went: each process the bench started, none more than the machine; the suite's
    // servers are not the bench's, so they have no column.
    const cpu = scenario.cpu as { seconds: Record<string, number | null>; machineSeconds: number };
    for (const name of ['api', 'worker', 'emulator', 'baselineWorker'])
      expect(cpu.seconds[name], `${scenario.name}: CPU of ${name}`).toBeGreaterThanOrEqual(0);
    expect(cpu.seconds.temporal).toBeNull();
    expect(cpu.seconds.postgres).toBeNull();
    expect(cpu.machineSeconds).toBeGreaterThan(0);
    expect(cpu.seconds.worker! + cpu.seconds.api!).toBeLessThanOrEqual(cpu.machineSeconds + 1);
    for (const f of scenario.figures as Figure[]) {
      expect(f.name).toEqual(expect.any(String));
      expect(f.unit).toEqual(expect.any(String));
      expect(typeof f.value === 'number' || f.value === null, `${f.name}: ${f.value}`).toBe(true);
      if (f.baseline !== undefined) expect('ratio' in f, f.name).toBe(true);
      if (f.budget !== undefined) expect(typeof f.met, f.name).toBe('boolean');
    }
  }
  // Every budget of issue 16 is judged: figures with a baseline beside them, and the absolute ones.
  const judged = report.scenarios.flatMap((s: { figures: Figure[] }) => s.figures.filter((f) => f.budget));
  expect(judged.length).toBeGreaterThanOrEqual(8);
  expect(judged.filter((f: Figure) => typeof f.baseline === 'number').length).toBeGreaterThanOrEqual(5);
}, 360_000);

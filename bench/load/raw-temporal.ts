// The baselines' load, from a process of its own as autocannon is for the API: raw Temporal client
// calls against the bench-only worker's task queue (bench/baseline/), optionally with one MongoDB
// insert per start. Run as `node --import tsx bench/load/raw-temporal.ts '<RawLoad as JSON>'`; the
// last line it prints is its RawLoadResult as JSON. runRawLoad() below does exactly that.
import path from 'node:path';
import { Connection, Client, type WorkflowHandle } from '@temporalio/client';
import mongoose from 'mongoose';
import { runChildForJson } from './child-json';
import { runConcurrent, summarize, type Summary } from './stats';

interface Common {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** Workflow ids are `<idPrefix>-<i>`: unique per run. */
  idPrefix: string;
  count: number;
  concurrency: number;
}

export type RawLoad =
  /** Starts of the no-op workflow; with `mongoUri`, one insert into `bench_raw_inserts` before each. */
  | (Common & {
      mode: 'starts';
      mongoUri?: string;
      /**
       * Each start's delay (ms): the server holds the workflow's first task until then, as it does a
       * far-ahead call's (src/calls/dispatch.ts), so that neither side runs a workflow task meanwhile.
       */
      startDelayMs?: number;
    })
  /** Workflows sleeping until one instant `leadMs` after the first start, then running one activity. */
  | (Common & { mode: 'schedule'; leadMs: number })
  /** Workflows running `activities` + `localActivities` no-op activities, until every one has closed. */
  | (Common & { mode: 'activities'; activities: number; localActivities: number });

export interface RawLoadResult {
  mode: RawLoad['mode'];
  ok: number;
  errors: string[];
  /** starts: the starts' time; activities: first start to last close; schedule: the starts' time. */
  seconds: number;
  /** starts: starts per second; activities: workflows closed per second. */
  perSecond: number;
  /** starts: each start (and insert). */
  latencyMs?: Summary;
  /** schedule: when each activity ran, after the instant. */
  latenessMs?: Summary;
  dueAt?: number;
}

async function run(load: RawLoad): Promise<RawLoadResult> {
  const connection = await Connection.connect({ address: load.temporalAddress });
  const client = new Client({ connection, namespace: load.namespace });
  const mongo =
    load.mode === 'starts' && load.mongoUri
      ? await mongoose.mongo.MongoClient.connect(load.mongoUri, { maxPoolSize: 20 })
      : null;
  const common = (i: number) => ({ taskQueue: load.taskQueue, workflowId: `${load.idPrefix}-${i}` });
  try {
    if (load.mode === 'starts') {
      const inserts = mongo?.db().collection('bench_raw_inserts');
      const r = await runConcurrent(load.count, load.concurrency, async (i) => {
        await inserts?.insertOne({
          teamId: 'bench',
          toPhoneNumber: '+14155550000',
          promptVariableValues: [{ key: 'firstName', value: `P${i}` }],
          status: 'queued',
          createdAt: new Date(),
        });
        await client.workflow.start('noopWorkflow', {
          ...common(i),
          args: [],
          ...(load.startDelayMs ? { startDelay: load.startDelayMs } : {}),
        });
      });
      return {
        mode: load.mode,
        ok: r.latenciesMs.length,
        errors: r.errors.slice(0, 5),
        seconds: r.seconds,
        perSecond: r.latenciesMs.length / r.seconds,
        latencyMs: summarize(r.latenciesMs),
      };
    }
    if (load.mode === 'schedule') {
      const dueAt = Date.now() + load.leadMs;
      const handles: WorkflowHandle[] = [];
      const r = await runConcurrent(load.count, load.concurrency, async (i) => {
        handles.push(await client.workflow.start('sleepThenActivityWorkflow', { ...common(i), args: [dueAt] }));
      });
      if (Date.now() > dueAt) r.errors.push(`the starts took longer than the lead of ${load.leadMs} ms`);
      const ranAt = await Promise.all(handles.map((h) => h.result().catch(() => null) as Promise<number | null>));
      const lateness = ranAt.filter((t): t is number => t !== null).map((t) => t - dueAt);
      return {
        mode: load.mode,
        ok: lateness.length,
        errors: r.errors.slice(0, 5),
        seconds: r.seconds,
        perSecond: lateness.length / r.seconds,
        latenessMs: summarize(lateness),
        dueAt,
      };
    }
    const started = Date.now();
    const handles: WorkflowHandle[] = [];
    const r = await runConcurrent(load.count, load.concurrency, async (i) => {
      const args = [{ activities: load.activities, localActivities: load.localActivities }];
      handles.push(await client.workflow.start('activitiesWorkflow', { ...common(i), args }));
    });
    await Promise.all(handles.map((h) => h.result().catch((err: unknown) => r.errors.push(String(err)))));
    let lastClose = started;
    const closes = await runConcurrent(handles.length, 16, async (i) => {
      const closed = (await handles[i]!.describe()).closeTime;
      if (closed) lastClose = Math.max(lastClose, closed.getTime());
    });
    const seconds = (lastClose - started) / 1000;
    return {
      mode: load.mode,
      ok: handles.length - r.errors.length,
      errors: [...r.errors, ...closes.errors].slice(0, 5),
      seconds,
      perSecond: seconds > 0 ? handles.length / seconds : 0,
    };
  } finally {
    await mongo?.close();
    await connection.close();
  }
}

/** Runs one raw load in a child process and answers its result. */
export function runRawLoad(load: RawLoad): Promise<RawLoadResult> {
  return runChildForJson<RawLoadResult>(
    ['--import', 'tsx', __filename, JSON.stringify(load)],
    `raw load (${load.mode})`,
    path.resolve(__dirname, '..', '..'),
  );
}

if (require.main === module) {
  run(JSON.parse(process.argv[2] ?? '{}') as RawLoad).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`raw load failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}

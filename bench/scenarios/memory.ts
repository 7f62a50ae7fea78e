// memory: the worker process's RSS with N calls sleeping (scheduled far ahead, each workflow started;
// since 2026-11-27 the server holds the first task of each until it is due, a start delay, so the
// worker holds none of them, where before it held up to its cache's 500 waiting on their timers). The
// calls the create and batch scenarios left count; more are created
// (batches through the API) up to N. Measured once the worker has gone idle (every first workflow
// task done); the API's and emulator's RSS at that moment are reported beside it. With two workers
// (--temporal-postgres) each is judged against the budget: each holds its own cache.
import { BUDGETS, FAR_AHEAD_MS, apiRequest, conversationNumber, expectStatus, figure, ms, sleep } from '../scenario';
import type { BenchContext, BenchScenario } from '../scenario';
import { cpuSeconds } from '../load/cpu';
import { rssMiB } from '../load/rss';

async function sleepingCalls(ctx: BenchContext): Promise<number> {
  return ctx.temporal.workflow
    .count(`WorkflowType = 'phoneCallWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${ctx.taskQueue}'`)
    .then((r) => r.count);
}

/** Waits until `pid` used under `share` of a core over each of `windows` consecutive seconds. */
async function waitForIdle(pid: number, timeoutMs: number, share = 0.1, windows = 3): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  let before = cpuSeconds(pid);
  while (Date.now() < deadline) {
    await sleep(1000);
    const now = cpuSeconds(pid);
    if (now === null || before === null) return false;
    quiet = now - before < share ? quiet + 1 : 0;
    before = now;
    if (quiet >= windows) return true;
  }
  return false;
}

export const memoryScenario: BenchScenario = {
  name: 'memory',
  description: 'worker RSS with N sleeping calls (budget 512 MiB at 10,000)',
  defaultOn: true,
  params: {
    sleepingCalls: { full: 10_000, quick: 50, description: 'calls sleeping on their timers at least' },
  },
  async run(ctx) {
    const target = ctx.params.sleepingCalls!;
    let sleeping = await sleepingCalls(ctx);
    const later = new Date(Date.now() + FAR_AHEAD_MS).toISOString();
    for (let made = 0; sleeping + made < target;) {
      const size = Math.min(10_000, target - sleeping - made);
      ctx.log(`memory: ${sleeping + made} sleeping calls; creating ${size} more`);
      const answer = await apiRequest(ctx, ctx.team.key, 'POST', '/v1/phoneCalls/batch', {
        phoneCalls: Array.from({ length: size }, (_, i) => ({
          teamId: ctx.team.teamId,
          callTemplateId: ctx.team.templateId,
          toPhoneNumber: conversationNumber(made + i),
          promptVariableValues: [{ key: 'firstName', value: `M${made + i}` }],
          callDelayedUntil: later,
        })),
      });
      expectStatus(answer, 201, 'POST /v1/phoneCalls/batch');
      made += size;
    }
    const workers = ctx.pids.worker2 === null ? [ctx.pids.worker] : [ctx.pids.worker, ctx.pids.worker2];
    const idle = await Promise.all(workers.map((pid) => waitForIdle(pid, ctx.quick ? 60_000 : 300_000)));
    sleeping = await sleepingCalls(ctx);
    const peaks = workers.map(() => 0);
    for (let i = 0; i < 4; i += 1) {
      workers.forEach((pid, w) => (peaks[w] = Math.max(peaks[w]!, rssMiB(pid) ?? Number.NaN)));
      await sleep(250);
    }
    const note = (w: number) => (idle[w] ? undefined : 'the worker never went idle: measured while it still worked');
    return [
      // Held by the server until due (a start delay): the worker has none of them in memory. What the
      // worker holds while calls run shows in each scenario's RSS table.
      figure(`worker RSS with ${sleeping} sleeping calls (held by the server until due)`, ms(peaks[0]!), 'MiB', {
        budget: BUDGETS.workerRss,
        note: note(0),
      }),
      ...(workers.length > 1
        ? [
            figure(`second worker RSS at that moment`, ms(peaks[1]!), 'MiB', {
              budget: BUDGETS.workerRss,
              note: note(1),
            }),
          ]
        : []),
      figure(`API RSS at that moment`, ms(rssMiB(ctx.pids.api) ?? Number.NaN), 'MiB'),
      figure(`emulator RSS at that moment`, ms(rssMiB(ctx.pids.emulator) ?? Number.NaN), 'MiB'),
    ];
  },
};

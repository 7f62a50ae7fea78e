// schedule: N calls due at the same instant (one batch, created well before it), and how late each
// dial reaches the provider (the emulator's record of when it was placed); against N raw workflows
// sleeping until one instant and then running one activity (when it ran). Busy lines: each call ends
// at once. The team's pacing limits are set to the highest the service allows (10,000 live calls,
// 1,000 dials/s per provider account) and calls rotate over the three providers, so the pacer grants
// slots as fast as it can rather than at a configured rate.
import { emulatorControl } from '../../scripts/chaos/emulator-control';
import { runRawLoad } from '../load/raw-temporal';
import { summarize } from '../load/stats';
import { BUDGETS, PROVIDER_ROTATION, apiRequest, busyNumber, expectStatus, figure, ms, sleep } from '../scenario';
import type { BenchScenario } from '../scenario';

export const scheduleScenario: BenchScenario = {
  name: 'schedule',
  description: 'N calls due at one instant: lateness of each dial vs N raw sleeping workflows running one activity',
  defaultOn: true,
  params: {
    calls: { full: 500, quick: 10, description: 'calls due at the same instant' },
    leadSeconds: { full: 20, quick: 4, description: 'from the create (or first start) to the instant' },
    concurrency: { full: 32, quick: 32, description: "the baseline's starts in flight" },
  },
  async run(ctx) {
    const { calls, leadSeconds, concurrency } = ctx.params as Record<string, number>;
    ctx.log(`schedule: baseline, ${calls} raw workflows sleeping ${leadSeconds} s, then one activity`);
    const raw = await runRawLoad({
      mode: 'schedule',
      temporalAddress: ctx.temporalAddress,
      namespace: ctx.namespace,
      taskQueue: ctx.baselineTaskQueue,
      idPrefix: `bench-schedule-${Date.now()}`,
      count: calls,
      concurrency,
      leadMs: leadSeconds * 1000,
    });
    if (raw.ok !== calls) throw new Error(`${calls - raw.ok} baseline workflows failed: ${raw.errors.join('; ')}`);
    if (raw.errors.length) throw new Error(`baseline: ${raw.errors.join('; ')}`);

    const team = await ctx.seedTeam('Bench schedule', { maxConcurrentCalls: 10_000, dialsPerSecond: 1000 });
    const dueAt = Date.now() + leadSeconds * 1000;
    ctx.log(`schedule: ${calls} calls due at ${new Date(dueAt).toISOString()}`);
    const answer = await apiRequest<{ data: { _id: string }[] }>(ctx, team.key, 'POST', '/v1/phoneCalls/batch', {
      phoneCalls: Array.from({ length: calls }, (_, i) => ({
        teamId: team.teamId,
        callTemplateId: team.templateId,
        toPhoneNumber: busyNumber(i),
        telephonyProvider: PROVIDER_ROTATION[i % PROVIDER_ROTATION.length],
        promptVariableValues: [{ key: 'firstName', value: `S${i}` }],
        callDelayedUntil: new Date(dueAt).toISOString(),
      })),
    });
    const ids = new Set(expectStatus(answer, 201, 'POST /v1/phoneCalls/batch').data.map((c) => c._id));
    if (Date.now() > dueAt - 1000) throw new Error(`the batch took longer than the lead of ${leadSeconds} s`);

    const emulator = emulatorControl(ctx.emulatorUrl);
    const deadline = dueAt + (ctx.quick ? 60_000 : 300_000);
    // Each call's first dial (a retried one may reach the provider twice): every call must have one.
    const firstDials = new Map<string, number>();
    await sleep(Math.max(0, dueAt - Date.now()));
    while (Date.now() < deadline) {
      await sleep(500);
      firstDials.clear();
      for (const c of await emulator.calls()) {
        if (c.serviceCallId === null || !ids.has(c.serviceCallId) || c.placedAt === null) continue;
        firstDials.set(c.serviceCallId, Math.min(firstDials.get(c.serviceCallId) ?? Infinity, c.placedAt));
      }
      if (firstDials.size >= ids.size) break;
    }
    if (firstDials.size < ids.size) throw new Error(`only ${firstDials.size} of ${ids.size} calls were dialled`);
    const placed = [...firstDials.values()];
    const lateness = summarize(placed.map((t) => t - dueAt));
    const base = raw.latenessMs!;
    const what = `${calls} calls due at once`;
    const spread = (Math.max(...placed) - Math.min(...placed)) / 1000;
    const note = `dials reached the provider over ${ms(spread)} s (${ms(calls / Math.max(spread, 0.001))}/s)`;
    return [
      figure(`schedule lateness p50, ${what}`, ms(lateness.p50), 'ms', { baseline: ms(base.p50) }),
      figure(`schedule lateness p99`, ms(lateness.p99), 'ms', {
        baseline: ms(base.p99),
        budget: BUDGETS.scheduleP99,
        note,
      }),
      figure(`schedule lateness max`, ms(lateness.max), 'ms', { baseline: ms(base.max) }),
    ];
  },
};

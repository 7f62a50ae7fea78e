// create: POST /v1/phoneCalls from autocannon at concurrency 16, against its baseline from a process of
// its own at the same concurrency: one MongoDB insert and a raw start of a no-op workflow, held by the
// server until far ahead as the service's calls are. The API's RSS is sampled all through its load.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runHttpLoad } from '../load/autocannon';
import { describeCpu, type CpuUse } from '../load/cpu';
import { runRawLoad } from '../load/raw-temporal';
import { BUDGETS, FAR_AHEAD_MS, figure, ms, type BenchScenario } from '../scenario';

/** Milliseconds of the machine's CPU per call (NaN where /proc is not there). */
function perCall(cpu: CpuUse, calls: number): number {
  return cpu.machineSeconds === null ? Number.NaN : ms((cpu.machineSeconds * 1000) / calls);
}

export const createScenario: BenchScenario = {
  name: 'create',
  description: 'POST /v1/phoneCalls at a fixed concurrency vs raw workflow start + one MongoDB insert',
  defaultOn: true,
  params: {
    requests: { full: 2000, quick: 30, description: 'requests of each side' },
    concurrency: { full: 16, quick: 16, description: 'requests in flight' },
  },
  async run(ctx) {
    const { requests, concurrency } = ctx.params as { requests: number; concurrency: number };
    ctx.log(`create: baseline, ${requests} raw starts + inserts at concurrency ${concurrency}`);
    const rawCpu = ctx.cpu();
    const raw = await runRawLoad({
      mode: 'starts',
      temporalAddress: ctx.temporalAddress,
      namespace: ctx.namespace,
      taskQueue: ctx.baselineTaskQueue,
      idPrefix: `bench-create-${Date.now()}`,
      // Held by the server as the service's calls due far ahead are (since 2026-12-01: before, the
      // baseline's no-op workflows ran during its own timing, which slowed it and flattered the ratio).
      startDelayMs: FAR_AHEAD_MS,
      count: requests,
      concurrency,
      mongoUri: ctx.mongoUri,
    });
    if (raw.ok === 0) throw new Error(`no raw start succeeded: ${raw.errors.join('; ')}`);
    // Whatever the baseline's starts left for the server to do is done first, and counts as its CPU.
    await ctx.settle(`create: after the baseline`);
    const rawCpuUse = rawCpu.close();

    const bodyFile = path.join(ctx.workDir, 'create-body.json');
    await writeFile(
      bodyFile,
      JSON.stringify({
        teamId: ctx.team.teamId,
        callTemplateId: ctx.team.templateId,
        toPhoneNumber: '+14155552000',
        // [<id>]: a fresh value per request (autocannon -I).
        promptVariableValues: [{ key: 'firstName', value: 'P[<id>]' }],
        callDelayedUntil: new Date(Date.now() + FAR_AHEAD_MS).toISOString(),
      }),
    );
    ctx.log(`create: POST /v1/phoneCalls, ${requests} at concurrency ${concurrency} (autocannon)`);
    const memory = ctx.memory();
    const apiCpu = ctx.cpu();
    const api = await runHttpLoad({
      url: `${ctx.apiUrl}/v1/phoneCalls`,
      method: 'POST',
      headers: { 'service-api-key': ctx.team.key, 'content-type': 'application/json' },
      bodyFile,
      idReplacement: true,
      connections: concurrency,
      amount: requests,
    });
    const apiPeak = memory.close().peakMiB.api ?? Number.NaN;
    // As for the baseline: whatever the creates left running done before its CPU is counted.
    await ctx.settle(`create: after the creates`);
    const apiCpuUse = apiCpu.close();
    // Each side's CPU on its own: what a create costs each process against what a raw start does.
    const cpuNote = `CPU seconds, baseline: ${describeCpu(rawCpuUse)}; service: ${describeCpu(apiCpuUse)}`;
    ctx.log(`create: ${cpuNote}`);
    if (api.ok === 0) throw new Error(`no create succeeded: ${JSON.stringify(api.statusCodes)}, ${api.errors} errors`);
    const failed = api.non2xx + api.errors + api.timeouts;
    const note = failed ? `${failed} of ${requests} not 2xx: ${JSON.stringify(api.statusCodes)}` : undefined;
    const rawNote = raw.errors.length ? `baseline errors: ${raw.errors[0]}` : undefined;
    const what = `${requests} at concurrency ${concurrency}`;
    return [
      figure(`create throughput, ${what}`, ms(api.perSecond), 'calls/s', {
        baseline: ms(raw.perSecond),
        budget: BUDGETS.createThroughput,
        note: [note ?? rawNote, cpuNote].filter(Boolean).join('; '),
      }),
      figure(`create latency p50`, ms(api.latencyMs.p50), 'ms', { baseline: ms(raw.latencyMs!.p50) }),
      figure(`create latency p99`, ms(api.latencyMs.p99), 'ms', {
        baseline: ms(raw.latencyMs!.p99),
        budget: BUDGETS.createP99,
      }),
      // The machine's CPU per created workflow, each side until quiet again, is the other way to compare
      // them: what each costs when the load is sustained. (Neither side's workflows run a task until
      // due: the server holds them, a start delay.)
      figure(`machine CPU per create, until the machine is quiet again`, perCall(apiCpuUse, requests), 'ms', {
        baseline: perCall(rawCpuUse, requests),
      }),
      figure(`API RSS under the create load (peak)`, ms(apiPeak), 'MiB', { budget: BUDGETS.apiRss }),
    ];
  },
};

// batch: one POST /v1/phoneCalls/batch of N calls (10,000 in full) sent by autocannon, until it is
// answered (every call stored and its workflow started), against N raw starts of the no-op workflow
// at the concurrency the API starts a batch's workflows with (BATCH_START_CONCURRENCY, 32 by default).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runHttpLoad } from '../load/autocannon';
import { runRawLoad } from '../load/raw-temporal';
import { BUDGETS, FAR_AHEAD_MS, conversationNumber, figure, ms, type BenchScenario } from '../scenario';

/** How long the batch's workflows may take to be counted once it was answered. */
const VISIBLE_WITHIN_MS = 120_000;

export const batchScenario: BenchScenario = {
  name: 'batch',
  description: 'POST /v1/phoneCalls/batch of N calls vs N raw starts of a no-op workflow',
  defaultOn: true,
  params: {
    size: { full: 10_000, quick: 60, description: 'calls in the batch (at most 10,000)' },
    concurrency: {
      full: 32,
      quick: 32,
      description: "the baseline's starts in flight (the API's BATCH_START_CONCURRENCY)",
    },
  },
  async run(ctx) {
    const { size, concurrency } = ctx.params as { size: number; concurrency: number };
    ctx.log(`batch: baseline, ${size} raw starts at concurrency ${concurrency}`);
    const raw = await runRawLoad({
      mode: 'starts',
      temporalAddress: ctx.temporalAddress,
      namespace: ctx.namespace,
      taskQueue: ctx.baselineTaskQueue,
      idPrefix: `bench-batch-${Date.now()}`,
      // Held by the server as the service's calls due far ahead are (since 2026-12-01: before, the
      // baseline's no-op workflows ran during its own timing, which slowed it and flattered the ratio).
      startDelayMs: FAR_AHEAD_MS,
      count: size,
      concurrency,
    });
    if (raw.ok !== size) throw new Error(`${size - raw.ok} raw starts failed: ${raw.errors.join('; ')}`);
    // The baseline's workflows run to their end first: the worker's backlog is not the service's cost.
    await ctx.settle(`batch: after the baseline`);

    const later = new Date(Date.now() + FAR_AHEAD_MS).toISOString();
    const bodyFile = path.join(ctx.workDir, 'batch-body.json');
    await writeFile(
      bodyFile,
      JSON.stringify({
        phoneCalls: Array.from({ length: size }, (_, i) => ({
          teamId: ctx.team.teamId,
          callTemplateId: ctx.team.templateId,
          toPhoneNumber: conversationNumber(i),
          promptVariableValues: [{ key: 'firstName', value: `P${i}` }],
          callDelayedUntil: later,
        })),
      }),
    );
    // The team's call workflows, counted on the server: an accepted batch whose start failed part way
    // is left to the reconciler, and its answer says nothing of it.
    const teamWorkflows = async () =>
      (
        await ctx.temporal.workflow.count(
          `WorkflowType = 'phoneCallWorkflow' AND CallTeamId = '${ctx.team.teamId}' AND TaskQueue = '${ctx.taskQueue}'`,
        )
      ).count;
    const before = await teamWorkflows();
    ctx.log(`batch: POST /v1/phoneCalls/batch of ${size} (autocannon)`);
    const memory = ctx.memory();
    const api = await runHttpLoad({
      url: `${ctx.apiUrl}/v1/phoneCalls/batch`,
      method: 'POST',
      headers: { 'service-api-key': ctx.team.key, 'content-type': 'application/json' },
      bodyFile,
      connections: 1,
      amount: 1,
      timeoutSeconds: 1800,
    });
    const apiPeak = memory.close().peakMiB.api ?? Number.NaN;
    if (api.ok !== 1) throw new Error(`the batch was not accepted: ${JSON.stringify(api.statusCodes)}`);
    const seconds = api.latencyMs.max / 1000;
    // Every call's workflow, as the figure assumes (visibility trails the starts by a moment).
    let started = 0;
    for (const waitUntil = Date.now() + VISIBLE_WITHIN_MS; Date.now() < waitUntil;) {
      started = (await teamWorkflows()) - before;
      if (started >= size) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    if (started < size)
      throw new Error(`the batch was accepted with ${size - started} of its ${size} workflows not started`);
    return [
      figure(`batch of ${size} accepted`, ms(seconds), 's', {
        baseline: ms(raw.seconds),
        budget: BUDGETS.batchTime,
        note: `${Math.round(size / seconds)} calls/s; baseline ${Math.round(raw.perSecond)} starts/s`,
      }),
      // A batch is create load too: one request holding its whole body, its calls and their answer.
      figure(`API RSS under the batch (peak)`, ms(apiPeak), 'MiB', { budget: BUDGETS.apiRss }),
    ];
  },
};

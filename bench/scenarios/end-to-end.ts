// end to end: N calls placed at once (one batch, due now), each through the emulator at its fastest
// (a conversation, transcript and results), until every call's workflow has closed: calls completed per
// second from the create to the last close. Baseline: N raw workflows each running as many no-op
// activities (and local activities) as one of these calls ran, counted from its history. The team's
// pacing limits are the highest allowed and calls rotate over the providers, as in `schedule`.
import { temporal } from '@temporalio/proto';
import { callWorkflowId } from '../../src/contracts/ids';
import { runRawLoad } from '../load/raw-temporal';
import { runConcurrent, summarize } from '../load/stats';
import { BUDGETS, PROVIDER_ROTATION, apiRequest, conversationNumber, expectStatus, figure, ms } from '../scenario';
import type { BenchContext, BenchScenario } from '../scenario';

/** Activities and local activities (markers) in a closed workflow's history. */
async function activitiesOf(ctx: BenchContext, workflowId: string): Promise<{ activities: number; local: number }> {
  const history = await ctx.temporal.workflow.getHandle(workflowId).fetchHistory();
  let activities = 0;
  let local = 0;
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes) activities += 1;
    if (event.markerRecordedEventAttributes) local += 1;
  }
  return { activities, local };
}

/** The longest time between two consecutive events of a workflow's history, and which two they were. */
async function longestWait(ctx: BenchContext, workflowId: string): Promise<string> {
  const history = await ctx.temporal.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const timeOf = (i: number) => {
    const t = events[i]!.eventTime;
    // Seconds come as a number or a protobuf Long (whose string form is the number).
    return t ? Number(String(t.seconds ?? 0)) * 1000 + Math.round((t.nanos ?? 0) / 1e6) : Number.NaN;
  };
  const nameOf = (i: number) =>
    String(temporal.api.enums.v1.EventType[events[i]!.eventType ?? 0] ?? events[i]!.eventType).replace(
      /^EVENT_TYPE_/,
      '',
    );
  let longest = { ms: 0, at: 0 };
  for (let i = 1; i < events.length; i += 1) {
    const gap = timeOf(i) - timeOf(i - 1);
    if (gap > longest.ms) longest = { ms: gap, at: i };
  }
  if (longest.at === 0) return 'none';
  // An activity's started event is written by the attempt that finished it: its number and the failure
  // before it say whether the wait was a queue or a run of retries.
  const started = events[longest.at]!.activityTaskStartedEventAttributes;
  const scheduled = started
    ? events.find((e) => Number(String(e.eventId)) === Number(String(started.scheduledEventId)))
    : undefined;
  const activity = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name;
  const retries = started
    ? ` (${activity ?? 'activity'}, attempt ${started.attempt ?? 1}${started.lastFailure?.message ? `, last failure: ${started.lastFailure.message.slice(0, 160)}` : ''})`
    : '';
  return `${ms(longest.ms / 1000)} s from ${nameOf(longest.at - 1)} (event ${longest.at}) to ${nameOf(longest.at)}${retries}, of ${events.length} events`;
}

export const endToEndScenario: BenchScenario = {
  name: 'end-to-end',
  description: 'calls completed per second, emulator at its fastest, vs raw workflows with as many no-op activities',
  defaultOn: true,
  params: {
    calls: { full: 300, quick: 6, description: 'calls placed at once' },
    concurrency: { full: 32, quick: 32, description: "the baseline's starts in flight" },
  },
  async run(ctx) {
    const { calls, concurrency } = ctx.params as Record<string, number>;
    const team = await ctx.seedTeam('Bench end to end', { maxConcurrentCalls: 10_000, dialsPerSecond: 1000 });
    ctx.log(`end-to-end: ${calls} calls placed at once`);
    const started = Date.now();
    const answer = await apiRequest<{ data: { _id: string }[] }>(ctx, team.key, 'POST', '/v1/phoneCalls/batch', {
      phoneCalls: Array.from({ length: calls }, (_, i) => ({
        teamId: team.teamId,
        callTemplateId: team.templateId,
        toPhoneNumber: conversationNumber(i),
        telephonyProvider: PROVIDER_ROTATION[i % PROVIDER_ROTATION.length],
        promptVariableValues: [{ key: 'firstName', value: `E${i}` }],
      })),
    });
    const ids = expectStatus(answer, 201, 'POST /v1/phoneCalls/batch').data.map((c) => c._id);
    ctx.log(`end-to-end: the batch accepted; waiting for its calls to end`);
    const statuses = new Map<string, number>();
    let lastClose = started;
    let lastCallId = ids[0]!;
    /** Seconds from the create to each call's close: the figure is set by the last, the spread says why. */
    const closedAfter: number[] = [];
    const waitUntil = started + (ctx.quick ? 90_000 : 900_000);
    const waited = await runConcurrent(ids.length, 64, async (i) => {
      const handle = ctx.temporal.workflow.getHandle(callWorkflowId(ids[i]!));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('a call did not end in time')), waitUntil - Date.now());
      });
      await Promise.race([handle.result().catch(() => undefined), timedOut]).finally(() => clearTimeout(timer));
      const description = await handle.describe();
      statuses.set(description.status.name, (statuses.get(description.status.name) ?? 0) + 1);
      if (description.closeTime) {
        if (description.closeTime.getTime() > lastClose) lastCallId = ids[i]!;
        lastClose = Math.max(lastClose, description.closeTime.getTime());
        closedAfter.push((description.closeTime.getTime() - started) / 1000);
      }
    });
    if (waited.errors.length) throw new Error(`waiting for the calls: ${waited.errors[0]}`);
    const seconds = (lastClose - started) / 1000;
    const callStatuses = new Map<string, number>();
    let cursor: string | null = null;
    do {
      const page: { data: { status: string }[]; nextCursor: string | null } = expectStatus(
        await apiRequest(ctx, team.key, 'GET', `/v1/phoneCalls?limit=1000${cursor ? `&cursor=${cursor}` : ''}`),
        200,
        'GET /v1/phoneCalls',
      );
      for (const call of page.data) callStatuses.set(call.status, (callStatuses.get(call.status) ?? 0) + 1);
      cursor = page.nextCursor;
    } while (cursor);
    const { activities, local } = await activitiesOf(ctx, callWorkflowId(ids[0]!));
    const lastWait = await longestWait(ctx, callWorkflowId(lastCallId));

    ctx.log(`end-to-end: baseline, ${calls} raw workflows of ${activities} activities + ${local} local activities`);
    const raw = await runRawLoad({
      mode: 'activities',
      temporalAddress: ctx.temporalAddress,
      namespace: ctx.namespace,
      taskQueue: ctx.baselineTaskQueue,
      idPrefix: `bench-e2e-${Date.now()}`,
      count: calls,
      concurrency,
      activities,
      localActivities: local,
    });
    if (raw.ok !== calls) throw new Error(`${calls - raw.ok} baseline workflows failed: ${raw.errors.join('; ')}`);
    const outcome = [...callStatuses].map(([status, n]) => `${n} ${status}`).join(', ');
    const completed = statuses.get('COMPLETED') ?? 0;
    const spread = summarize(closedAfter);
    // Every call must have completed, workflow and record: calls that failed fast would raise the rate.
    const allCompleted = completed === calls && callStatuses.get('completed') === calls;
    return [
      figure(`end to end, ${calls} calls placed at once`, allCompleted ? ms(calls / seconds) : Number.NaN, 'calls/s', {
        baseline: ms(raw.perSecond),
        budget: BUDGETS.endToEndRate,
        note: `${allCompleted ? '' : `NOT every call completed (${ms(calls / seconds)} calls/s ended): `}${ms(seconds)} s vs ${ms(raw.seconds)} s (calls closed: half by ${ms(spread.p50)} s, 90 % by ${ms(spread.p90)} s); calls: ${outcome}; workflows completed: ${completed}/${calls}; ${activities} activities + ${local} local activities per call; the last call's longest wait: ${lastWait}`,
      }),
    ];
  },
};

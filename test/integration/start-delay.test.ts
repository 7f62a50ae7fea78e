// A call due later whose creation nothing watches is started with a start delay: the Temporal server
// holds its first workflow task until the call is due (src/calls/dispatch.ts), so the worker does
// nothing for it until then. What must still reach it at once does: a delete, a batch pause (both
// Workflow Updates), an operator's cancel. A call that sends `phoneCall.queued` starts at once.
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callStateQuery } from '../../workflows/messages';
import { apiClient, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type SeededTeam, type TestStack } from '../helpers/stack';

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  stack = await startTestStack();
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const { EventType } = temporal.api.enums.v1;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(callId: string): Promise<HistoryEvent[]> {
  const history = await stack.temporal.workflow.getHandle(`phoneCall-${callId}`).fetchHistory();
  return history.events ?? [];
}

const typesOf = (events: HistoryEvent[]) => events.map((event) => event.eventType);

function secondsOf(
  duration: temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes['firstWorkflowTaskBackoff'],
) {
  return Number(duration?.seconds ?? 0) + (duration?.nanos ?? 0) / 1e9;
}

async function createCall(team: SeededTeam, to: string, extra: Record<string, unknown>): Promise<string> {
  const res = await apiClient(stack.baseUrl, team.key).post('/v1/phoneCalls', seededCallBody(team, to, extra));
  expect(res.status).toBe(201);
  return res.body.data._id as string;
}

async function statusOf(team: SeededTeam, callId: string) {
  const res = await apiClient(stack.baseUrl, team.key).get(`/v1/phoneCalls/${callId}`);
  return res.body.data as { status: string; statusExtraInfo?: { statusCode?: string } };
}

describe('scheduled calls held by the server until due', () => {
  it('holds the first task of a call nothing watches until it is due, then dials it', async () => {
    const team = await stack.seedTeam('Held until due');
    const due = Date.now() + 4_000;
    const to = '+14155551486'; // busy
    const callId = await createCall(team, to, { callDelayedUntil: new Date(due).toISOString() });

    const events = await historyOf(callId);
    // The start event alone: no workflow task ran, none is scheduled before the call is due.
    expect(typesOf(events)).toEqual([EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED]);
    const backoff = secondsOf(events[0]!.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff);
    expect(backoff).toBeGreaterThan(2);
    expect(backoff).toBeLessThanOrEqual(4);
    expect((await statusOf(team, callId)).statusExtraInfo?.statusCode).toBe('scheduled');

    await eventually(async () => ((await statusOf(team, callId)).status === 'busy' ? true : undefined), 30_000, 'busy');
    const placed = stack.emulator.calls().filter((call) => call.serviceCallId === callId);
    expect(placed).toHaveLength(1);
    expect(placed[0]!.placedAt).toBeGreaterThanOrEqual(due);
  });

  it('lets a delete, a batch pause and an operator cancel reach a held call at once', async () => {
    const team = await stack.seedTeam('Held and changed');
    const api = apiClient(stack.baseUrl, team.key);
    const later = new Date(Date.now() + 3_600_000).toISOString();

    const toDelete = await createCall(team, '+14155550211', { callDelayedUntil: later });
    const deleted = await api.delete(`/v1/phoneCalls/${toDelete}`);
    expect(deleted.status).toBe(200);
    expect((await api.get(`/v1/phoneCalls/${toDelete}`)).status).toBe(404);
    expect(await stack.temporal.workflow.getHandle(`phoneCall-${toDelete}`).result()).toMatchObject({
      phase: 'deleted',
    });

    const batch = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: [seededCallBody(team, '+14155550212', { callDelayedUntil: later })],
    });
    expect(batch.status).toBe(201);
    const paused = await api.post(`/v1/phoneCalls/batch/${batch.body.batchId as string}/pause`);
    expect(paused.body.data).toMatchObject({ calls: 1, changed: 1 });
    const pausedId = (batch.body.data as Array<{ _id: string }>)[0]!._id;
    // The pause (an Update) ran the held workflow's first task rather than wait for the delay, and the
    // workflow now answers queries: it says at once that it waits paused.
    expect(typesOf(await historyOf(pausedId))).toContain(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const state = await stack.temporal.workflow.getHandle(`phoneCall-${pausedId}`).query(callStateQuery);
    expect(state).toMatchObject({
      callId: pausedId,
      status: 'queued',
      phase: 'waiting',
      statusCode: 'paused',
      providerCallId: null,
    });

    const toCancel = await createCall(team, '+14155550213', { callDelayedUntil: later });
    await stack.temporal.workflow.getHandle(`phoneCall-${toCancel}`).cancel();
    await eventually(
      async () => ((await statusOf(team, toCancel)).status === 'cancelled' ? true : undefined),
      10_000,
      'cancelled',
    );
    expect(stack.emulator.callsTo('+14155550213')).toBe(0);
  });

  it('starts at once a call whose phoneCall.queued someone watches, and sends it', async () => {
    const team = await stack.seedTeam('Watched');
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const callId = await createCall(team, '+14155550214', {
      callDelayedUntil: later,
      phoneCallWebhooks: [
        { url: `${receiver.url}/queued`, subscribedEvent: 'phoneCall.queued', secret: 'queued-secret-1234' },
      ],
    });
    await eventually(
      async () => receiver.at('/queued').find((r) => r.body.includes(callId)),
      30_000,
      'phoneCall.queued',
    );
    const events = await historyOf(callId);
    expect(secondsOf(events[0]!.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff)).toBe(0);
    expect(typesOf(events)).toContain(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  });
});

// A capture attempt that hangs without a heartbeat (as one stuck on a round trip, or whose task never
// reached a worker) is retried after the capture's 20-second heartbeat timeout, not after its 2-minute
// start-to-close, and the call still ends with its outputs; and a live attempt's heartbeats reach the
// server every 5 s, not held back by the SDK until its heartbeat timeout is nearly up. The real call
// workflow on the real Temporal dev server; the activities are stubs, and the provider's events are
// signalled as the callbacks would.
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { HEARTBEAT_EVERY_MS, HEARTBEAT_WORKER_OPTIONS, withHeartbeats } from '../../activities/heartbeats';
import { callWorkflowId } from '../../src/contracts/ids';
import { phoneCallWorkflow } from '../../workflows/call';
import { providerEventSignal } from '../../workflows/messages';
import { callWorkflowInput, installQuietRuntime, stubActivities, uniqueId } from '../workflows/environment';

let connection: NativeConnection;
let client: Client;
beforeAll(async () => {
  installQuietRuntime();
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
});
afterAll(async () => {
  await connection?.close();
});

/** A dial whose call is answered and then ends, signalled as the provider's callbacks would be. */
async function answeredThenCompleted({ callId }: { callId: string }): Promise<{ providerCallId: string }> {
  const providerCallId = `pc-${callId}`;
  const handle = client.workflow.getHandle(callWorkflowId(callId));
  for (const kind of ['answered', 'completed'] as const) {
    await handle.signal(providerEventSignal, {
      callId,
      provider: 'twilio',
      providerCallId,
      kind,
      occurredAt: new Date().toISOString(),
      providerStatus: kind,
    });
  }
  return { providerCallId };
}

it('retries a capture attempt that hangs after its heartbeat timeout, and the call completes', async () => {
  const args = callWorkflowInput({ finalWithCapture: true, ownWebhookEvents: [], queuedEventUnsubscribed: true });
  const attempts: number[] = [];
  let releaseHung: () => void = () => undefined;
  const hung = new Promise<void>((resolve) => (releaseHung = resolve));
  const { activities } = stubActivities({
    dialCall: answeredThenCompleted,
    captureCallOutputs: async ({ callId, final }) => {
      attempts.push(Date.now());
      // The first attempt never answers and never heartbeats (released at the end, for the shutdown).
      if (attempts.length === 1) await hung;
      return {
        transcriptEvent: null,
        ...(final ? { final: { applied: true, call: { _id: callId, status: final.status } } } : {}),
      };
    },
  });
  const taskQueue = uniqueId('liveness');
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
  const state = await worker.runUntil(async () => {
    const result = client.workflow.execute(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    // Let the hung attempt go once the retry has run, so that the worker can shut down.
    return result.finally(releaseHung);
  });
  expect(state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(attempts).toHaveLength(2);
  const gap = attempts[1]! - attempts[0]!;
  expect(gap).toBeGreaterThanOrEqual(19_000);
  // The retry's 2 s back-off and some dispatch latency on top: far below the 2-minute start-to-close.
  expect(gap).toBeLessThan(45_000);
}, 90_000);

it("hands a live capture's heartbeats to the server every 5 s, well inside its 20 s heartbeat timeout", async () => {
  const args = callWorkflowInput({ finalWithCapture: true, ownWebhookEvents: [], queuedEventUnsubscribed: true });
  const CAPTURE_MS = 17_000;
  let captureStarted = 0;
  const { activities } = stubActivities({
    dialCall: answeredThenCompleted,
    // A slow capture that is alive: it heartbeats as the real one does while it works.
    captureCallOutputs: ({ callId, final }) =>
      withHeartbeats(async () => {
        captureStarted = Date.now();
        await new Promise((resolve) => setTimeout(resolve, CAPTURE_MS));
        return {
          transcriptEvent: null,
          ...(final ? { final: { applied: true, call: { _id: callId, status: final.status } } } : {}),
        };
      }),
  });
  const taskQueue = uniqueId('heartbeats');
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
    // What the service's worker sets (src/worker/create-worker.ts).
    ...HEARTBEAT_WORKER_OPTIONS,
  });
  const ages: number[] = [];
  const state = await worker.runUntil(async () => {
    const handle = await client.workflow.start(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    // How old the server's last heartbeat of the capture is, twice a second from its first one on.
    while (!captureStarted || Date.now() < captureStarted + CAPTURE_MS - 1_000) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (!captureStarted || Date.now() < captureStarted + HEARTBEAT_EVERY_MS + 1_000) continue;
      const { raw } = await handle.describe();
      const capture = raw.pendingActivities?.find((a) => a.activityType?.name === 'captureCallOutputs');
      const seconds = capture?.lastHeartbeatTime?.seconds;
      if (seconds != null) ages.push(Date.now() - Number(seconds) * 1_000);
    }
    return handle.result();
  });
  expect(state).toMatchObject({ status: 'completed', phase: 'ended' });
  expect(ages.length).toBeGreaterThan(10);
  // Held back for 0.8x the 20 s timeout, the last heartbeat the server had would reach 11 s of age
  // before the next (sent at 21 s); handed on every 5 s it stays near 5 s, and seconds late is in time.
  expect(Math.max(...ages)).toBeLessThan(8_500);
}, 60_000);

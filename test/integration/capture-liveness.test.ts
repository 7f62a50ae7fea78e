// A capture attempt that hangs without a heartbeat (as one stuck on a round trip, or whose task never
// reached a worker) is retried after the capture's 20-second heartbeat timeout, not after its 2-minute
// start-to-close, and the call still ends with its outputs. The real call workflow on the real Temporal
// dev server; the activities are stubs, and the provider's events are signalled as the callbacks would.
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
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

it('retries a capture attempt that hangs after its heartbeat timeout, and the call completes', async () => {
  const args = callWorkflowInput({ finalWithCapture: true, ownWebhookEvents: [], queuedEventUnsubscribed: true });
  const attempts: number[] = [];
  let releaseHung: () => void = () => undefined;
  const hung = new Promise<void>((resolve) => (releaseHung = resolve));
  const { activities } = stubActivities({
    dialCall: async ({ callId }) => {
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
    },
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

// An operator's cancel that reaches a dial try still running, which then fails: on the real Temporal
// dev server, whose rule this is (the time-skipping test server retries such a try instead). The server
// retries no activity once its cancel has been asked, and the try's failure reaches the workflow as a
// failure, not as the cancel. Only the activities are stubbed.
import { Client, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { callWorkflowId } from '../../src/contracts/ids';
import { phoneCallWorkflow } from '../../workflows/call';
import type { CallWorkflowInput } from '../../workflows/types';
import { installQuietRuntime, stubActivities, uniqueId } from '../workflows/environment';

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

it('a dial try that fails after the cancel came ends the call cancelled, and hangs up what it may have placed', async () => {
  // Before, the call ended failed (provider-error) and a call that try had placed (the provider's answer
  // timed out after it created the call) rang on.
  let dialStarted: () => void = () => undefined;
  const dialling = new Promise<void>((resolve) => {
    dialStarted = resolve;
  });
  let failTry: () => void = () => undefined;
  const failing = new Promise<void>((resolve) => {
    failTry = resolve;
  });
  const { activities, calls } = stubActivities({
    dialCall: async () => {
      dialStarted();
      await failing;
      throw new Error("the provider's answer timed out");
    },
    hangUpCall: async ({ providerCallId, dialledSince }) => providerCallId ?? (dialledSince ? 'placed-and-lost' : null),
  });
  const args: CallWorkflowInput = {
    callId: uniqueId('call'),
    teamId: 'team',
    toPhoneNumber: '+14155550007',
    provider: 'twilio',
    record: false,
    scheduledFor: null,
    maxDurationSeconds: 900,
    ringTimeoutSeconds: 120,
    statusWritesOutliveCancel: true,
  };
  const taskQueue = uniqueId('cancel-dial');
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
  const outcome = await worker.runUntil(async () => {
    const handle = await client.workflow.start(phoneCallWorkflow, {
      workflowId: callWorkflowId(args.callId),
      taskQueue,
      args: [args],
    });
    try {
      await dialling;
      await handle.cancel();
      // The try fails once the server holds the dial's cancel request.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { events } = await handle.fetchHistory();
        if (events!.some((e) => e.activityTaskCancelRequestedEventAttributes)) break;
        if (Date.now() > deadline) throw new Error('the dial was never asked to cancel');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      failTry();
    }
    return handle.result().then(
      () => 'completed',
      (err: unknown) => err,
    );
  });
  expect(outcome).toBeInstanceOf(WorkflowFailedError);
  expect(calls.filter((c) => c.name === 'dialCall')).toHaveLength(1);
  const hangUp = calls.find((c) => c.name === 'hangUpCall')?.input as { dialledSince?: string } | undefined;
  expect(Date.parse(hangUp?.dialledSince ?? '')).not.toBeNaN();
  const written = calls.filter((c) => c.name === 'recordStatus').map((c) => c.input);
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({
    status: 'cancelled',
    statusCode: 'cancelled-by-operator',
    fields: { providerCallId: 'placed-and-lost' },
  });
});

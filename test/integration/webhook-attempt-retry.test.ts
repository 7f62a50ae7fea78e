// A webhook attempt whose request went out and whose record could not be written (the store down for
// a moment): on the real Temporal dev server, which carries a failed try's last heartbeat to its retry.
// The delivery workflow and the attempt activity are the service's; the store fails once, by design.
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createWebhookActivities } from '../../activities/webhooks';
import { createSecretBox } from '../../src/crypto/secret-box';
import type { DeliveryAttemptRecord, WebhookStore } from '../../src/data/webhook-store';
import { createLogger } from '../../src/logger';
import { createWorkerMetrics } from '../../src/observability/metrics';
import { deliverWebhookEventsWorkflow } from '../../workflows/deliver-webhook';
import { startReceiver } from '../helpers/receiver';
import { installQuietRuntime, uniqueId } from '../workflows/environment';

let connection: NativeConnection;
let client: Client;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  installQuietRuntime();
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await connection?.close();
});

it('records a request that went out on the retry of its try, without sending it again', async () => {
  // Before, each try sent the request again: up to ten per attempt while the store refused writes.
  const written: DeliveryAttemptRecord[] = [];
  let writes = 0;
  const webhooks = {
    recordAttempt: async (record: DeliveryAttemptRecord) => {
      writes += 1;
      if (writes === 1) throw new Error('the store is down');
      written.push(record);
    },
  } as unknown as WebhookStore;
  const secretBox = createSecretBox(randomBytes(32).toString('base64'));
  const taskQueue = uniqueId('webhook-retry');
  const activities = createWebhookActivities({
    config: { PUBLIC_BASE_URL: 'http://127.0.0.1', WEBHOOK_RETRY_DELAYS: [100], ALLOW_PRIVATE_WEBHOOK_URLS: true },
    logger: createLogger('silent', 'test'),
    secretBox,
    metrics: createWorkerMetrics(),
    webhooks,
    calls: {} as never, // an own webhook's attempt reads no call
    temporal: { client, taskQueue },
  });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
  const callId = uniqueId('call');
  const outcome = await worker.runUntil(
    client.workflow.execute(deliverWebhookEventsWorkflow, {
      workflowId: uniqueId('delivery'),
      taskQueue,
      args: [
        {
          callId,
          teamId: 'team',
          target: {
            endpointKey: 'call-0',
            url: `${receiver.url}/once`,
            method: 'POST',
            secretSealed: secretBox.seal('a per-call secret'),
            webhookId: null,
          },
          firstEvent: {
            eventId: `evt_${callId}_phoneCall.completed`,
            type: 'phoneCall.completed',
            timestamp: new Date().toISOString(),
            callId,
            teamId: 'team',
            data: { _id: callId, status: 'completed' },
          },
          retryDelaysMs: [100],
          redelivery: { firstAttempt: 1 }, // one event, and the stream ends
        },
      ],
    }),
  );
  expect(outcome).toEqual({ delivered: 1, failed: 0 });
  expect(receiver.at('/once')).toHaveLength(1);
  expect(writes).toBe(2);
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ state: 'delivered', attempt: { attempt: 1, statusCode: 200, error: null } });
});

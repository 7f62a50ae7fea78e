// An operator's redelivery of one event to one endpoint (POST /v1/webhookDeliveries/{id}/redeliver):
// the same event (same webhook-id, type, timestamp and data) sent again through the delivery
// workflow, with the whole retry schedule, to the endpoint as it is configured now (its current URL
// and secret). One at a time per record: the record is claimed by a conditional update first, and
// the workflow's id (the record and its redelivery number) lets only one start. A number whose
// workflow has already run (a start that seemed to fail went through) is skipped, and a request that
// meets a number still running whose attempts are over gives its claim back, so the record never
// stays pending with nothing delivering it. A record left pending all the same (the process died
// between its claim and its start; the store was down through a stream's last attempt and its note)
// is taken as ended once the workflow that owns it is not running.
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import type { CallEventName } from '../contracts/events';
import { deliveryWorkflowId, isObjectIdHex, redeliveryWorkflowId, webhookAttemptTaskQueue } from '../contracts/ids';
import { callKeptByDeletion } from '../data/models/batch-call-deletion';
import { PhoneCall } from '../data/models/phone-call';
import { Webhook, type WebhookDoc } from '../data/models/webhook';
import { WebhookDelivery, type WebhookDeliveryDoc } from '../data/models/webhook-delivery';
import type { deliverWebhookEventsWorkflow } from '../../workflows/deliver-webhook';
import type { DeliveryWorkflowInput, WebhookTarget } from '../../workflows/types';
import { callWebhookTarget, endpointOfKey, teamWebhookTarget } from './targets';

export class RedeliveryRefused extends Error {
  override readonly name = 'RedeliveryRefused';
  constructor(
    readonly reason: 'not-found' | 'refused',
    message: string,
  ) {
    super(message);
  }
}

/** How long a redelivery's claim waits for its workflow to start before the claim counts as abandoned. */
const CLAIM_STARTS_WITHIN_MS = 60_000;

export interface Redelivery {
  /** Starts the redelivery and answers the record as it is now (state pending). */
  redeliver(teamId: string, deliveryId: string): Promise<WebhookDeliveryDoc>;
}

export function createRedelivery(deps: {
  client: Client;
  taskQueue: string;
  retryDelaysMs: readonly number[];
}): Redelivery {
  async function currentTarget(delivery: WebhookDeliveryDoc): Promise<WebhookTarget> {
    const endpoint = endpointOfKey(delivery.endpointKey);
    if (endpoint && 'webhookId' in endpoint && isObjectIdHex(endpoint.webhookId)) {
      const hook = await Webhook.findOne({
        _id: endpoint.webhookId,
        teamId: delivery.teamId.toHexString(),
      }).lean<WebhookDoc>();
      if (hook) return teamWebhookTarget(hook);
    } else if (endpoint && 'callWebhookIndex' in endpoint) {
      const call = await PhoneCall.findOne(
        { _id: delivery.phoneCallId, teamId: delivery.teamId },
        { phoneCallWebhooks: 1 },
      ).lean();
      // A call deleted while queued: its deletion note keeps its own webhooks (for a day and an hour),
      // so its `phoneCall.deleted` can be redelivered to them too.
      const hooks = call
        ? call.phoneCallWebhooks
        : ((await callKeptByDeletion(delivery.phoneCallId.toHexString()))?.ownWebhooks as
            Parameters<typeof callWebhookTarget>[0][] | undefined);
      const hook = hooks?.[endpoint.callWebhookIndex];
      if (hook) return callWebhookTarget(hook, endpoint.callWebhookIndex);
    }
    throw new RedeliveryRefused('refused', 'the endpoint of this delivery no longer exists');
  }

  /**
   * Whether the redelivery `workflowId` had made an attempt by the time the record held
   * `attemptsOnRecord` attempts (its own are numbered from its input's `firstAttempt`, with no clock
   * compared); null once it has ended.
   */
  async function attemptsMadeBy(workflowId: string, attemptsOnRecord: number): Promise<boolean | null> {
    const handle = deps.client.workflow.getHandle(workflowId);
    if ((await handle.describe()).status.name !== 'RUNNING') return null;
    const { events } = await handle.fetchHistory();
    const payload = events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    const input = payload ? (JSON.parse(Buffer.from(payload).toString('utf8')) as Partial<DeliveryWorkflowInput>) : {};
    const firstAttempt = input.redelivery?.firstAttempt;
    return firstAttempt !== undefined && attemptsOnRecord >= firstAttempt;
  }

  /**
   * What became of the workflow that owns a pending record (its latest redelivery's, or else the call's
   * stream to the endpoint): `running`; `ended`, leaving the record pending (or gone from the server
   * since); or `unstarted`, a redelivery claimed a while ago whose start never came (a claim's start
   * follows it within moments).
   */
  async function ownerOfPending(delivery: WebhookDeliveryDoc): Promise<'running' | 'ended' | 'unstarted'> {
    const n = delivery.redeliveries ?? 0;
    const workflowId =
      n > 0
        ? redeliveryWorkflowId(delivery._id.toHexString(), n)
        : deliveryWorkflowId(delivery.phoneCallId.toHexString(), delivery.endpointKey);
    try {
      const { status } = await deps.client.workflow.getHandle(workflowId).describe();
      return status.name === 'RUNNING' ? 'running' : 'ended';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // A claim whose start may still be on its way; else a redelivery never started, or a stream
      // whose history the server no longer keeps (past its retention).
      const claimedAt = (delivery.updatedAt as Date | undefined)?.getTime() ?? 0;
      if (Date.now() - claimedAt <= CLAIM_STARTS_WITHIN_MS) return 'running';
      return n > 0 ? 'unstarted' : 'ended';
    }
  }

  return {
    async redeliver(teamId, deliveryId) {
      const id = deliveryId.toLowerCase();
      const found = isObjectIdHex(id)
        ? await WebhookDelivery.findOne({ _id: id, teamId }).lean<WebhookDeliveryDoc>()
        : null;
      if (!found) throw new RedeliveryRefused('not-found', `webhook delivery ${deliveryId} not found`);
      const owner = found.state === 'pending' ? await ownerOfPending(found) : null;
      if (owner === 'running')
        throw new RedeliveryRefused('refused', 'this event is still being delivered; redeliver it once it has ended');
      if (!found.event?.type)
        throw new RedeliveryRefused('refused', 'this delivery was recorded before events were kept for redelivery');
      const target = await currentTarget(found);
      // A redelivery claimed and never started keeps its number: should its start land late after all,
      // the workflow id lets only one of the two run.
      let n = (found.redeliveries ?? 0) + (owner === 'unstarted' ? 0 : 1);
      // Claimed only if nobody changed the record since it was read: two redeliveries never race.
      let claimed = await WebhookDelivery.findOneAndUpdate(
        { _id: found._id, state: found.state, redeliveries: found.redeliveries ?? 0 },
        { $set: { state: 'pending', redeliveries: n } },
        { returnDocument: 'after' },
      ).lean<WebhookDeliveryDoc>();
      if (!claimed) throw new RedeliveryRefused('refused', 'this delivery is being redelivered already');
      // The record goes back to how it was (n - 1 redeliveries started), so it can be redelivered again.
      const release = () =>
        WebhookDelivery.updateOne(
          { _id: found._id, state: 'pending', redeliveries: n },
          { $set: { state: found.state, redeliveries: n - 1 } },
        );
      const callId = found.phoneCallId.toHexString();
      const input: DeliveryWorkflowInput = {
        callId,
        teamId: found.teamId.toHexString(),
        target,
        firstEvent: {
          eventId: found.eventId,
          type: found.event.type as CallEventName,
          timestamp: found.event.timestamp!,
          callId,
          teamId: found.teamId.toHexString(),
          data: found.event.data as Record<string, unknown>,
        },
        retryDelaysMs: [...deps.retryDelaysMs],
        redelivery: { firstAttempt: found.attempts.length + 1 },
        attemptTaskQueue: webhookAttemptTaskQueue(deps.taskQueue),
      };
      for (;;) {
        const workflowId = redeliveryWorkflowId(found._id.toHexString(), n);
        try {
          await deps.client.workflow.start<typeof deliverWebhookEventsWorkflow>('deliverWebhookEventsWorkflow', {
            workflowId,
            taskQueue: deps.taskQueue,
            args: [input],
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            staticSummary: `Redelivery of ${found.eventType} to ${new URL(target.url).host}`,
          });
          return claimed;
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
            // Not started, as far as this request can tell (a start that timed out may still have
            // run): released. A redelivery numbered n that did run is met below by the next one.
            await release();
            throw err;
          }
        }
        // Redelivery n was started already. Running: another request claimed the same number at the same
        // instant (on FerretDB 1.x both conditional updates can apply) and started it, or a start thought
        // failed did run. Until it has made an attempt the record is rightly pending (its attempts write
        // the state from then on). But one that had made an attempt when this claim applied had made its
        // last: the claim found the record not pending, and a retrying attempt writes `pending`. It
        // writes no more (it is still running, its completion a task away), so the claim goes back, or
        // the record would stay pending for good. The number stays taken either way (below).
        let madeAttempts: boolean | null;
        try {
          madeAttempts = await attemptsMadeBy(workflowId, claimed.attempts.length);
        } catch (err) {
          await release();
          throw err;
        }
        if (madeAttempts !== null) {
          if (madeAttempts) await release();
          throw new RedeliveryRefused('refused', 'this delivery is being redelivered already');
        }
        // Ended: a start this service took for failed had run (and its record was released since). The
        // number is taken, so this redelivery takes the next, as long as the record is still as claimed.
        const next = await WebhookDelivery.findOneAndUpdate(
          { _id: found._id, state: 'pending', redeliveries: n },
          { $set: { redeliveries: n + 1 } },
          { returnDocument: 'after' },
        ).lean<WebhookDeliveryDoc>();
        if (!next) throw new RedeliveryRefused('refused', 'this delivery is being redelivered already');
        claimed = next;
        n += 1;
      }
    },
  };
}

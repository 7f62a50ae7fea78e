// Starts the workflows behind call records, outbox style: a dispatch batch is written `pending`
// before its calls, and marked `started` once every call's workflow exists. A batch left pending
// (the API died in between, Temporal was unreachable) is finished by the reconciler below.
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { Types } from 'mongoose';
import { callWorkflowId } from '../contracts/ids';
import { describeRedialPolicy } from '../contracts/redial';
import { SA_PROVIDER, SA_SCHEDULED_FOR, SA_STATUS, SA_TEAM_ID, SA_TO_NUMBER } from '../contracts/search-attributes';
import type { ProviderName } from '../contracts/providers';
import { CallTemplate } from '../data/models/call-template';
import { DispatchBatch } from '../data/models/dispatch-batch';
import { PhoneCall, type PhoneCallDoc } from '../data/models/phone-call';
import type { Logger } from '../logger';
import type { phoneCallWorkflow } from '../../workflows/call';
import type { CallWorkflowInput } from '../../workflows/types';
import { DIAL_PLAN_FIELDS, dialPlanOf, type DialPlan } from './prepare-calls';
import { mapBounded } from './run-bounded';

export interface Dispatcher {
  /** Writes a pending dispatch batch for `size` calls about to be inserted. */
  openBatch(teamId: string, size: number): Promise<Types.ObjectId>;
  /** Starts the call's workflow; an already started one counts as started. */
  start(call: PhoneCallDoc, plan: DialPlan): Promise<void>;
  /** Every call of the batch has its workflow. */
  closeBatch(batchId: Types.ObjectId): Promise<void>;
  /** Removes a batch whose calls were never written or were removed again. */
  dropBatch(batchId: Types.ObjectId): Promise<void>;
}

export function createDispatcher(deps: {
  client: Client;
  taskQueue: string;
  ringTimeoutSeconds: number;
  /** False only to measure the service without its pacer. */
  paced?: boolean;
}): Dispatcher {
  return {
    async openBatch(teamId, size) {
      const batch = await DispatchBatch.create({ teamId: new Types.ObjectId(teamId), size, state: 'pending' });
      return batch._id;
    },
    async start(call, plan) {
      const input: CallWorkflowInput = {
        callId: call._id.toHexString(),
        teamId: call.teamId.toHexString(),
        toPhoneNumber: call.toPhoneNumber,
        provider: call.telephonyProvider as ProviderName,
        record: call.record,
        scheduledFor: call.callDelayedUntil ? call.callDelayedUntil.toISOString() : null,
        maxDurationSeconds: plan.maxDurationSeconds,
        ringTimeoutSeconds: deps.ringTimeoutSeconds,
        paced: deps.paced ?? true,
        ...(plan.callingWindow
          ? { callingWindow: plan.callingWindow, calleeTimeZones: [...call.calleeTimeZones] }
          : {}),
        ...(plan.redialPolicy ? { redialPolicy: plan.redialPolicy } : {}),
        ...(plan.machineDetection ? { machineDetection: plan.machineDetection } : {}),
      };
      try {
        // Started by name: the workflow module belongs in the worker's sandbox, not in this process.
        await deps.client.workflow.start<typeof phoneCallWorkflow>('phoneCallWorkflow', {
          workflowId: callWorkflowId(input.callId),
          taskQueue: deps.taskQueue,
          // One workflow per call, ever: a call that has ended is never started again.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [input],
          typedSearchAttributes: [
            { key: SA_TEAM_ID, value: input.teamId },
            { key: SA_STATUS, value: 'queued' },
            { key: SA_TO_NUMBER, value: input.toPhoneNumber },
            { key: SA_PROVIDER, value: input.provider },
            ...(call.callDelayedUntil ? [{ key: SA_SCHEDULED_FOR, value: call.callDelayedUntil }] : []),
          ],
          memo: {
            summary: `queued · ${input.toPhoneNumber} via ${input.provider}${input.scheduledFor ? ` at ${input.scheduledFor}` : ''}`,
          },
          staticSummary: `Call to ${input.toPhoneNumber} via ${input.provider}`,
          staticDetails: callDetails(input, call.callTemplateId.toHexString()),
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },
    async closeBatch(batchId) {
      await DispatchBatch.updateOne({ _id: batchId }, { $set: { state: 'started' } });
    },
    async dropBatch(batchId) {
      await DispatchBatch.deleteOne({ _id: batchId });
    },
  };
}

/**
 * Starts the workflows of every call in batches still pending after `olderThanMs`, then closes
 * those batches. Returns how many workflows it asked for (already running ones included).
 */
export async function reconcilePendingCalls(deps: {
  dispatcher: Dispatcher;
  logger: Logger;
  olderThanMs: number;
  now?: Date;
}): Promise<number> {
  const cutoff = new Date((deps.now ?? new Date()).getTime() - deps.olderThanMs);
  const batches = await DispatchBatch.find({ state: 'pending', createdAt: { $lt: cutoff } })
    .sort({ createdAt: 1 })
    .limit(20)
    .lean();
  let started = 0;
  for (const batch of batches) {
    const calls = await PhoneCall.find({ dispatchBatchId: batch._id }).lean();
    const templates = new Map<string, DialPlan>();
    for (const id of new Set(calls.map((c) => c.callTemplateId.toHexString()))) {
      templates.set(id, await dialPlanFor(id));
    }
    await mapBounded(calls, 16, (call) =>
      deps.dispatcher.start(call, templates.get(call.callTemplateId.toHexString())!),
    );
    await deps.dispatcher.closeBatch(batch._id);
    started += calls.length;
    deps.logger.warn(
      { batchId: batch._id.toHexString(), calls: calls.length },
      'reconciler started the workflows of a batch left pending',
    );
  }
  return started;
}

/** The dial plan of a template by id (a template removed since keeps the defaults). */
export async function dialPlanFor(templateId: string | Types.ObjectId): Promise<DialPlan> {
  return dialPlanOf(await CallTemplate.findById(templateId, DIAL_PLAN_FIELDS).lean());
}

/** What an operator reads under the call's summary in the Temporal UI (Temporal's markdown). */
function callDetails(input: CallWorkflowInput, templateId: string): string {
  const lines = [
    `**Phone call** \`${input.callId}\` of team \`${input.teamId}\`, template \`${templateId}\``,
    '',
    `- to ${input.toPhoneNumber} via ${input.provider}${input.record ? ', recorded' : ''}`,
    `- ${input.scheduledFor ? `scheduled for ${input.scheduledFor}` : 'placed at once'}` +
      `${input.paced ? ", through the team's pacer" : ''}`,
    `- hung up after ${input.ringTimeoutSeconds ?? 120} s of ringing or ${input.maxDurationSeconds} s of talk`,
  ];
  if (input.callingWindow) lines.push(`- calling hours in ${(input.calleeTimeZones ?? []).join(', ') || 'UTC'}`);
  if (input.redialPolicy) lines.push(`- redial: ${describeRedialPolicy(input.redialPolicy)}`);
  if (input.machineDetection) lines.push(`- answering machines: ${input.machineDetection}`);
  return lines.join('\n');
}

// Starts the workflows behind call records, outbox style: a dispatch batch is written `pending`
// before its calls, and marked `started` once every call's workflow exists. A batch left pending
// (the API died in between, Temporal was unreachable) is finished by the reconciler below when all
// its calls were written, and discarded when their writing was cut short: its request never got an
// answer, so nobody knows of those calls, and its retry writes them all again. A started batch is
// kept only while a retry under its request's Idempotency-Key may take it over (idempotency.ts):
// else every create would leave a record behind for good, and the reconciler's search for pending
// ones, a scan on FerretDB, would grow with every call ever made.
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Client,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { Types } from 'mongoose';
import { subscribesTo } from '../contracts/events';
import { callWorkflowId } from '../contracts/ids';
import { describeRedialPolicy } from '../contracts/redial';
import { SA_PROVIDER, SA_SCHEDULED_FOR, SA_STATUS, SA_TEAM_ID, SA_TO_NUMBER } from '../contracts/search-attributes';
import type { ProviderName } from '../contracts/providers';
import { CallTemplate } from '../data/models/call-template';
import { callsDeletedFromBatch } from '../data/models/batch-call-deletion';
import { DispatchBatch } from '../data/models/dispatch-batch';
import { fileStateOf, type FileState } from '../data/models/file-control';
import { IDEMPOTENCY_WINDOW_MS } from '../data/models/idempotency-record';
import { PhoneCall, type PhoneCallDoc } from '../data/models/phone-call';
import { newDocument, writesTogether } from '../data/writes-together';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { phoneCallWorkflow } from '../../workflows/call';
import type { CallWorkflowInput } from '../../workflows/types';
import { DIAL_PLAN_FIELDS, dialPlanOf, type DialPlan } from './prepare-calls';
import { mapBounded } from '../concurrency/run-bounded';
import { callPriority } from '../temporal/task-priority';

export interface Dispatcher {
  /** Writes a pending dispatch batch, with the id given, for `size` calls about to be inserted. */
  openBatch(teamId: string, size: number, batchId: Types.ObjectId): Promise<Types.ObjectId>;
  /**
   * Starts the call's workflow; an already started one counts as started. `atCreate`: what the
   * creating request read of the team's webhooks (absent: a start later on, by the reconciler).
   */
  start(call: PhoneCallDoc, plan: DialPlan, atCreate?: CreateContext, options?: StartOptions): Promise<void>;
  /**
   * Runs `update` on the call's workflow, starting the workflow in the same request if its batch has
   * not started it yet (a control reaching a call before its create finished, or after it died).
   */
  updateWithStart<Ret, Args extends unknown[]>(
    call: PhoneCallDoc,
    plan: DialPlan,
    update: UpdateDefinition<Ret, Args>,
    args: Args,
  ): Promise<Ret>;
  /**
   * Every call of the batch has its workflow: the batch is marked started when `keep` (a retry may
   * still take it over), else removed.
   */
  closeBatch(batchId: Types.ObjectId, options: { keep: boolean }): Promise<void>;
  /**
   * Whether the call's workflow exists (a start that answered an error may have gone through); throws
   * when Temporal cannot say.
   */
  workflowExists(callId: string): Promise<boolean>;
  /** Removes a batch whose calls were never written or were removed again. */
  dropBatch(batchId: Types.ObjectId): Promise<void>;
  /** Removes a started batch that no retry will ask for again; a pending one is the reconciler's. */
  forgetBatch(batchId: Types.ObjectId): Promise<void>;
}

/** What a create request knows that spares each new call's workflow a lookup. */
export interface CreateContext {
  /** Every event the team's webhooks subscribe to, read by the request (teamWebhookEvents). */
  teamWebhookEvents: readonly string[];
  /** The last control of the calls' file, read once the calls were written (absent: no file). */
  fileState?: FileState;
}

export interface StartOptions {
  /** The file's control to start under, instead of the one stored (read once for a whole batch). */
  fileState?: FileState;
}

/** Whether a call of a file starts paused: its file was paused, or cancelled (left to the control's delete). */
async function startsPaused(call: PhoneCallDoc, atCreate?: CreateContext, options?: StartOptions): Promise<boolean> {
  if (!call.fileId) return false;
  const state = options?.fileState ?? atCreate?.fileState ?? (await fileStateOf(call.teamId, call.fileId));
  return state !== 'resumed';
}

/** What the workflows of new calls are started with, from the configuration. */
export type DispatchConfig = Pick<
  Config,
  'TEMPORAL_TASK_QUEUE' | 'RING_TIMEOUT_SECONDS' | 'PACING_ENABLED' | 'CALL_STATUS_POLL_SECONDS'
>;

/** A call due sooner than this starts at once: holding its first task would save nothing. */
const MIN_START_DELAY_MS = 1_000;

/**
 * How long the server holds a new call's first workflow task: until the call is due. Only for a call
 * whose creation nothing watches (no `phoneCall.queued` to send, which its first task would): until it
 * is due it then costs the worker nothing, neither a task nor a place in its cache. An Update (delete,
 * pause, resume) runs the workflow at once; a signal would not, and none is sent to a queued call.
 */
function startDelayOf(callDelayedUntil: Date | null | undefined): number | undefined {
  const ms = callDelayedUntil ? callDelayedUntil.getTime() - Date.now() : 0;
  return ms >= MIN_START_DELAY_MS ? ms : undefined;
}

/** The batches' writes of concurrent creates, a bulk write at a time (a create's batch is opened and closed). */
const writeBatch = writesTogether(() => DispatchBatch.collection);

export function createDispatcher(deps: { client: Client; config: DispatchConfig }): Dispatcher {
  const { config } = deps;
  /** What the workflow of a call is started with: its input, id, queue, search attributes and metadata. */
  async function startOptionsOf(
    call: PhoneCallDoc,
    plan: DialPlan,
    atCreate?: CreateContext,
    options?: StartOptions,
  ): Promise<WorkflowStartOptions<typeof phoneCallWorkflow>> {
    const paused = await startsPaused(call, atCreate, options);
    const ownWebhookEvents = call.phoneCallWebhooks.map((hook) => hook.subscribedEvent);
    const queuedEventUnsubscribed =
      atCreate !== undefined &&
      !subscribesTo(atCreate.teamWebhookEvents, 'phoneCall.queued') &&
      !subscribesTo(ownWebhookEvents, 'phoneCall.queued');
    const input: CallWorkflowInput = {
      callId: call._id.toHexString(),
      teamId: call.teamId.toHexString(),
      toPhoneNumber: call.toPhoneNumber,
      provider: call.telephonyProvider as ProviderName,
      record: call.record,
      scheduledFor: call.callDelayedUntil ? call.callDelayedUntil.toISOString() : null,
      maxDurationSeconds: plan.maxDurationSeconds,
      ringTimeoutSeconds: config.RING_TIMEOUT_SECONDS,
      ...(config.CALL_STATUS_POLL_SECONDS > 0 ? { statusPollSeconds: config.CALL_STATUS_POLL_SECONDS } : {}),
      // False only to measure the service without its pacer.
      paced: config.PACING_ENABLED,
      ...(plan.callingWindow ? { callingWindow: plan.callingWindow, calleeTimeZones: [...call.calleeTimeZones] } : {}),
      ...(plan.redialPolicy ? { redialPolicy: plan.redialPolicy } : {}),
      ...(plan.machineDetection ? { machineDetection: plan.machineDetection } : {}),
      ownWebhookEvents,
      ...(queuedEventUnsubscribed ? { queuedEventUnsubscribed } : {}),
      ...(paused ? { startsPaused: true } : {}),
      ringingWithDial: true,
      slotsByLocalActivity: true,
      finalWithCapture: true,
      captureOutlivesCancel: true,
      endOutlivesCancel: true,
      deleteOutlivesCancel: true,
      pauseShownWhileRedialWaits: true,
      slotWaitEndsAtClose: true,
      statusWritesOutliveCancel: true,
      writesNameAttempt: true,
      cancelBeforeRedialQueues: true,
      rateLimitWaitsAsQueued: true,
      pauseShownWhileScheduled: true,
      ringTimeoutAtProvider: true,
      hangsUpOnGreetingEnd: true,
      streamsEndWithFinalEvent: true,
      streamEventsByActivity: true,
      routeWithWrites: true,
    };
    // A paused call runs at once, to show `paused` (a held first task would show nothing until due).
    const startDelayMs = queuedEventUnsubscribed && !paused ? startDelayOf(call.callDelayedUntil) : undefined;
    return {
      workflowId: callWorkflowId(input.callId),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      ...(startDelayMs !== undefined ? { startDelay: startDelayMs } : {}),
      // One workflow per call, ever: a call that has ended is never started again.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      priority: callPriority(call.callOrigin),
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
    };
  }

  return {
    async openBatch(teamId, size, batchId) {
      const now = new Date();
      const batch = await newDocument(DispatchBatch, {
        _id: batchId,
        teamId: new Types.ObjectId(teamId),
        size,
        state: 'pending',
        createdAt: now,
        updatedAt: now,
      });
      await writeBatch({ insertOne: { document: batch.toBSON() } });
      return batch._id;
    },
    async start(call, plan, atCreate, options) {
      const startOptions = await startOptionsOf(call, plan, atCreate, options);
      try {
        // Started by name: the workflow module belongs in the worker's sandbox, not in this process.
        await deps.client.workflow.start<typeof phoneCallWorkflow>('phoneCallWorkflow', startOptions);
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },
    async updateWithStart(call, plan, update, args) {
      // Started as it was, unpaused and not held (a start without `atCreate` has no start delay): the
      // update reaches the workflow with its first task, before the workflow can begin a dial. An
      // ended workflow is not started again (REJECT_DUPLICATE): that fails as a start would.
      const startOptions = await startOptionsOf(call, plan, undefined, { fileState: 'resumed' });
      return deps.client.workflow.executeUpdateWithStart(update, {
        args,
        startWorkflowOperation: new WithStartWorkflowOperation<typeof phoneCallWorkflow>('phoneCallWorkflow', {
          ...startOptions,
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        }),
      });
    },
    async closeBatch(batchId, { keep }) {
      await writeBatch(
        keep
          ? { updateOne: { filter: { _id: batchId }, update: { $set: { state: 'started', updatedAt: new Date() } } } }
          : { deleteOne: { filter: { _id: batchId } } },
      );
    },
    async workflowExists(callId) {
      try {
        await deps.client.workflow.getHandle(callWorkflowId(callId)).describe();
        return true;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      }
    },
    async dropBatch(batchId) {
      await DispatchBatch.deleteOne({ _id: batchId });
    },
    async forgetBatch(batchId) {
      await DispatchBatch.deleteOne({ _id: batchId, state: 'started' });
    },
  };
}

/**
 * A batch whose calls are not all written this long after it was opened belongs to a request that
 * died (requests time out long before); a retry of it with its Idempotency-Key does not wait for this.
 */
const INCOMPLETE_BATCH_DEAD_AFTER_MS = 15 * 60 * 1000;

/**
 * The calls of a batch in the order they were written (ObjectIds rise within one process), when
 * every one of them was; null when the batch is unknown or its writing was cut short (or, pending,
 * its file was cancelled since).
 */
export async function writtenBatchCalls(batchId: Types.ObjectId): Promise<PhoneCallDoc[] | null> {
  const batch = await DispatchBatch.findById(batchId, { size: 1, state: 1 }).lean();
  if (!batch) return null;
  const calls = await PhoneCall.find({ dispatchBatchId: batchId }).sort({ _id: 1 }).lean();
  // A started batch had every call written and its workflow started: fewer now were deleted since
  // (queued calls cancelled). Those left are still the request's, never to be written again.
  if (batch.state === 'started') return calls;
  if (!(await writtenWhole(batchId, batch.size, calls))) return null;
  // A chunk of a file cancelled before its request read the file's control (it died first) is not
  // kept, as that request would have answered 400: counted as cut short, it is discarded.
  const file = calls.find((c) => c.fileId);
  if (file?.fileId && (await fileStateOf(file.teamId, file.fileId)) === 'cancelled') return null;
  return calls;
}

/**
 * Whether a pending batch was written whole: its calls (as read) and those deleted since make its
 * size. A deletion is noted before its call goes, so a call and its note may both be seen: each counts
 * once.
 */
async function writtenWhole(batchId: Types.ObjectId, size: number, calls: Array<{ _id: Types.ObjectId }>) {
  const deleted = await callsDeletedFromBatch(batchId);
  const ids = new Set([...calls.map((c) => c._id.toHexString()), ...deleted.map((id) => id.toHexString())]);
  return ids.size === size;
}

/**
 * Where the start of a batch's workflows stands: `awaiting` (pending, every call written: its request
 * or the reconciler starts them), `writing` (pending, not all written yet, and young enough that its
 * request may still be writing them), `cut-short` (pending, not all written, older: discarded, and a
 * retry of its request writes them all again), or `started` (every workflow started, the batch kept or
 * since removed).
 */
export type BatchStart = 'awaiting' | 'writing' | 'cut-short' | 'started';

export async function batchStartOf(batchId: Types.ObjectId, now = Date.now()): Promise<BatchStart> {
  const batch = await DispatchBatch.findById(batchId, { size: 1, state: 1, createdAt: 1 }).lean();
  // A pending batch is removed only with its calls (discarded or dropped): a call read before that
  // counts as started, and its workflow lookup says the rest.
  if (!batch || batch.state === 'started') return 'started';
  // Written whole as writtenBatchCalls counts it (ids only), but whatever its file's control since:
  // a control meeting the batch acts on its calls itself, while the request that wrote them may
  // still start them under the control it read before.
  const calls = await PhoneCall.find({ dispatchBatchId: batchId }, { _id: 1 }).lean();
  if (await writtenWhole(batchId, batch.size, calls)) return 'awaiting';
  return batch.createdAt.getTime() > now - INCOMPLETE_BATCH_DEAD_AFTER_MS ? 'writing' : 'cut-short';
}

/**
 * The batch's record as it stands: `pending`, `started`, or `gone` (discarded or dropped with its
 * calls, or removed once started and answered for).
 */
export async function batchRecordState(batchId: Types.ObjectId): Promise<'pending' | 'started' | 'gone'> {
  const batch = await DispatchBatch.findById(batchId, { state: 1 }).lean();
  return batch ? batch.state : 'gone';
}

/**
 * Removes a batch whose calls were not all written, and those that were: no workflow has them. With
 * `keepUnlessRemoved`, the batch's record stays when fewer calls than that were still queued: one of
 * them is no longer queued, so its workflow did start, and a retry's takeover (or the reconciler) finds
 * the batch whole and answers with that call instead of writing and dialling another.
 */
export async function discardBatch(batchId: Types.ObjectId, keepUnlessRemoved?: number): Promise<number> {
  const { deletedCount } = await PhoneCall.deleteMany({ dispatchBatchId: batchId, status: 'queued' });
  if (keepUnlessRemoved === undefined || deletedCount >= keepUnlessRemoved)
    await DispatchBatch.deleteOne({ _id: batchId });
  return deletedCount;
}

/**
 * Starts the workflow of each call of a written batch (already running ones count), then closes it,
 * kept: whether a retry may still take it over is not known here (the sweep below removes it).
 */
export async function startWrittenBatch(
  dispatcher: Dispatcher,
  batchId: Types.ObjectId,
  calls: PhoneCallDoc[],
): Promise<void> {
  const plans = new Map<string, DialPlan>();
  for (const id of new Set(calls.map((c) => c.callTemplateId.toHexString()))) plans.set(id, await dialPlanFor(id));
  // Read once per file, not per call.
  const fileStates = new Map<string, FileState>();
  for (const call of calls) {
    if (call.fileId && !fileStates.has(call.fileId))
      fileStates.set(call.fileId, await fileStateOf(call.teamId, call.fileId));
  }
  await mapBounded(calls, 16, (call) =>
    dispatcher.start(call, plans.get(call.callTemplateId.toHexString())!, undefined, {
      ...(call.fileId ? { fileState: fileStates.get(call.fileId) } : {}),
    }),
  );
  await dispatcher.closeBatch(batchId, { keep: true });
}

/**
 * How long a started batch is kept at most: past the Idempotency-Key window no retry takes its
 * request's batch over (idempotency.ts), with an hour's margin for clocks and slow requests.
 */
export const STARTED_BATCH_KEPT_MS = IDEMPOTENCY_WINDOW_MS + 60 * 60 * 1000;

/**
 * Removes started batches older than STARTED_BATCH_KEPT_MS: those whose request died between the
 * close and storing its answer, or that the reconciler or a takeover closed. Returns how many.
 */
export async function sweepStartedBatches(now = new Date()): Promise<number> {
  const { deletedCount } = await DispatchBatch.deleteMany({
    state: 'started',
    updatedAt: { $lt: new Date(now.getTime() - STARTED_BATCH_KEPT_MS) },
  });
  return deletedCount;
}

/**
 * Finishes batches still pending after `olderThanMs`: starts the workflows of those whose calls were
 * all written, discards the others. Returns how many workflows it asked for (running ones included).
 */
export async function reconcilePendingCalls(deps: {
  dispatcher: Dispatcher;
  logger: Logger;
  olderThanMs: number;
  now?: Date;
}): Promise<number> {
  const now = (deps.now ?? new Date()).getTime();
  const cutoff = new Date(now - deps.olderThanMs);
  const batches = await DispatchBatch.find({ state: 'pending', createdAt: { $lt: cutoff } })
    .sort({ createdAt: 1 })
    .limit(20)
    .lean();
  let started = 0;
  for (const batch of batches) {
    const calls = await writtenBatchCalls(batch._id);
    if (!calls) {
      // Its request may still be writing (a large batch on a slow store): only an old one is dead.
      if (batch.createdAt.getTime() > now - INCOMPLETE_BATCH_DEAD_AFTER_MS) continue;
      const removed = await discardBatch(batch._id);
      deps.logger.warn(
        { batchId: batch._id.toHexString(), size: batch.size, removed },
        'reconciler discarded a batch whose calls were not all written (its request got no answer)',
      );
      continue;
    }
    await startWrittenBatch(deps.dispatcher, batch._id, calls);
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

// Reading the service from outside: its call records (MongoDB, the same database the service uses)
// and its call workflows (Temporal visibility), as the checks need them.
import type { Client } from '@temporalio/client';
import { Types } from 'mongoose';
import { isTerminal } from '../../src/contracts/call-status';
import { callIdFromWorkflowId, callWorkflowId } from '../../src/contracts/ids';
import { SA_TEAM_ID } from '../../src/contracts/search-attributes';
import { PhoneCall } from '../../src/data/models/phone-call';
import type { StoredCall } from './checks';
import { sleep } from './http';
import type { ReceivedEvent } from './receiver';

/** The calls of a team (of one file, if given), as the checks read them. */
export async function storedCalls(scope: { teamId: string; fileId?: string }): Promise<StoredCall[]> {
  const docs = await PhoneCall.find(
    { teamId: new Types.ObjectId(scope.teamId), ...(scope.fileId ? { fileId: scope.fileId } : {}) },
    { status: 1, statusExtraInfo: 1, nameOfHuman: 1, telephonyProvider: 1, toPhoneNumber: 1, attempts: 1 },
  ).lean();
  return docs.map((doc) => ({
    _id: doc._id.toHexString(),
    status: doc.status,
    statusCode: doc.statusExtraInfo?.statusCode ?? null,
    element: doc.nameOfHuman ?? null,
    provider: doc.telephonyProvider,
    to: doc.toPhoneNumber,
    attempts: (doc.attempts ?? []).map((a) => ({ providerCallId: a.providerCallId ?? null })),
  }));
}

/** Call ids whose workflow is Running on the task queue. */
export async function runningCallWorkflows(client: Client, taskQueue: string): Promise<Set<string>> {
  const running = new Set<string>();
  const query = `ExecutionStatus="Running" AND TaskQueue="${taskQueue}"`;
  for await (const workflow of client.workflow.list({ query, pageSize: 1000 })) {
    const callId = callIdFromWorkflowId(workflow.workflowId);
    if (callId) running.add(callId);
  }
  return running;
}

/**
 * Which of `callIds` still have a Running workflow once `graceMs` has passed (or sooner, as soon as
 * none has): a workflow ends moments after its call does.
 */
export async function stillRunningAfterGrace(
  client: Client,
  taskQueue: string,
  callIds: Iterable<string>,
  graceMs: number,
): Promise<Set<string>> {
  const ids = new Set(callIds);
  const deadline = Date.now() + graceMs;
  for (;;) {
    const running = new Set([...(await runningCallWorkflows(client, taskQueue))].filter((id) => ids.has(id)));
    if (running.size === 0 || Date.now() > deadline) return running;
    await sleep(500);
  }
}

/** Call ids among `callIds` that have a workflow in any state (a workflow started for them, ever). */
export async function callsWithWorkflows(client: Client, teamId: string, callIds: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const query = `${SA_TEAM_ID.name}="${teamId}" AND WorkflowType="phoneCallWorkflow"`;
  for await (const workflow of client.workflow.list({ query, pageSize: 1000 })) {
    const callId = callIdFromWorkflowId(workflow.workflowId);
    if (callId) found.add(callId);
  }
  // Visibility may lag behind a start: ask for the few it does not list yet one by one.
  for (const id of callIds.filter((id) => !found.has(id))) {
    try {
      await client.workflow.getHandle(callWorkflowId(id)).describe();
      found.add(id);
    } catch {
      // no workflow for it (yet)
    }
  }
  return found;
}

export interface Settled {
  /** Every call ended (or was deleted) and its terminal event reached the receiver. */
  settled: boolean;
  /** Calls not yet terminal when the wait ended: status (status code). */
  notTerminal: Map<string, string>;
  /** Terminal (or deleted) calls whose terminal event had not reached the receiver when the wait ended. */
  undelivered: number;
  seconds: number;
  /** Why the wait could not tell (the database unreadable to the end). */
  problem?: string;
}

/**
 * Waits until every call of the scope is terminal and its terminal event has reached the receiver,
 * or until the deadline. `expectGone`: calls the scenario deleted, whose `phoneCall.deleted` must arrive.
 */
export async function waitUntilSettled(options: {
  scope: { teamId: string; fileId?: string };
  events: () => ReceivedEvent[];
  deadlineMs: number;
  expectGone?: Set<string>;
}): Promise<Settled> {
  const started = Date.now();
  for (;;) {
    // The database may still be coming back (database-down): a failed read is just another poll.
    const calls = await storedCalls(options.scope).catch(() => null);
    if (!calls) {
      if (Date.now() - started > options.deadlineMs)
        return {
          settled: false,
          notTerminal: new Map(),
          undelivered: 0,
          seconds: 0,
          problem: 'the database could not be read',
        };
      await sleep(500);
      continue;
    }
    const received = new Set(options.events().map((e) => `${e.callId} ${e.type}`));
    const notTerminal = new Map(
      calls
        .filter((c) => !isTerminal(c.status))
        .map((c) => [c._id, `${c.status} (${c.statusCode ?? 'no status code'})`] as const),
    );
    const stored = new Set(calls.map((c) => c._id));
    const undelivered =
      calls.filter((c) => isTerminal(c.status) && !received.has(`${c._id} phoneCall.${c.status}`)).length +
      [...(options.expectGone ?? [])].filter((id) => !stored.has(id) && !received.has(`${id} phoneCall.deleted`))
        .length;
    const seconds = (Date.now() - started) / 1000;
    if (notTerminal.size === 0 && undelivered === 0) return { settled: true, notTerminal, undelivered, seconds };
    if (Date.now() - started > options.deadlineMs) return { settled: false, notTerminal, undelivered, seconds };
    await sleep(500);
  }
}

// Ids, workflow ids and task queue names: the one place they are spelled.
export const DEFAULT_TASK_QUEUE = 'phone-calls';

/**
 * The queue webhook attempts run on, beside the calls' own: a receiver that hangs holds only
 * attempts' slots (WEBHOOK_MAX_CONCURRENT_ATTEMPTS), never those of calls' dials, writes and hang-ups.
 */
export function webhookAttemptTaskQueue(callTaskQueue: string): string {
  return `${callTaskQueue}-webhooks`;
}

/** A MongoDB ObjectId as this service writes it: 24 lower-case hex digits. */
export const OBJECT_ID_HEX = '[0-9a-f]{24}';
/** The same, as input may spell it (bodies and queries lower-case it). */
export const OBJECT_ID_HEX_ANY_CASE = '[0-9a-fA-F]{24}';
const OBJECT_ID = new RegExp(`^${OBJECT_ID_HEX}$`);

/** Whether `value` is an id as this service writes it (lower case; input is lower-cased first where it is tolerated). */
export function isObjectIdHex(value: string): boolean {
  return OBJECT_ID.test(value);
}

export function callWorkflowId(callId: string): string {
  return `phoneCall-${callId}`;
}

export function callIdFromWorkflowId(workflowId: string): string | undefined {
  const match = new RegExp(`^phoneCall-(${OBJECT_ID_HEX})$`).exec(workflowId);
  return match?.[1];
}

/** The call a workflow works for: its own call workflow, or one of its webhook delivery streams. */
export function callIdOfAnyWorkflowId(workflowId: string): string | undefined {
  return callIdFromWorkflowId(workflowId) ?? new RegExp(`^webhookDelivery-(${OBJECT_ID_HEX})-`).exec(workflowId)?.[1];
}

export function deliveryWorkflowId(callId: string, endpointKey: string): string {
  return `webhookDelivery-${callId}-${endpointKey}`;
}

/** An operator's n-th redelivery of one delivery record (POST /v1/webhookDeliveries/{id}/redeliver). */
export function redeliveryWorkflowId(deliveryId: string, n: number): string {
  return `webhookRedelivery-${deliveryId}-${n}`;
}

/** Which redelivery a workflow id names (its n), or 0 for any other workflow (a call's own stream). */
export function redeliveryNumberOf(workflowId: string): number {
  const n = new RegExp(`^webhookRedelivery-${OBJECT_ID_HEX}-([1-9][0-9]*)$`).exec(workflowId)?.[1];
  return n === undefined ? 0 : Number(n);
}

/** One pacer per team: it hands out the team's dial slots (workflows/team-pacer.ts). */
export function pacerWorkflowId(teamId: string): string {
  return `teamPacer-${teamId}`;
}

// Workflow ids and task queue names: the one place they are spelled.
export const DEFAULT_TASK_QUEUE = 'phone-calls';

export function callWorkflowId(callId: string): string {
  return `phoneCall-${callId}`;
}

export function callIdFromWorkflowId(workflowId: string): string | undefined {
  const match = /^phoneCall-([0-9a-f]{24})$/.exec(workflowId);
  return match?.[1];
}

export function deliveryWorkflowId(callId: string, endpointKey: string): string {
  return `webhookDelivery-${callId}-${endpointKey}`;
}

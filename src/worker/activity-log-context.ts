// Every log line an activity writes names its call and workflow, whichever logger wrote it: pino asks
// this for each line (`mixin`), and inside an activity the SDK knows which one is running.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { callIdOfAnyWorkflowId } from '../contracts/ids';

/** The call an activity's input names, for activities whose workflow id does not (a redelivery's). */
const callIdOfInput = new AsyncLocalStorage<string>();

export function activityLogContext(): object {
  let info: Context['info'];
  try {
    info = Context.current().info;
  } catch {
    return {}; // not inside an activity
  }
  // Absent for a standalone activity (not started by a workflow).
  const workflowId = info.workflowExecution?.workflowId;
  const phoneCallId = (workflowId ? callIdOfAnyWorkflowId(workflowId) : undefined) ?? callIdOfInput.getStore();
  return {
    ...(phoneCallId ? { phoneCallId } : {}),
    ...(workflowId ? { workflowId } : {}),
    activity: info.activityType,
  };
}

/**
 * Runs each activity with the `callId` its input gives (when it gives one) where activityLogContext
 * finds it: an operator's redelivery runs as `webhookRedelivery-<deliveryId>-<n>`, which names no call.
 */
export class ActivityCallIdFromInput implements ActivityInboundCallsInterceptor {
  execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const callId = (input.args[0] as { callId?: unknown } | undefined)?.callId;
    return typeof callId === 'string' ? callIdOfInput.run(callId, () => next(input)) : next(input);
  }
}

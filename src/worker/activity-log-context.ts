// Every log line an activity writes names its call and workflow, whichever logger wrote it: pino asks
// this for each line (`mixin`), and inside an activity the SDK knows which one is running.
import { Context } from '@temporalio/activity';
import { callIdOfAnyWorkflowId } from '../contracts/ids';

export function activityLogContext(): object {
  let info: Context['info'];
  try {
    info = Context.current().info;
  } catch {
    return {}; // not inside an activity
  }
  // Absent for a standalone activity (not started by a workflow).
  const workflowId = info.workflowExecution?.workflowId;
  const phoneCallId = workflowId ? callIdOfAnyWorkflowId(workflowId) : undefined;
  return {
    ...(phoneCallId ? { phoneCallId } : {}),
    ...(workflowId ? { workflowId } : {}),
    activity: info.activityType,
  };
}

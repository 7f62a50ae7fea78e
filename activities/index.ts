// The worker registers these; workflows import only the type.
import { createCallRecordActivities } from './call-record';
import { createCallingHoursActivities } from './calling-hours';
import { createCaptureActivities } from './capture';
import type { ActivityDeps } from './deps';
import { createDialActivities } from './dial';
import { createPacingActivities } from './pacing';
import { createWebhookActivities } from './webhooks';

export type { ActivityDeps } from './deps';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createCallRecordActivities(deps),
    ...createCallingHoursActivities(),
    ...createDialActivities(deps),
    ...createCaptureActivities(deps),
    ...createWebhookActivities(deps),
    ...createPacingActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

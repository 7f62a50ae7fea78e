// Counts every failed activity attempt by activity and error type (an ApplicationFailure's type, or
// the error's class name), for the worker's /metrics.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { WorkerMetrics } from '../observability/metrics';

export class ActivityFailureMetrics implements ActivityInboundCallsInterceptor {
  constructor(private readonly metrics: WorkerMetrics) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      const type =
        err instanceof ApplicationFailure && err.type ? err.type : err instanceof Error ? err.name : 'unknown';
      this.metrics.activityFailed(Context.current().info.activityType, type);
      throw err;
    }
  }
}

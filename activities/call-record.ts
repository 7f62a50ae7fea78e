// Activities that write the call's record: status changes and deletion while queued.
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES } from '../src/contracts/failures';
import { applyStatusChange, type StatusChange } from '../src/data/call-store';
import { PhoneCall } from '../src/data/models/phone-call';
import { toReadView } from '../src/data/phone-call-view';
import type { ActivityDeps } from './deps';

export function createCallRecordActivities({ logger }: Pick<ActivityDeps, 'logger'>) {
  return {
    /** Writes a status change; `applied` is false when the machine does not allow it (nothing changes). */
    async recordStatus(change: StatusChange): Promise<{ applied: boolean; call: Record<string, unknown> | null }> {
      const result = await applyStatusChange(change);
      if (result.outcome === 'missing') {
        throw ApplicationFailure.create({
          type: FAILURES.callRecordMissing,
          message: `phone call ${change.callId} no longer exists`,
          nonRetryable: true,
        });
      }
      if (result.outcome === 'skipped') {
        logger.warn({ callId: change.callId, from: result.currentStatus, to: change.status }, 'status change refused by the status machine');
        return { applied: false, call: null };
      }
      return { applied: true, call: result.call };
    },

    /** Removes a queued call; answers the call as it was, or null if it was already gone. */
    async deleteCallRecord({ callId }: { callId: string }): Promise<Record<string, unknown> | null> {
      const removed = await PhoneCall.findOneAndDelete({ _id: callId, status: 'queued' }).lean();
      if (removed) return toReadView(removed);
      const current = await PhoneCall.findById(callId).lean();
      if (current) {
        throw ApplicationFailure.create({
          type: FAILURES.callNotQueued,
          message: `phone call ${callId} is ${current.status}, not queued`,
          nonRetryable: true,
        });
      }
      return null;
    },
  };
}

// The team pacer's side effects (workflows/team-pacer.ts) and the call's request for a slot.
import { WorkflowNotFoundError } from '@temporalio/client';
import { STATUS_CODES } from '../src/contracts/call-status';
import { callWorkflowId, pacerWorkflowId } from '../src/contracts/ids';
import type { DialSlotRequest, PacingLimits } from '../src/contracts/pacing';
import { mapBounded } from '../src/concurrency/run-bounded';
import { sendTogether } from '../src/concurrency/send-together';
import type { SpilledWaiter } from '../src/data/pacing-store';
import { dialSlotGrantedSignal, releaseDialSlotsSignal, requestDialSlotsSignal } from '../workflows/messages';
import type { teamPacerWorkflow } from '../workflows/team-pacer';
import type { ActivityDeps } from './deps';
import { PACER_PRIORITY } from '../src/temporal/task-priority';

const DESCRIBE_CONCURRENCY = 16;
/** Grants sent at once: a burst of hundreds reaches its calls in a fraction of a second. */
const GRANT_CONCURRENCY = 32;
/** Requests or releases in one signal to a pacer (about 100 bytes each: far below a payload's limit). */
const SIGNAL_BATCH_MAX = 500;

export function createPacingActivities({
  pacing,
  temporal,
  pacingDefaults,
  calls,
}: Pick<ActivityDeps, 'pacing' | 'temporal' | 'pacingDefaults' | 'calls'>) {
  // The requests and releases of this worker's calls for one team go to its pacer together while a
  // signal to it is under way (src/concurrency/send-together.ts): when hundreds of calls fall due at
  // once, a few signals carry them all instead of one history write each on the pacer.
  const requestTogether = sendTogether<DialSlotRequest>(
    async (teamId, requests) => {
      await temporal.client.workflow.signalWithStart<typeof teamPacerWorkflow, [{ requests: DialSlotRequest[] }]>(
        'teamPacerWorkflow',
        {
          workflowId: pacerWorkflowId(teamId),
          taskQueue: temporal.taskQueue,
          priority: PACER_PRIORITY,
          args: [{ teamId }],
          signal: requestDialSlotsSignal,
          signalArgs: [{ requests }],
          staticSummary: `Dial pacing of team ${teamId}`,
          staticDetails:
            "Hands out dial slots: the team's concurrency cap and each provider account's dials per second. Query `pacingState` for live and waiting calls.",
        },
      );
    },
    { maxPerSend: SIGNAL_BATCH_MAX },
  );
  const releaseTogether = sendTogether<string>(
    async (teamId, callIds) => {
      try {
        await temporal.client.workflow.getHandle(pacerWorkflowId(teamId)).signal(releaseDialSlotsSignal, { callIds });
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
    { maxPerSend: SIGNAL_BATCH_MAX },
  );

  return {
    /**
     * Queues the call at its team's pacer, starting the pacer if it is not running; with
     * `statusCodeAt`, first records on the call that it waits for a slot (one activity, not two, per call),
     * while it waits for `attempt` (when named).
     */
    async requestDialSlot(input: {
      teamId: string;
      request: DialSlotRequest;
      statusCodeAt?: string;
      attempt?: number;
    }): Promise<void> {
      const { teamId, request } = input;
      if (input.statusCodeAt)
        await calls.setQueuedStatusCode(
          request.callId,
          STATUS_CODES.waitingForSlot,
          new Date(input.statusCodeAt),
          input.attempt,
        );
      await requestTogether(teamId, request);
    },

    /**
     * Tells each call its slot is there (a signal from the client). Answers the calls that could not be
     * told because their workflows have ended: the pacer takes those slots back. Sending a grant twice
     * (a retried batch) is harmless: the call takes a grant once per request.
     */
    async deliverDialGrants({ grants }: { grants: Array<{ callId: string; ticket: number }> }): Promise<string[]> {
      const ended = await mapBounded(grants, GRANT_CONCURRENCY, async ({ callId, ticket }) => {
        try {
          await temporal.client.workflow.getHandle(callWorkflowId(callId)).signal(dialSlotGrantedSignal, { ticket });
          return false;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return true;
          throw err;
        }
      });
      return grants.filter((_, i) => ended[i]).map((g) => g.callId);
    },

    /** Gives the call's slot (or its place in the queue) back; a pacer that has ended holds nothing. */
    async releaseDialSlot({ teamId, callId }: { teamId: string; callId: string }): Promise<void> {
      await releaseTogether(teamId, callId);
    },

    async readPacingLimits({ teamId }: { teamId: string }): Promise<PacingLimits> {
      return pacing.readLimits(teamId, pacingDefaults);
    },

    async spillWaiters(input: { teamId: string; firstSeq: number; waiters: DialSlotRequest[]; pageSize: number }) {
      await pacing.spill(input.teamId, input.firstSeq, input.waiters, input.pageSize);
    },

    async loadSpilledWaiters({ teamId, page }: { teamId: string; page: number }): Promise<SpilledWaiter[]> {
      return pacing.loadPage(teamId, page);
    },

    async dropSpilledWaiters({ teamId, page, belowSeq }: { teamId: string; page: number; belowSeq: number }) {
      await pacing.dropPage(teamId, page, belowSeq);
    },

    /** Removes pages a terminated run of the team's pacer left: the calls in them ask again. */
    async clearSpilledWaiters({ teamId }: { teamId: string }) {
      await pacing.clear(teamId);
    },

    /** Removes waiters that withdrew from the pages; deleting what is gone already changes nothing. */
    async forgetSpilledWaiters(input: { teamId: string; withdrawn: Array<{ callId: string; belowTicket?: number }> }) {
      await pacing.forget(input.teamId, input.withdrawn);
    },

    /** The calls among these whose workflows are closed or gone: their slots can be given back. */
    async findEndedCalls({ callIds }: { callIds: string[] }): Promise<string[]> {
      // A few describes at a time: a cap of thousands stays well inside the local activity's timeout.
      const ended = await mapBounded(callIds, DESCRIBE_CONCURRENCY, async (callId) => {
        try {
          const description = await temporal.client.workflow.getHandle(callWorkflowId(callId)).describe();
          return description.status.name !== 'RUNNING';
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return true;
          throw err;
        }
      });
      return callIds.filter((_, i) => ended[i]);
    },
  };
}

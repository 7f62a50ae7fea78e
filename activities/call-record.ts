// Activities that write the call's record: status changes and deletion while queued.
import { ApplicationFailure } from '@temporalio/common';
import { subscribesTo } from '../src/contracts/events';
import { FAILURES } from '../src/contracts/failures';
import type { StatusChange } from '../src/data/call-store';
import { callWebhookTarget } from '../src/webhooks/targets';
import type { WebhookTarget } from '../workflows/types';
import type { ActivityDeps } from './deps';
import {
  createEventRouter,
  type EventRouteAfterWrite,
  type EventRouter,
  type EventRouterDeps,
  type Routed,
} from './webhooks';

/** What a status write answers: `applied` is false when the machine does not allow it (nothing changes). */
export interface StatusWritten {
  applied: boolean;
  call: Record<string, unknown> | null;
  /** Where the change's event went, when the workflow asked the write to hand it on (`routeWithWrites`). */
  routed?: Routed;
  /** The provider call the record names when another try's write of this change landed first, with another call. */
  recordedProviderCallId?: string;
}

/**
 * A queued call removed: as it was, and its own endpoints of `phoneCall.deleted`. Workflows replaying
 * a deletion from before these carried both find the call alone in their history (deleteWhileQueued
 * in workflows/call.ts tells them apart).
 */
export interface DeletedCall {
  deletedCall: Record<string, unknown>;
  ownTargets: WebhookTarget[];
}

type WriteDeps = Pick<ActivityDeps, 'calls' | 'logger' | 'metrics'>;

/**
 * Writes a status change for an activity (recordStatus, and the dial's own `ringing`). A retry of a
 * landed write, told by the change's time, answers `applied` again.
 */
export async function writeStatusChange(
  { calls, logger, metrics }: WriteDeps,
  change: StatusChange,
): Promise<StatusWritten> {
  const result = await calls.applyStatusChange(change);
  if (result.outcome === 'missing') {
    throw ApplicationFailure.create({
      type: FAILURES.callRecordMissing,
      message: `phone call ${change.callId} no longer exists`,
      nonRetryable: true,
    });
  }
  if (result.outcome === 'skipped') {
    logger.warn(
      { callId: change.callId, from: result.currentStatus, to: change.status },
      'status change refused by the status machine',
    );
    return { applied: false, call: null };
  }
  // Counted when a try's write landed or found it landed: a retry whose earlier try landed its write
  // counts it again when that try had counted it (rarely), and counts it at all when that try's answer
  // was lost. Counting only fresh writes lost the second case, which is what retries are for.
  metrics.statusChanged(change.status, change.statusCode, result.call.telephonyProvider);
  const { recordedProviderCallId } = result;
  return { applied: true, call: result.call, ...(recordedProviderCallId ? { recordedProviderCallId } : {}) };
}

/**
 * Writes a status change and, once it has landed and the workflow asked (`route`), hands its event to
 * the endpoints' streams with the call as the write left it: the endpoint lookup's local activity, and
 * its activation of the workflow, saved. A retry routes again; a stream takes each event id once.
 */
export function createStatusWriter(
  deps: WriteDeps & EventRouterDeps,
  { routeAfterWrite }: Pick<EventRouter, 'routeAfterWrite'> = createEventRouter(deps),
) {
  return async (change: StatusChange, route?: EventRouteAfterWrite): Promise<StatusWritten> => {
    const written = await writeStatusChange(deps, change);
    if (!route || !written.applied || !written.call) return written;
    const routed = await routeAfterWrite(route, written.call);
    return routed ? { ...written, routed } : written;
  };
}

export function createCallRecordActivities(deps: WriteDeps & EventRouterDeps & Pick<ActivityDeps, 'templates'>) {
  const { calls, templates } = deps;
  const writeStatus = createStatusWriter(deps);

  /** The change with an empty value for each of the template's result columns (`emptyResults`). */
  async function withEmptyResults(change: StatusChange): Promise<StatusChange> {
    const call = await calls.findById(change.callId);
    const template = call ? await templates.findById(call.callTemplateId) : null;
    const resultValues = (template?.resultColumns ?? []).map((columnName) => ({ columnName, value: '' }));
    return { ...change, results: { resultValues, customTagsHitOnCall: [], fixedMeetingTime: null } };
  }

  return {
    /**
     * Writes a status change; `applied` is false when the machine does not allow it (nothing changes).
     * With `route` (calls since `routeWithWrites`), a change that landed also hands its event on.
     */
    recordStatus: async (change: StatusChange, route?: EventRouteAfterWrite): Promise<StatusWritten> =>
      writeStatus(change.emptyResults && !change.results ? await withEmptyResults(change) : change, route),

    /**
     * Records why a queued call is waiting (status code only: the status stays queued, no event), while
     * it waits for `attempt` (when named).
     */
    async recordQueuedStatusCode({
      callId,
      statusCode,
      at,
      attempt,
    }: {
      callId: string;
      statusCode: string;
      at: string;
      attempt?: number;
    }) {
      await calls.setQueuedStatusCode(callId, statusCode, new Date(at), attempt);
    },

    /**
     * Removes a queued call; answers the call as it was with its own webhooks' endpoints of
     * `phoneCall.deleted` (the record that named them is gone), or null if it was already gone.
     */
    async deleteCallRecord({ callId }: { callId: string }): Promise<DeletedCall | null> {
      const result = await calls.deleteIfQueued(callId);
      if (result.outcome === 'not-queued') {
        throw ApplicationFailure.create({
          type: FAILURES.callNotQueued,
          message: `phone call ${callId} is ${result.currentStatus}, not queued`,
          nonRetryable: true,
        });
      }
      if (result.outcome !== 'deleted') return null;
      const ownTargets = result.ownWebhooks.flatMap((hook, index) =>
        subscribesTo([hook.subscribedEvent], 'phoneCall.deleted') ? [callWebhookTarget(hook, index)] : [],
      );
      return { deletedCall: result.call, ownTargets };
    },
  };
}

// The seam between the provider callback routes and the call workflows.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { callWorkflowId, isObjectIdHex } from '../contracts/ids';
import type { ProviderEvent, ProviderName } from '../contracts/providers';
import { PhoneCall } from '../data/models/phone-call';
import type { Logger } from '../logger';
import type { TeamProviderResolver } from '../telephony/team-providers';
import type { TelephonyProvider } from '../telephony/provider';
import { providerEventSignal } from '../../workflows/messages';

/** The adapter that must verify a callback claiming to be about `callId`, or null for an unknown call. */
export function createCallbackProviderResolver(providers: TeamProviderResolver) {
  return async (provider: ProviderName, callId: string): Promise<TelephonyProvider | null> => {
    if (!isObjectIdHex(callId)) return null;
    const call = await PhoneCall.findById(callId, { teamId: 1, telephonyProvider: 1 }).lean();
    if (!call || call.telephonyProvider !== provider) return null;
    return providers(call.teamId, provider);
  };
}

/**
 * The provider's id for a call being dialled, from its first verified event: should the dial's own
 * answer be lost (a timeout, a dropped connection), the retried dial finds the id on the record and
 * does not dial again. Not for a call already holding one, nor an id of one of its ended attempts (a
 * late event of an earlier attempt arriving during a redial).
 */
async function adoptProviderCallId(event: ProviderEvent): Promise<void> {
  await PhoneCall.updateOne(
    {
      _id: event.callId,
      providerCallId: null,
      status: { $in: ['queued', 'ringing', 'inProgress'] },
      'attempts.providerCallId': { $ne: event.providerCallId },
    },
    { $set: { providerCallId: event.providerCallId } },
  );
}

/**
 * Whether the call's workflow acts on an event of this kind. It does not on `ringing`: the call is
 * ringing from the moment the provider accepted the dial, which the dial activity reports. Every
 * signal is a history event and a workflow task, and nearly every call rings.
 */
export function signalsWorkflow(kind: ProviderEvent['kind']): boolean {
  return kind !== 'ringing';
}

/**
 * Signals each verified event the workflow acts on to its call's workflow (an ended workflow just
 * ignores late events); every event with a provider call id may first lend it to the record.
 */
export function createProviderEventSink(deps: { temporal: Client; logger: Logger }) {
  return async (events: ProviderEvent[]): Promise<void> => {
    for (const event of events) {
      if (event.providerCallId) await adoptProviderCallId(event);
      if (!signalsWorkflow(event.kind)) continue;
      try {
        await deps.temporal.workflow.getHandle(callWorkflowId(event.callId)).signal(providerEventSignal, event);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) {
          deps.logger.info(
            { callId: event.callId, kind: event.kind },
            'provider event for a call whose workflow has ended',
          );
          continue;
        }
        throw err;
      }
    }
  };
}

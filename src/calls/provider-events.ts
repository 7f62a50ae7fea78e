// The seam between the provider callback routes and the call workflows.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { callWorkflowId, isObjectIdHex } from '../contracts/ids';
import type { ProviderEvent, ProviderName } from '../contracts/providers';
import { isDuplicateKeyOnly } from '../data/duplicate-key';
import { PhoneCall } from '../data/models/phone-call';
import { rememberedValues } from '../data/remembered-values';
import { ProviderCallSighting } from '../data/models/provider-call-sighting';
import type { Logger } from '../logger';
import type { TeamProviderResolver } from '../telephony/team-providers';
import type { TelephonyProvider } from '../telephony/provider';
import { providerEventSignal } from '../../workflows/messages';

/** How long a team's adapter verifies its calls' callbacks before the team's credentials are read again. */
const ADAPTER_TRUSTED_MS = 30_000;

/** The adapter for a callback, and whether it was remembered rather than built from a fresh read. */
export interface CallbackProvider {
  adapter: TelephonyProvider;
  remembered: boolean;
}

/**
 * The adapter that must verify a callback claiming to be about `callId`, or null for an unknown call.
 * A call sends four or more callbacks, and each read its call and its team: now a call's later ones
 * read neither. A call's team and provider never change, so they are remembered for good; a team's
 * adapter is reused for 30 s. Should a reused adapter refuse a signature, the route asks again with
 * `fresh` (the team's current credentials): rotated credentials cost one read, never a refused
 * callback. Credentials removed from a team still verify its callbacks for those 30 s at most.
 */
export function createCallbackProviderResolver(providers: TeamProviderResolver) {
  const owners = rememberedValues<{ teamId: string; provider: ProviderName }>({ maxEntries: 10_000 });
  const adapters = rememberedValues<TelephonyProvider>({ trustedMs: ADAPTER_TRUSTED_MS, maxEntries: 1_000 });
  return async (
    provider: ProviderName,
    callId: string,
    options: { fresh?: boolean } = {},
  ): Promise<CallbackProvider | null> => {
    if (!isObjectIdHex(callId)) return null;
    let owner = owners.get(callId);
    if (!owner) {
      const call = await PhoneCall.findById(callId, { teamId: 1, telephonyProvider: 1 }).lean();
      if (!call) return null;
      owner = { teamId: String(call.teamId), provider: call.telephonyProvider as ProviderName };
      owners.set(callId, owner);
    }
    if (owner.provider !== provider) return null;
    const key = `${owner.teamId}:${provider}`;
    const known = options.fresh ? undefined : adapters.get(key);
    if (known) return { adapter: known, remembered: true };
    const adapter = await providers(owner.teamId, provider);
    adapters.set(key, adapter);
    return { adapter, remembered: false };
  };
}

/** Sightings this process recorded lately: a call's later callbacks need not be written again. */
const RECENT_SIGHTINGS_MAX = 10_000;

/**
 * Records the provider's id for a call from a verified event, for the dial's retry
 * (src/data/models/provider-call-sighting.ts): should the dial's own answer be lost, the retried dial
 * finds the call placed and does not dial again. A separate insert-only record, never the call's
 * own: only its workflow writes that (on FerretDB a second writer would undo its status changes).
 */
function createSightingRecorder() {
  const recent = new Set<string>();
  return async (event: ProviderEvent): Promise<void> => {
    const id = `${event.callId}:${event.providerCallId}`;
    if (recent.has(id)) return;
    try {
      await ProviderCallSighting.create({
        _id: id,
        callId: event.callId,
        providerCallId: event.providerCallId,
        seenAt: new Date(),
      });
    } catch (err) {
      if (!isDuplicateKeyOnly(err)) throw err;
    }
    recent.add(id);
    // A Set iterates in insertion order: the oldest goes first.
    if (recent.size > RECENT_SIGHTINGS_MAX) recent.delete(recent.values().next().value!);
  };
}

/**
 * Whether the call's workflow acts on an event of this kind. It does not on `ringing`: the call is
 * ringing from the moment the provider accepted the dial, which the dial activity reports. Every
 * signal is a history event and a workflow task, and nearly every call rings.
 */
function signalsWorkflow(kind: ProviderEvent['kind']): boolean {
  return kind !== 'ringing';
}

/**
 * Signals each verified event the workflow acts on to its call's workflow (an ended workflow just
 * ignores late events); the provider call id of each is first recorded as seen.
 */
export function createProviderEventSink(deps: { temporal: Client; logger: Logger }) {
  const recordSighting = createSightingRecorder();
  return async (events: ProviderEvent[]): Promise<void> => {
    for (const event of events) {
      if (event.providerCallId) await recordSighting(event);
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

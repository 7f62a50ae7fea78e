// Webhook event names (decisions.md "Webhooks"): defined once, used by API validation and workflows.
import { isTerminal, type CallStatus } from './call-status';

export const CALL_EVENT_NAMES = [
  'phoneCall.queued',
  'phoneCall.ringing',
  'phoneCall.inProgress',
  'phoneCall.completed',
  'phoneCall.busy',
  'phoneCall.noAnswer',
  'phoneCall.failed',
  'phoneCall.cancelled',
  'phoneCall.deleted',
  'transcript.created',
] as const;
export type CallEventName = (typeof CALL_EVENT_NAMES)[number];
export const ALL_EVENTS = '*';
/** What a webhook subscribes to: one event, or `*` for all. */
export type SubscribedEvent = CallEventName | typeof ALL_EVENTS;

/** Whether an endpoint subscribed to `subscribed` gets events of `type`. */
export function subscribesTo(subscribed: readonly string[], type: CallEventName): boolean {
  return subscribed.includes(type) || subscribed.includes(ALL_EVENTS);
}

export function statusEventName(status: CallStatus): CallEventName {
  return `phoneCall.${status}`;
}

/**
 * Whether `type` is the last event a call has: its final status, or its deletion while queued. A call
 * that is dialled again goes back to `queued`, never through a final status.
 */
export function isFinalCallEvent(type: CallEventName): boolean {
  if (type === 'phoneCall.deleted') return true;
  return type.startsWith('phoneCall.') && isTerminal(type.slice('phoneCall.'.length) as CallStatus);
}

export function isEventName(value: string): value is CallEventName {
  return (CALL_EVENT_NAMES as readonly string[]).includes(value);
}

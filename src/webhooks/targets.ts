// Where an event goes: a team webhook or one of the call's own phoneCallWebhooks, as a delivery
// target with a key that stays the same for that endpoint within the call.
import type { WebhookDoc } from '../data/models/webhook';
import type { WebhookTarget } from '../../workflows/types';

const TEAM_PREFIX = 'wh-';
const CALL_PREFIX = 'call-';

export function teamWebhookTarget(hook: Pick<WebhookDoc, '_id' | 'url' | 'method' | 'secretSealed'>): WebhookTarget {
  return {
    endpointKey: `${TEAM_PREFIX}${hook._id.toHexString()}`,
    url: hook.url,
    method: hook.method as 'GET' | 'POST',
    secretSealed: hook.secretSealed,
    webhookId: hook._id.toHexString(),
  };
}

/** A call's own webhooks are POSTed, keyed by their place in the call's list. */
export function callWebhookTarget(hook: { url: string; secretSealed: string }, index: number): WebhookTarget {
  return {
    endpointKey: `${CALL_PREFIX}${index}`,
    url: hook.url,
    method: 'POST',
    secretSealed: hook.secretSealed,
    webhookId: null,
  };
}

/** Which endpoint a key names: a team webhook's id, or the index into the call's phoneCallWebhooks. */
export function endpointOfKey(key: string): { webhookId: string } | { callWebhookIndex: number } | null {
  if (key.startsWith(TEAM_PREFIX)) return { webhookId: key.slice(TEAM_PREFIX.length) };
  const index = key.startsWith(CALL_PREFIX) ? Number(key.slice(CALL_PREFIX.length)) : NaN;
  return Number.isInteger(index) && index >= 0 ? { callWebhookIndex: index } : null;
}

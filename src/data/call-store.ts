// Writes to PhoneCall records that must hold without transactions (FerretDB 1.x has none):
// every status change is one conditional single-document update.
import { predecessorsOf, type CallStatus } from '../contracts/call-status';
import { PhoneCall } from './models/phone-call';
import { toReadView, type PhoneCallReadView } from './phone-call-view';

export interface StatusChange {
  callId: string;
  status: CallStatus;
  statusCode: string;
  /** When the change happened (ISO): also what makes a retried write recognisable. */
  at: string;
  fields?: {
    callTriggeredAt?: string;
    callStartedAt?: string;
    callEndedAt?: string;
    callDuration?: number;
    providerCallId?: string;
  };
}

export type StatusChangeResult =
  | { outcome: 'applied'; call: PhoneCallReadView }
  | { outcome: 'skipped'; currentStatus: CallStatus }
  | { outcome: 'missing' };

/**
 * Moves a call to `status` only from a status the machine allows, so a terminal status never
 * changes again. A retry of a write that already landed reports `applied` again.
 */
export async function applyStatusChange(change: StatusChange): Promise<StatusChangeResult> {
  const at = new Date(change.at);
  const set: Record<string, unknown> = {
    status: change.status,
    statusExtraInfo: { statusCode: change.statusCode, dateTime: at },
  };
  for (const [key, value] of Object.entries(change.fields ?? {})) {
    if (value === undefined) continue;
    set[key] = key === 'callDuration' || key === 'providerCallId' ? value : new Date(value as string);
  }
  const updated = await PhoneCall.findOneAndUpdate(
    { _id: change.callId, status: { $in: predecessorsOf(change.status) } },
    { $set: set },
    { returnDocument: 'after' },
  ).lean();
  if (updated) return { outcome: 'applied', call: toReadView(updated) };
  const current = await PhoneCall.findById(change.callId).lean();
  if (!current) return { outcome: 'missing' };
  const sameWrite = current.status === change.status && current.statusExtraInfo?.dateTime?.getTime() === at.getTime();
  if (sameWrite) return { outcome: 'applied', call: toReadView(current) };
  return { outcome: 'skipped', currentStatus: current.status as CallStatus };
}

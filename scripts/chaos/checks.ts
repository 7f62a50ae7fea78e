// What "nothing is lost" means, checked per call from three independent views: the service's records
// (MongoDB) and workflows (Temporal), the provider's calls (the emulator), and the webhook receiver.
// Each finding is one counted item with the detail a developer needs to chase it.
import { isTerminal, type CallStatus } from '../../src/contracts/call-status';
import type { EmulatedCall } from './emulator-control';
import type { ReceivedEvent } from './receiver';

export const CHECKS = ['lost', 'doubleDialled', 'stuck', 'duplicates', 'mismatched', 'undelivered'] as const;
export type Check = (typeof CHECKS)[number];
export type Findings = Record<Check, string[]>;

export function emptyFindings(): Findings {
  return { lost: [], doubleDialled: [], stuck: [], duplicates: [], mismatched: [], undelivered: [] };
}

export function mergeFindings(into: Findings, from: Findings): void {
  for (const check of CHECKS) into[check].push(...from[check]);
}

/** The fields of a stored call the checks read. */
export interface StoredCall {
  _id: string;
  status: CallStatus;
  statusCode: string | null;
  element: string | null;
  provider: string;
  to: string;
  /** Ended dial attempts (each with the provider call it placed, if any). */
  attempts: { providerCallId: string | null }[];
}

export interface Observations {
  /** Every 201 the API gave: call id -> element. */
  accepted: Map<string, string>;
  /**
   * Every call of the scenario found stored: its record now, or `deleted` when it was stored and the
   * scenario itself then deleted it (the batch's cancel).
   */
  records: Map<string, StoredCall | 'deleted'>;
  /** Call ids whose workflow is still Running after the grace period. */
  running: Set<string>;
  /** Calls that were not terminal when the deadline came: status (status code) then. */
  notTerminalAtDeadline: Map<string, string>;
  /** The provider's calls placed with the team's accounts. */
  emulatorCalls: EmulatedCall[];
  /** What reached the team's webhook endpoint. */
  received: ReceivedEvent[];
  graceSeconds: number;
}

/** The statuses a call may end in, given the provider's last call for it. */
function expectedStatuses(last: EmulatedCall | undefined): { statuses: CallStatus[]; because: string } | null {
  if (!last) return { statuses: ['failed', 'cancelled'], because: 'the provider never placed it' };
  if (!last.end) return null;
  const because = `the provider's last call ${last.providerCallId} ended ${last.end.outcome} (hung up by ${last.end.hungUpBy})`;
  switch (last.end.outcome) {
    case 'completed':
      return { statuses: ['completed'], because };
    case 'busy':
    case 'declined':
      return { statuses: ['busy'], because };
    case 'no-answer':
      return { statuses: ['noAnswer'], because };
    case 'failed':
      return { statuses: ['failed'], because };
    case 'canceled':
      // The caller hung up before an answer: the service's ring timeout (noAnswer) or an operator's cancel.
      return { statuses: ['noAnswer', 'cancelled'], because };
  }
}

export function checkCalls(observed: Observations): Findings {
  const findings = emptyFindings();
  const byCall = new Map<string, EmulatedCall[]>();
  for (const placed of observed.emulatorCalls) {
    const id = placed.serviceCallId ?? '(none)';
    byCall.set(id, [...(byCall.get(id) ?? []), placed]);
  }
  const eventsByCall = new Map<string, ReceivedEvent[]>();
  for (const event of observed.received) {
    if (!event.callId) continue;
    eventsByCall.set(event.callId, [...(eventsByCall.get(event.callId) ?? []), event]);
  }
  const name = (id: string) => {
    const record = observed.records.get(id);
    const element = observed.accepted.get(id) ?? (record && record !== 'deleted' ? record.element : null);
    return record && record !== 'deleted'
      ? `call ${id} (${element}, ${record.provider} to ${record.to})`
      : `call ${id} (${element ?? 'no element'})`;
  };
  const placements = (calls: EmulatedCall[]) =>
    calls.map((c) => `${c.providerCallId} ${c.state}${c.end ? ` ${c.end.outcome}` : ''}`).join(', ');

  for (const id of observed.accepted.keys()) {
    if (!observed.records.has(id)) findings.lost.push(`${name(id)}: accepted (201) but never stored`);
  }
  for (const [id, record] of observed.records) {
    if (!observed.accepted.has(id))
      findings.duplicates.push(`${name(id)}: stored, but no 201 of the API named it (a second record of its element?)`);
    const placed = byCall.get(id) ?? [];
    const events = eventsByCall.get(id) ?? [];
    const workflowRunning = observed.running.has(id);

    if (record === 'deleted') {
      if (workflowRunning)
        findings.stuck.push(`${name(id)}: deleted, but its workflow is still Running ${observed.graceSeconds} s later`);
      if (placed.length > 0)
        findings.mismatched.push(`${name(id)}: deleted while queued, yet the provider placed ${placements(placed)}`);
      if (!events.some((e) => e.type === 'phoneCall.deleted'))
        findings.undelivered.push(
          `${name(id)}: deleted, but phoneCall.deleted never reached the receiver (got: ${types(events)})`,
        );
      continue;
    }

    const status = `${record.status} (${record.statusCode ?? 'no status code'})`;
    if (!isTerminal(record.status)) {
      if (workflowRunning) findings.stuck.push(`${name(id)}: still ${status} at the deadline; its workflow is Running`);
      else findings.lost.push(`${name(id)}: ${status}, never terminal, and no open workflow will end it`);
    } else if (observed.notTerminalAtDeadline.has(id)) {
      findings.stuck.push(
        `${name(id)}: still ${observed.notTerminalAtDeadline.get(id)} at the deadline; ended ${status} only after it`,
      );
    } else if (workflowRunning) {
      findings.stuck.push(`${name(id)}: ${status}, but its workflow is still Running ${observed.graceSeconds} s later`);
    }

    // A call without a redial policy is one attempt; each attempt may place one provider call.
    const allowed = Math.max(1, record.attempts.length);
    if (placed.length > allowed)
      findings.doubleDialled.push(
        `${name(id)}: the provider placed ${placed.length} calls for ${allowed} attempt(s): ${placements(placed)}; ` +
          `the service's attempts name ${record.attempts.map((a) => a.providerCallId ?? 'none').join(', ')}`,
      );

    if (isTerminal(record.status)) {
      const expected = expectedStatuses(placed.at(-1));
      if (!expected)
        findings.mismatched.push(
          `${name(id)}: ${status}, while the provider's call ${placements(placed)} has not ended`,
        );
      else if (!expected.statuses.includes(record.status))
        findings.mismatched.push(
          `${name(id)}: ${status}, expected ${expected.statuses.join(' or ')} because ${expected.because}`,
        );
      const terminalEvent = `phoneCall.${record.status}`;
      if (!events.some((e) => e.type === terminalEvent))
        findings.undelivered.push(
          `${name(id)}: ${status}, but ${terminalEvent} never reached the receiver (got: ${types(events)})`,
        );
    }
  }

  // One event, one webhook-id, however often it was retried (receivers deduplicate on it).
  for (const [id, events] of eventsByCall) {
    const idsByType = new Map<string, Set<string>>();
    for (const event of events)
      idsByType.set(event.type, (idsByType.get(event.type) ?? new Set()).add(event.webhookId));
    for (const [type, ids] of idsByType)
      if (ids.size > 1)
        findings.undelivered.push(`${name(id)}: ${type} arrived under ${ids.size} webhook-ids: ${[...ids].join(', ')}`);
  }

  // A ring for no call of the scenario is a ring nobody asked for.
  for (const [serviceCallId, placed] of byCall) {
    if (observed.records.has(serviceCallId) || observed.accepted.has(serviceCallId)) continue;
    findings.doubleDialled.push(
      `provider call(s) ${placements(placed)} to ${placed[0]!.to} were placed for ${serviceCallId}, no call of this scenario`,
    );
  }
  return findings;
}

function types(events: ReceivedEvent[]): string {
  return events.length ? events.map((e) => e.type).join(', ') : 'nothing';
}

/** How many calls ended in each status, for the report ("completed 6, busy 3, ..."). */
export function statusSpread(records: Iterable<StoredCall | 'deleted'>): string {
  const counts = new Map<string, number>();
  for (const record of records) {
    const key = record === 'deleted' ? 'deleted' : record.status;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([status, n]) => `${status} ${n}`).join(', ');
}

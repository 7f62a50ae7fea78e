// A team's pacer: one long-lived workflow per team that hands out dial slots, so that the team never
// has more than `maxConcurrentCalls` calls live and never dials faster than each provider account
// allows. Calls queue in the order they ask (creation order for calls due now; scheduled calls from
// their time on). The queue kept in the workflow is bounded: past MEMORY_QUEUE_MAX the waiters spill
// to MongoDB in numbered pages and come back in order, and the workflow continues as new before its
// history grows long, so neither its history nor any document grows with the queue.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { callWorkflowId } from '../src/contracts/ids';
import type { DialSlotRequest, PacingLimits } from '../src/contracts/pacing';
import type { ProviderName } from '../src/contracts/providers';
import { dialSlotGrantedSignal, pacingStateQuery, releaseDialSlotSignal, requestDialSlotSignal } from './messages';

const { readPacingLimits, findEndedCalls } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
const { spillWaiters, loadSpilledWaiters, dropSpilledWaiters } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Waiters kept in the workflow itself; the rest wait in MongoDB pages of SPILL_PAGE_SIZE. */
export const MEMORY_QUEUE_MAX = 1000;
export const SPILL_PAGE_SIZE = 500;
const REFILL_BELOW = 250;
/** How often slots of calls that ended without saying so are looked for, and the team's limits re-read
 * (so `team set-limits` takes effect within this long). */
const SWEEP_MS = 30_000;
/** A pacer with nothing to do for this long ends; the next request starts it again. */
const IDLE_MS = 10 * 60_000;
const HISTORY_EVENTS_BEFORE_CONTINUE = 10_000;

export interface PacerCarriedState {
  /** Calls holding a slot (with the ticket they were granted), in the order they got it. */
  holders: Array<[callId: string, ticket: number]>;
  queue: DialSlotRequest[];
  /** Waiters not yet written to a spill page, after everything spilled. */
  unspilled: DialSlotRequest[];
  /** Spilled waiters are numbered [spillHead, spillTail). */
  spillHead: number;
  spillTail: number;
  /** Earliest next dial per provider account (epoch ms). */
  nextDialAt: Partial<Record<ProviderName, number>>;
}

export interface PacerInput {
  teamId: string;
  carried?: PacerCarriedState;
  /** Sizes and periods (tests use small ones to exercise spilling, sweeping and ending when idle). */
  tuning?: Partial<{
    memoryQueueMax: number;
    spillPageSize: number;
    sweepMs: number;
    idleMs: number;
    historyEventsBeforeContinue: number;
  }>;
}

export async function teamPacerWorkflow(input: PacerInput): Promise<void> {
  const { teamId } = input;
  const memoryQueueMax = input.tuning?.memoryQueueMax ?? MEMORY_QUEUE_MAX;
  const pageSize = input.tuning?.spillPageSize ?? SPILL_PAGE_SIZE;
  const refillBelow = Math.min(REFILL_BELOW, Math.ceil(memoryQueueMax / 4));
  const sweepMs = input.tuning?.sweepMs ?? SWEEP_MS;
  const idleMs = input.tuning?.idleMs ?? IDLE_MS;
  const carried = input.carried;
  const holders = new Map<string, number>(carried?.holders ?? []);
  let queue: DialSlotRequest[] = carried?.queue ?? [];
  const unspilled: DialSlotRequest[] = carried?.unspilled ?? [];
  let spillHead = carried?.spillHead ?? 0;
  let spillTail = carried?.spillTail ?? 0;
  const nextDialAt: Partial<Record<ProviderName, number>> = carried?.nextDialAt ?? {};
  let changed = false;
  let limits: PacingLimits | null = null;
  /**
   * Grant signals sent but not yet acknowledged by the server. A run that closes (continue-as-new,
   * or idle) with one in flight loses it: the server drops a signal whose sender has closed, and
   * the call would wait for a slot the pacer counts as held.
   */
  let grantsInFlight = 0;
  const historyEventsBeforeContinue = input.tuning?.historyEventsBeforeContinue ?? HISTORY_EVENTS_BEFORE_CONTINUE;

  const waiting = () => queue.length + unspilled.length + (spillTail - spillHead);

  setHandler(requestDialSlotSignal, (request) => {
    changed = true;
    // A call asks again after a long wait (in case this workflow was reset): answer, never queue twice.
    if (holders.has(request.callId)) {
      holders.set(request.callId, request.ticket);
      grant(request.callId, request.ticket);
      return;
    }
    if (queue.some((w) => w.callId === request.callId)) return;
    if (spillHead === spillTail && unspilled.length === 0 && queue.length < memoryQueueMax) queue.push(request);
    else unspilled.push(request);
  });
  setHandler(releaseDialSlotSignal, ({ callId }) => {
    changed = true;
    if (!holders.delete(callId)) queue = queue.filter((w) => w.callId !== callId);
    // A spilled waiter that withdrew is skipped when its grant finds the call gone.
  });
  setHandler(pacingStateQuery, () => ({
    teamId,
    limits: limits!,
    liveCalls: holders.size,
    waitingCalls: waiting(),
    holders: [...holders.keys()],
  }));

  /** Tells the call its slot is there; a call that has ended cannot be told, and the slot comes back. */
  function grant(callId: string, ticket: number): void {
    grantsInFlight += 1;
    getExternalWorkflowHandle(callWorkflowId(callId))
      .signal(dialSlotGrantedSignal, { ticket })
      .catch((err: unknown) => {
        log.info('slot granted to a call that has ended; taken back', { callId, error: String(err) });
        if (holders.get(callId) === ticket) holders.delete(callId);
        changed = true;
      })
      .finally(() => {
        grantsInFlight -= 1;
      });
  }

  /** Before this run closes: every grant delivered (or failed and taken back), every handler done. */
  const settled = () => grantsInFlight === 0 && allHandlersFinished();

  /** Grants what the cap and the rates allow now; returns how long until the head of the queue may dial. */
  function grantReady(): number | null {
    const now = Date.now();
    while (queue.length > 0 && holders.size < limits!.maxConcurrentCalls) {
      const next = queue[0]!;
      const at = nextDialAt[next.provider] ?? 0;
      if (at > now) return at - now;
      queue.shift();
      holders.set(next.callId, next.ticket);
      nextDialAt[next.provider] = Math.max(now, at) + 1000 / limits!.dialsPerSecond[next.provider];
      grant(next.callId, next.ticket);
    }
    return null;
  }

  /** Keeps the in-memory queue between refillBelow and memoryQueueMax, in arrival order. */
  async function balanceQueue(): Promise<void> {
    if (spillHead === spillTail && unspilled.length > 0 && queue.length < memoryQueueMax) {
      queue.push(...unspilled.splice(0, memoryQueueMax - queue.length));
    }
    if (unspilled.length >= pageSize || (unspilled.length > 0 && queue.length >= memoryQueueMax)) {
      const batch = unspilled.splice(0);
      const firstSeq = spillTail;
      spillTail += batch.length;
      await spillWaiters({ teamId, firstSeq, waiters: batch, pageSize: pageSize });
    }
    while (queue.length < refillBelow && spillHead < spillTail) {
      const page = Math.floor(spillHead / pageSize);
      const entries = await loadSpilledWaiters({ teamId, page });
      const pageEnd = Math.min(spillTail, (page + 1) * pageSize);
      queue.push(...entries.filter((e) => e.seq >= spillHead && e.seq < pageEnd).map((e) => e.request));
      spillHead = pageEnd;
      await dropSpilledWaiters({ teamId, page, belowSeq: spillHead });
    }
  }

  limits = await readPacingLimits({ teamId });
  let nextSweep = Date.now() + sweepMs;
  for (;;) {
    changed = false;
    await balanceQueue();
    const untilDial = grantReady();

    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > historyEventsBeforeContinue) {
      await condition(settled);
      return await continueAsNew<typeof teamPacerWorkflow>({
        teamId,
        carried: { holders: [...holders], queue, unspilled, spillHead, spillTail, nextDialAt },
        tuning: input.tuning,
      });
    }

    if (holders.size === 0 && waiting() === 0) {
      if (!(await condition(() => changed, idleMs, { summary: 'idle: no call waits or is live' }))) {
        await condition(settled);
        // A request that arrived while the last grants settled is served by this run.
        if (holders.size === 0 && waiting() === 0) return;
      }
      continue;
    }
    const timeout = Math.max(1, Math.min(untilDial ?? Infinity, nextSweep - Date.now()));
    await condition(() => changed, timeout, {
      summary: `${holders.size}/${limits.maxConcurrentCalls} live, ${waiting()} waiting`,
    });
    if (Date.now() >= nextSweep) {
      nextSweep = Date.now() + sweepMs;
      // Slots of calls that ended without giving them back (terminated from the UI, say) return.
      if (holders.size > 0) {
        for (const callId of await findEndedCalls({ callIds: [...holders.keys()] })) holders.delete(callId);
      }
      limits = await readPacingLimits({ teamId });
    }
  }
}

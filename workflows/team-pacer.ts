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
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { callWorkflowId } from '../src/contracts/ids';
import { takeDial } from '../src/contracts/dial-spacing';
import type { DialSlotRequest, PacingLimits } from '../src/contracts/pacing';
import { PROVIDERS, type ProviderName } from '../src/contracts/providers';
import {
  dialSlotGrantedSignal,
  pacingStateQuery,
  releaseDialSlotSignal,
  releaseDialSlotsSignal,
  requestDialSlotSignal,
  requestDialSlotsSignal,
} from './messages';

const { readPacingLimits, findEndedCalls, deliverDialGrants } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
const {
  spillWaiters,
  loadSpilledWaiters,
  dropSpilledWaiters,
  forgetSpilledWaiters,
  clearSpilledWaiters,
  findEndedCalls: describeHoldersAside,
} = proxyActivities<Activities>({
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
/** Holders described by one activity of the sweep: well inside its minute at any cap. */
const SWEEP_CHUNK = 200;
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
  /** Withdrawn waiters still to be removed from the pages (call id, and the ticket below which). */
  withdrawnSpilled?: Array<[callId: string, belowTicket: number | null]>;
}

export interface PacerInput {
  teamId: string;
  carried?: PacerCarriedState;
  /** Sizes and periods (tests use small ones to exercise spilling, sweeping and ending when idle). */
  tuning?: Partial<{
    memoryQueueMax: number;
    spillPageSize: number;
    sweepMs: number;
    sweepChunk: number;
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
  const sweepChunk = input.tuning?.sweepChunk ?? SWEEP_CHUNK;
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

  // Batched pacing, for throughput when thousands of calls fall due at once (runs begun before it keep
  // the old way to their end, so that their histories replay as they were made; the next run, after
  // continue-as-new, has it):
  // - dials may go in small bursts above 20/s (src/contracts/dial-spacing.ts);
  // - grants go out in batches from an activity (client signals), not as one signal command per grant:
  //   each of those is a server-side task that also writes to this workflow's history, and one
  //   workflow's history takes writes one at a time (about a dozen grants a second on the dev server);
  // - the next dial and the sweep have standing timers, not a timeout on every wait: a signal no longer
  //   cancels and restarts a timer (two more history events for every request and release).
  const batched = patched('pacer-batched-grants');
  // Waiters that withdrew (a paused batch, calling hours closed) while spilled are forgotten: taken
  // out of `unspilled`, and out of the pages before the next page is read. Before, a spilled waiter
  // that withdrew was granted when its page came back, and held a slot its call never took (runs
  // begun before keep the old way to their end).
  const forgetsWithdrawn = patched('pacer-forgets-withdrawn-waiters');
  // A call asks again every hour while it waits. Its repeat is not queued beside its first request
  // (in `unspilled`, or read back from a page while the repeat waits there), else the copy came back
  // after the call had been served and was granted again, holding a slot and a dial turn for nothing
  // (runs begun before keep the old way to their end). The pages keep one entry per call and ticket.
  const oneEntryPerWaiter = patched('pacer-one-entry-per-waiter');
  // A call whose provider account must wait for its next dial no longer holds back the calls behind it
  // of another provider (a mixed campaign went at its slowest account's rate: Telnyx's calls one every
  // 5 s behind Twilio's at 0.2/s); each provider's calls keep their order (runs begun before keep the
  // old way to their end).
  const grantsPerProvider = patched('pacer-grants-per-provider');
  // Grants that leave room while waiters are still in pages (or in `unspilled`) bring them in at once:
  // before, they waited for the next signal or the sweep, up to 30 s with slots free (runs begun
  // before keep the old way to their end).
  const refillsAfterGrants = patched('pacer-refills-after-grants');
  // The sweep runs beside the grants, its holders described a chunk per activity (not a local one,
  // which holds the workflow task and so the signals and grants until it ends): before, the loop
  // waited for it, and with a cap in the thousands on a slow server one local activity describing
  // every holder could overrun its 30 s on every try, stopping all grants for good (runs begun before
  // keep the old way to their end).
  const sweepsAside = patched('pacer-sweeps-aside');
  /** A sweep under way (sweepsAside): the next waits for it. */
  let sweeping = false;
  /** Calls that withdrew and may still be in pages: their entries below `belowTicket` (all, if unset) go. */
  const withdrawnSpilled = new Map<string, number | undefined>(
    (carried?.withdrawnSpilled ?? []).map(([callId, below]) => [callId, below ?? undefined]),
  );

  /** Granted, not yet sent (batched). */
  const unsent: Array<{ callId: string; ticket: number }> = [];
  /** When the standing dial timer fires (batched), if one is set. */
  let dialTimerAt: number | null = null;
  let nextSweep = 0;
  let sweepTimerSet = false;

  const waiting = () => queue.length + unspilled.length + (spillTail - spillHead);

  function enqueue(request: DialSlotRequest): void {
    changed = true;
    // A call asks again after a long wait (in case this workflow was reset): answer, never queue twice.
    if (holders.has(request.callId)) {
      holders.set(request.callId, request.ticket);
      grant(request.callId, request.ticket);
      return;
    }
    if (queue.some((w) => w.callId === request.callId)) return;
    if (oneEntryPerWaiter && unspilled.some((w) => w.callId === request.callId)) return;
    // Asking again after withdrawing: the pages' older entries go, this one stays.
    if (withdrawnSpilled.has(request.callId)) withdrawnSpilled.set(request.callId, request.ticket);
    if (spillHead === spillTail && unspilled.length === 0 && queue.length < memoryQueueMax) queue.push(request);
    else unspilled.push(request);
  }
  function release(callIds: readonly string[]): void {
    changed = true;
    const withdrawn = new Set(callIds.filter((callId) => !holders.delete(callId)));
    if (withdrawn.size) queue = queue.filter((w) => !withdrawn.has(w.callId));
    if (!forgetsWithdrawn || withdrawn.size === 0) return;
    const kept = unspilled.filter((w) => !withdrawn.has(w.callId));
    unspilled.splice(0, unspilled.length, ...kept);
    if (spillHead < spillTail) for (const callId of withdrawn) withdrawnSpilled.set(callId, undefined);
  }
  setHandler(requestDialSlotSignal, enqueue);
  setHandler(requestDialSlotsSignal, ({ requests }) => requests.forEach(enqueue));
  setHandler(releaseDialSlotSignal, ({ callId }) => release([callId]));
  setHandler(releaseDialSlotsSignal, ({ callIds }) => release(callIds));
  setHandler(pacingStateQuery, () => ({
    teamId,
    limits: limits!,
    liveCalls: holders.size,
    waitingCalls: waiting(),
    holders: [...holders.keys()],
  }));

  /** Tells the call its slot is there; a call that has ended cannot be told, and the slot comes back. */
  function grant(callId: string, ticket: number): void {
    if (batched) {
      unsent.push({ callId, ticket });
      return;
    }
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

  /**
   * Sends the grants made since the last send, in one local activity (no task-queue round trip),
   * without waiting for it; slots granted to calls that have ended come back.
   */
  function sendGrants(): void {
    if (unsent.length === 0) return;
    const batch = unsent.splice(0);
    grantsInFlight += batch.length;
    deliverDialGrants({ grants: batch })
      .then((endedCalls) => {
        const ended = new Set(endedCalls);
        for (const { callId, ticket } of batch) {
          if (!ended.has(callId)) continue;
          log.info('slot granted to a call that has ended; taken back', { callId });
          if (holders.get(callId) === ticket) holders.delete(callId);
          changed = true;
        }
      })
      .catch((err: unknown) => {
        // It retries until it succeeds; only a cancellation ends it: the calls ask again within the hour.
        log.error('dial grants could not be sent', { calls: batch.length, error: String(err) });
      })
      .finally(() => {
        grantsInFlight -= batch.length;
      });
  }

  /** Wakes the loop in `ms` (batched), unless a standing timer already wakes it by then. */
  function wakeForDial(ms: number): void {
    const at = Date.now() + ms;
    if (dialTimerAt !== null && dialTimerAt <= at) return;
    dialTimerAt = at;
    void sleep(ms, { summary: 'next dial' }).then(() => {
      if (dialTimerAt === at) dialTimerAt = null;
      changed = true;
    });
  }
  function wakeForSweep(summary: string): void {
    if (sweepTimerSet) return;
    sweepTimerSet = true;
    void sleep(Math.max(1, nextSweep - Date.now()), { summary }).then(() => {
      sweepTimerSet = false;
      changed = true;
    });
  }

  /** Before this run closes: every grant delivered (or failed and taken back), every handler done. */
  const settled = () => grantsInFlight === 0 && !sweeping && allHandlersFinished();
  /** Sends what is unsent and waits until settled; false when a handler granted more meanwhile. */
  async function settle(): Promise<boolean> {
    sendGrants();
    await condition(settled);
    return unsent.length === 0;
  }

  /**
   * Gives back the slots of calls that ended without saying so (terminated from the UI, say), and
   * re-reads the team's limits.
   */
  async function sweep(): Promise<void> {
    const held = [...holders];
    for (let from = 0; from < held.length; from += sweepChunk) {
      const chunk = held.slice(from, from + sweepChunk);
      const ended = new Set(await describeHoldersAside({ callIds: chunk.map(([callId]) => callId) }));
      // A slot granted again since (the call asked anew: a reset) is not this sweep's to take back.
      for (const [callId, ticket] of chunk) {
        if (!ended.has(callId) || holders.get(callId) !== ticket) continue;
        holders.delete(callId);
        changed = true; // its slot goes out now, not when the sweep ends
      }
    }
    limits = await readPacingLimits({ teamId });
  }

  /**
   * Grants what the cap and the rates allow now, in queue order within each provider; returns how long
   * until the first call that must wait may dial.
   */
  function grantReady(): number | null {
    const now = Date.now();
    /** Providers whose next call in the queue must wait: their later calls wait behind it. */
    const waiting = new Set<string>();
    let soonestMs: number | null = null;
    let at = 0;
    while (at < queue.length && holders.size < limits!.maxConcurrentCalls) {
      const next = queue[at]!;
      if (waiting.has(next.provider)) {
        at += 1;
        continue;
      }
      const dial = takeDial(nextDialAt[next.provider] ?? 0, now, limits!.dialsPerSecond[next.provider], batched);
      if (dial.waitMs > 0) {
        if (!grantsPerProvider) return dial.waitMs;
        waiting.add(next.provider);
        soonestMs = Math.min(soonestMs ?? Infinity, dial.waitMs);
        if (waiting.size === PROVIDERS.length) break;
        at += 1;
        continue;
      }
      queue.splice(at, 1);
      holders.set(next.callId, next.ticket);
      nextDialAt[next.provider] = dial.nextDialAt;
      grant(next.callId, next.ticket);
    }
    return soonestMs;
  }

  /** Whether a waiter read back from a page is still to be served (not withdrawn, not queued twice). */
  function stillWaiting(request: DialSlotRequest): boolean {
    if (!forgetsWithdrawn) return true;
    if (withdrawnSpilled.has(request.callId)) {
      const below = withdrawnSpilled.get(request.callId);
      if (below === undefined || request.ticket < below) return false;
    }
    // A call asking again (hourly) while spilled was queued twice: the copy is not served again.
    return !holders.has(request.callId) && !queue.some((w) => w.callId === request.callId);
  }

  /** Keeps the in-memory queue between refillBelow and memoryQueueMax, in arrival order. */
  async function balanceQueue(): Promise<void> {
    // Before anything is spilled or read: a waiter asking again after this is not removed with these.
    if (withdrawnSpilled.size > 0 && spillHead < spillTail) {
      const withdrawn = [...withdrawnSpilled].map(([callId, belowTicket]) => ({ callId, belowTicket }));
      await forgetSpilledWaiters({ teamId, withdrawn });
      for (const { callId, belowTicket } of withdrawn) {
        if (withdrawnSpilled.get(callId) === belowTicket) withdrawnSpilled.delete(callId);
      }
    }
    if (spillHead === spillTail) withdrawnSpilled.clear();
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
      const loaded = new Set<string>();
      for (const { seq, request } of entries) {
        if (seq < spillHead || seq >= pageEnd || !stillWaiting(request)) continue;
        queue.push(request);
        loaded.add(request.callId);
      }
      if (oneEntryPerWaiter && loaded.size > 0) {
        const kept = unspilled.filter((w) => !loaded.has(w.callId));
        unspilled.splice(0, unspilled.length, ...kept);
      }
      spillHead = pageEnd;
      await dropSpilledWaiters({ teamId, page, belowSeq: spillHead });
    }
  }

  // A run that starts afresh owns no page: entries left by a run that was terminated would keep their
  // calls' entries (one per call and ticket) out of this run's pages, where their repeats belong.
  // (Its own marker: runs begun under `pacer-one-entry-per-waiter` alone replay without it.)
  if (!carried && patched('pacer-clears-pages-on-fresh-start')) await clearSpilledWaiters({ teamId });
  limits = await readPacingLimits({ teamId });
  nextSweep = Date.now() + sweepMs;
  for (;;) {
    changed = false;
    await balanceQueue();
    const untilDial = grantReady();
    sendGrants();

    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > historyEventsBeforeContinue) {
      if (!(await settle())) continue;
      // What came while the run settled (signals keep arriving during a long sweep) goes to the pages
      // first: carried whole, a burst of requests or withdrawals could pass the 2 MB limit of the next
      // run's input, and its continue-as-new would fail on every try, stopping all grants (runs begun
      // before keep the old way to their end).
      const carriedTooMuch = unspilled.length >= pageSize || withdrawnSpilled.size >= pageSize;
      if (carriedTooMuch && patched('pacer-spills-before-continuing')) continue;
      return await continueAsNew<typeof teamPacerWorkflow>({
        teamId,
        carried: {
          holders: [...holders],
          queue,
          unspilled,
          spillHead,
          spillTail,
          nextDialAt,
          ...(withdrawnSpilled.size
            ? { withdrawnSpilled: [...withdrawnSpilled].map(([callId, below]) => [callId, below ?? null]) }
            : {}),
        },
        tuning: input.tuning,
      });
    }

    // Room left, few in the queue, and more waiting outside it: the loop's top brings them in (each
    // round moves the spill head or empties `unspilled`, so this ends).
    // Not once the sweep is due: it comes first, and a long drain must not put it off.
    const roomLeft = holders.size < limits.maxConcurrentCalls && queue.length < refillBelow;
    const moreOutside = spillHead < spillTail || unspilled.length > 0;
    if (refillsAfterGrants && roomLeft && moreOutside && Date.now() < nextSweep) continue;

    if (holders.size === 0 && waiting() === 0) {
      if (!(await condition(() => changed, idleMs, { summary: 'idle: no call waits or is live' }))) {
        // A request that arrived while the last grants settled is served by this run.
        if ((await settle()) && holders.size === 0 && waiting() === 0) return;
      }
      continue;
    }
    const summary = `${holders.size}/${limits.maxConcurrentCalls} live, ${waiting()} waiting`;
    if (batched) {
      if (untilDial !== null) wakeForDial(Math.max(1, untilDial));
      if (!sweeping) wakeForSweep(summary);
      await condition(() => changed);
    } else {
      const timeout = Math.max(1, Math.min(untilDial ?? Infinity, nextSweep - Date.now()));
      await condition(() => changed, timeout, { summary });
    }
    if (Date.now() >= nextSweep && sweepsAside) {
      // Due again before the last has ended: the next starts when it has (its end wakes the loop).
      if (!sweeping) {
        nextSweep = Date.now() + sweepMs;
        sweeping = true;
        void sweep()
          .catch((err: unknown) => log.error('pacer sweep failed', { error: String(err) }))
          .finally(() => {
            sweeping = false;
            changed = true;
          });
      }
    } else if (Date.now() >= nextSweep) {
      nextSweep = Date.now() + sweepMs;
      // Slots of calls that ended without giving them back (terminated from the UI, say) return.
      if (holders.size > 0) {
        for (const callId of await findEndedCalls({ callIds: [...holders.keys()] })) holders.delete(callId);
      }
      limits = await readPacingLimits({ teamId });
    }
  }
}

// The pacer's store in memory, with the Mongo store's semantics (test/integration covers that one).
import type { DialSlotRequest, PacingLimits } from '../../src/contracts/pacing';
import { spilledWaiterId } from '../../src/data/models/dial-queue-entry';
import type { PacingStore, SpilledWaiter } from '../../src/data/pacing-store';

export function memoryPacingStore(
  limits: { maxConcurrentCalls?: number; dialsPerSecond?: Partial<PacingLimits['dialsPerSecond']> } = {},
) {
  const entries = new Map<string, SpilledWaiter & { teamId: string; page: number }>();
  let spilledEver = 0;
  const store: PacingStore = {
    async readLimits(_teamId, defaults) {
      return { ...defaults, ...limits, dialsPerSecond: { ...defaults.dialsPerSecond, ...limits.dialsPerSecond } };
    },
    async spill(teamId, firstSeq, waiters: DialSlotRequest[], pageSize) {
      waiters.forEach((request, i) => {
        const seq = firstSeq + i;
        const id = spilledWaiterId(teamId, request);
        // Inserts only: a waiter already there keeps its first place.
        if (entries.has(id)) return;
        spilledEver += 1;
        entries.set(id, { teamId, seq, page: Math.floor(seq / pageSize), request });
      });
    },
    async loadPage(teamId, page) {
      return [...entries.values()]
        .filter((e) => e.teamId === teamId && e.page === page)
        .map(({ seq, request }) => ({ seq, request }))
        .sort((a, b) => a.seq - b.seq);
    },
    async dropPage(teamId, page, belowSeq) {
      for (const [key, e] of entries)
        if (e.teamId === teamId && e.page === page && e.seq < belowSeq) entries.delete(key);
    },
    async clear(teamId) {
      for (const [key, e] of entries) if (e.teamId === teamId) entries.delete(key);
    },
    async forget(teamId, withdrawn) {
      for (const [key, e] of entries) {
        const w = withdrawn.find((w) => w.callId === e.request.callId);
        if (e.teamId === teamId && w && (w.belowTicket === undefined || e.request.ticket < w.belowTicket))
          entries.delete(key);
      }
    },
  };
  return { store, spilled: () => entries.size, spilledEver: () => spilledEver };
}

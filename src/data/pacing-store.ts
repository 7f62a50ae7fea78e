// What the team pacer's activities read and write: the team's limits and the spilled part of its queue.
import type { DialSlotRequest, PacingLimits } from '../contracts/pacing';
import { PROVIDERS, type ProviderName } from '../contracts/providers';
import { DialQueueEntry, spilledWaiterId } from './models/dial-queue-entry';
import { Team } from './models/team';
import { isDuplicateKeyOnly } from './duplicate-key';

export interface SpilledWaiter {
  seq: number;
  request: DialSlotRequest;
}

export interface PacingStore {
  /** The team's limits, its own settings over `defaults`. */
  readLimits(teamId: string, defaults: PacingLimits): Promise<PacingLimits>;
  /** Writes waiters numbered from `firstSeq`; writing the same ones again changes nothing. */
  spill(teamId: string, firstSeq: number, waiters: DialSlotRequest[], pageSize: number): Promise<void>;
  loadPage(teamId: string, page: number): Promise<SpilledWaiter[]>;
  dropPage(teamId: string, page: number, belowSeq: number): Promise<void>;
  /** Removes every entry of the team (what a pacer run that was terminated left). */
  clear(teamId: string): Promise<void>;
  /** Removes the entries of calls that withdrew: all of a call's, or those below `belowTicket`. */
  forget(teamId: string, withdrawn: Array<{ callId: string; belowTicket?: number }>): Promise<void>;
}

export function createPacingStore(): PacingStore {
  return {
    async readLimits(teamId, defaults) {
      const team = await Team.findById(teamId, { pacing: 1 }).lean();
      const own = team?.pacing;
      const dialsPerSecond = { ...defaults.dialsPerSecond };
      for (const provider of PROVIDERS) {
        const value = own?.dialsPerSecond?.[provider];
        if (typeof value === 'number' && value > 0) dialsPerSecond[provider] = value;
      }
      return { maxConcurrentCalls: own?.maxConcurrentCalls ?? defaults.maxConcurrentCalls, dialsPerSecond };
    },
    async spill(teamId, firstSeq, waiters, pageSize) {
      const docs = waiters.map((request, i) => {
        const seq = firstSeq + i;
        return { _id: spilledWaiterId(teamId, request), teamId, page: Math.floor(seq / pageSize), seq, ...request };
      });
      try {
        await DialQueueEntry.insertMany(docs, { ordered: false });
      } catch (err) {
        // A retry after a write that landed, or a call's repeated request while its first still waits
        // in a page: the waiter is there already, in its first place.
        if (!isDuplicateKeyOnly(err)) throw err;
      }
    },
    async loadPage(teamId, page) {
      const docs = await DialQueueEntry.find({ teamId, page }).lean();
      return docs
        .map((d) => ({
          seq: d.seq,
          request: { callId: d.callId, provider: d.provider as ProviderName, ticket: d.ticket },
        }))
        .sort((a, b) => a.seq - b.seq);
    },
    async dropPage(teamId, page, belowSeq) {
      await DialQueueEntry.deleteMany({ teamId, page, seq: { $lt: belowSeq } });
    },
    async clear(teamId) {
      await DialQueueEntry.deleteMany({ teamId });
    },
    async forget(teamId, withdrawn) {
      const all = withdrawn.filter((w) => w.belowTicket === undefined).map((w) => w.callId);
      if (all.length) await DialQueueEntry.deleteMany({ teamId, callId: { $in: all } });
      // A call that asked again since keeps its new entry (a higher ticket); rare, so one delete each.
      for (const { callId, belowTicket } of withdrawn) {
        if (belowTicket !== undefined)
          await DialQueueEntry.deleteMany({ teamId, callId, ticket: { $lt: belowTicket } });
      }
    },
  };
}

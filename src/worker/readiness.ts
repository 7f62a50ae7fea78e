// What the worker's /readyz checks: MongoDB and Temporal, as the API's does, and that each of its
// Temporal workers polls (`RUNNING`: from `run()` until its shutdown begins).
import type { Client } from '@temporalio/client';
import { pingMongo } from '../data/connection';
import { NotReady, type ReadinessCheck } from '../observability/readiness';
import { pingTemporal } from '../temporal/connection';
import type { CallWorker } from './create-worker';

/** The process as it stands: what it has connected and made so far. */
export interface WorkerProcess {
  /** Whether its MongoDB connection has been made (it is then pinged). */
  mongodb: boolean;
  client: Client | null;
  /** Set once it is about to run. */
  worker: CallWorker | null;
}

export function workerReadinessChecks(parts: WorkerProcess): Record<string, ReadinessCheck> {
  const { mongodb, client, worker } = parts;
  const polling: Record<string, ReadinessCheck> = worker
    ? Object.fromEntries(
        Object.entries(worker.states()).map(([taskQueue, state]) => [
          taskQueue,
          async () => {
            if (state !== 'RUNNING') throw new NotReady(`not polling: ${state}`);
          },
        ]),
      )
    : {
        worker: async () => {
          throw new NotReady('starting: connecting, loading its workflow code');
        },
      };
  return {
    mongodb: async () => {
      if (!mongodb) throw new NotReady('connecting');
      await pingMongo();
    },
    temporal: async () => {
      if (!client) throw new NotReady('connecting');
      await pingTemporal(client);
    },
    ...polling,
  };
}

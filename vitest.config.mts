import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Projects: `unit` needs no server; `workflows` runs workflow code with stub activities on Temporal's
// time-skipping test server; `integration` and `integration-timing` run against real MongoDB
// (FerretDB) and a real Temporal dev server that test/setup/global-setup.ts starts once per run.
// Files run two at a time, whatever the machine: every integration file has its own database, task
// queue, API, worker and emulator, and most of their time is spent waiting on timers, so two lanes
// halve the run on 2 cores (Vitest's default there would be a single lane).
// Integration files whose calls race real timers: dial spacing and provider rate limits measured at
// the emulator, machine greetings at 10x speed, call lengths. They run in a group of their own, after
// the rest, so that no heavy file (the 10,000-call batch, the chaos runs) shares the servers with them.
// Two at a time, not three: three took the group alone 120-126 s (three runs, against about 175 s at
// two in whole runs), but in a whole run its first 80 s held both cores at 100 % and a campaign
// test's worker restart took 49 s instead of 7 (2026-11-30).
const TIMING = [
  'test/integration/campaign-burst.test.ts',
  'test/integration/campaigns.test.ts',
  'test/integration/team-pacer.test.ts',
  'test/integration/telephony-timing.test.ts',
  'test/integration/machine-detection.test.ts',
];
// The longest files start first in their group, so that neither lane is left with a long file at the
// end (on 2 cores, 2026-11-27: the batch 143 s, the chaos runs 83 and 62, the quick bench 108, the
// list pages 73, the operator's calls 48; in the timing group the pacer 102, the burst 98, machine
// detection 78). The quick bench comes after both chaos runs, by when the batch is about done: its
// scenarios have leads and deadlines that a 10,000-call batch beside them could overrun. Vitest's own
// order follows durations cached by an earlier run (file sizes on a fresh clone); this one is the same
// everywhere.
const FIRST = [
  'test/integration/batch-and-list.test.ts',
  'test/integration/chaos-faults.test.ts',
  'test/integration/chaos.test.ts',
  'test/integration/bench-quick.test.ts',
  'test/integration/call-list.test.ts',
  'test/integration/operator-calls.test.ts',
  'test/integration/team-pacer.test.ts',
  'test/integration/campaign-burst.test.ts',
  'test/integration/machine-detection.test.ts',
];

function rank(spec: TestSpecification): number {
  const first = FIRST.findIndex((file) => spec.moduleId.endsWith(file));
  return first === -1 ? FIRST.length : first;
}

class FileOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: the other files keep Vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

// Unit, workflow and most integration files run one after another in their lane's process
// (`isolate: false`): importing the SDK, Mongoose and the service again for every file cost 110 s of the
// lanes' time per run (2.8 s per integration file), 33-45 s this way. Every file still starts and stops
// its own stack, database and task queue; what a process keeps is module state (loaded code, remembered
// lookups keyed by ids that no two files share) and Temporal's Runtime, which a process installs once.
// These files need a process of their own: they install that Runtime themselves, or read what the SDK
// logs through the Runtime of the process's first worker. The timing group keeps isolation: its pacer
// file installs the Runtime too, and its files are the ones least to be disturbed.
const OWN_PROCESS = [
  'test/integration/cancel-during-dial.test.ts',
  'test/integration/capture-liveness.test.ts',
  'test/integration/log-secrets.test.ts',
  'test/integration/webhook-attempt-retry.test.ts',
];

const integration = {
  pool: 'forks' as const,
  globalSetup: ['test/setup/global-setup.ts'],
  testTimeout: 120_000,
  hookTimeout: 300_000,
};

export default defineConfig({
  test: {
    pool: 'forks', // Temporal's native bridge crashes inside worker threads
    maxWorkers: 2,
    sequence: { sequencer: FileOrder },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'forks',
          isolate: false,
        },
      },
      {
        test: {
          name: 'workflows',
          include: ['test/workflows/**/*.test.ts'],
          pool: 'forks',
          isolate: false,
          globalSetup: ['test/setup/workflows-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...TIMING, ...OWN_PROCESS],
          ...integration,
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration-own-process',
          include: OWN_PROCESS,
          ...integration,
        },
      },
      {
        test: {
          name: 'integration-timing',
          include: TIMING,
          sequence: { groupOrder: 1 },
          ...integration,
        },
      },
    ],
  },
});

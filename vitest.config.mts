import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Projects: `unit` needs no server; `workflows` runs workflow code with stub activities on
// Temporal's time-skipping test server; the `integration-*` projects run against real MongoDB
// (FerretDB) and a real Temporal dev server that test/setup/global-setup.ts starts once per run.
// Every integration file has its own database, task queue, API, worker and emulator.
//
// Three groups, one after another, each with its own number of lanes (files at a time):
// 1. `unit`, `workflows` and `integration-heavy`, two lanes. The heavy files keep both cores busy
//    on their own: the 10,000-call batch, the chaos runs and the benches start processes and
//    servers, the CLI's files start a Node process per command, the list pages seed thousands of
//    calls.
// 2. `integration` and `integration-own-process`, three lanes. These files spend most of their time
//    waiting on workflow timers, retries and calls: at two lanes the cores were 20-60 % busy
//    through them, at three 60-90 % (2026-11-30). Tried on 2026-11-27, before the lanes shared
//    their processes and the CLI ran compiled, these groups made the run longer; now its Vitest
//    time fell from 756-797 s to 723 s, at a slower hour of the machine.
// 3. `integration-timing`, two lanes: files whose calls race real timers (dial spacing and provider
//    rate limits measured at the emulator, machine greetings at 10x speed, call lengths), after the
//    rest, so that nothing heavy shares the servers with them. Three lanes took the group alone
//    120-126 s against about 175 s, but held both cores at 100 % for its first 80 s (2026-11-30).
//    Within the pacer's and machine detection's files, the cases that measure no dial rate run five
//    at a time instead (it.concurrent): the group's longest lane went from about 140 s to 116.
const HEAVY = [
  'test/integration/batch-and-list.test.ts',
  'test/integration/chaos-faults.test.ts',
  'test/integration/chaos.test.ts',
  'test/integration/bench-quick.test.ts',
  'test/integration/call-list.test.ts',
  'test/integration/admin-cli.test.ts',
  'test/integration/schemathesis.test.ts',
  'test/integration/bench-interrupt.test.ts',
  'test/integration/operator-calls.test.ts',
  'test/integration/npm-start.test.ts',
  'test/integration/operator-setup.test.ts',
];
const TIMING = [
  'test/integration/campaign-burst.test.ts',
  'test/integration/campaigns.test.ts',
  'test/integration/team-pacer.test.ts',
  'test/integration/telephony-timing.test.ts',
  'test/integration/machine-detection.test.ts',
];
// The longest files start first in their group, so that no lane is left alone with a long file at
// the end (2 cores, 2026-11-30: the batch 100 s, the chaos runs 80 and 58, the quick bench 73, the
// list pages 73; the provider's time limit 35, the unreachable provider 31, dispatch 32; in the
// timing group, in a whole run, the burst 73, the pacer 60, campaigns 46 (83 when its worker
// restart stalls), machine detection 29). The quick bench comes after both chaos runs, by when the
// batch is about done: its scenarios have leads and deadlines that a 10,000-call batch beside them
// could overrun. Vitest's own order follows durations cached by an earlier run (file sizes on a
// fresh clone); this one is the same everywhere.
const FIRST = [
  ...HEAVY.slice(0, 5),
  'test/integration/provider-time-limit.test.ts',
  'test/integration/dispatch.test.ts',
  'test/integration/provider-unreachable.test.ts',
  'test/integration/campaign-burst.test.ts',
  'test/integration/team-pacer.test.ts',
  'test/integration/campaigns.test.ts',
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
// (`isolate: false`): importing the SDK, Mongoose and the service again for every file cost 110 s
// of the lanes' time per run (2.8 s per integration file), 33-45 s this way. Every file still
// starts and stops its own stack, database and task queue; what a process keeps is module state
// (loaded code, remembered lookups keyed by ids that no two files share) and Temporal's Runtime,
// which a process installs once. These files need a process of their own: they install that Runtime
// themselves, or read what the SDK logs through the Runtime of the process's first worker. The
// timing group keeps isolation: its pacer file installs the Runtime too, and its files are the ones
// least to be disturbed.
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
          name: 'integration-heavy',
          include: HEAVY,
          ...integration,
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...HEAVY, ...TIMING, ...OWN_PROCESS],
          sequence: { groupOrder: 1 },
          maxWorkers: 3,
          ...integration,
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration-own-process',
          include: OWN_PROCESS,
          sequence: { groupOrder: 1 },
          maxWorkers: 3,
          ...integration,
        },
      },
      {
        test: {
          name: 'integration-timing',
          include: TIMING,
          sequence: { groupOrder: 2 },
          ...integration,
        },
      },
    ],
  },
});

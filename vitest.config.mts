import { defineConfig } from 'vitest/config';
import FileOrder from './test/setup/file-order';

// Three projects: `unit` needs no server; `workflows` runs workflow code with stub activities on
// Temporal's time-skipping test server; `integration` runs against real MongoDB (FerretDB) and a
// real Temporal dev server that test/setup/global-setup.ts starts once per run.
// Files run two at a time, whatever the machine: every integration file has its own database, task
// queue, API, worker and emulator, and most of their time is spent waiting on timers, so two lanes
// halve the run on 2 cores (Vitest's default there would be a single lane).
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
        },
      },
      {
        test: {
          name: 'workflows',
          include: ['test/workflows/**/*.test.ts'],
          pool: 'forks',
          globalSetup: ['test/setup/workflows-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          globalSetup: ['test/setup/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});

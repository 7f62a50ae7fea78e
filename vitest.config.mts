import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs no server; `integration` runs against real MongoDB (FerretDB) and a
// real Temporal dev server that test/setup/global-setup.ts starts once per run.
export default defineConfig({
  test: {
    pool: 'forks', // Temporal's native bridge crashes inside worker threads
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
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          globalSetup: ['test/setup/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

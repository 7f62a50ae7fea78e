// import (not run by default): `calls import` of a CSV file, run as an operator runs it, as its own
// process through the API; how long the CLI's own part took and how long it waited for the API.
// BENCH_IMPORT_ROWS sets the full run's rows as before (`import.rows=...` on the command line too).
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FAR_AHEAD_MS, figure, ms, type BenchScenario } from '../scenario';

export const importScenario: BenchScenario = {
  name: 'import',
  description: '`calls import` of a CSV file as its own process (CLI time and API time); no baseline',
  defaultOn: false,
  params: {
    rows: { full: Number(process.env.BENCH_IMPORT_ROWS ?? 100_000), quick: 2000, description: 'CSV rows' },
  },
  async run(ctx) {
    const rows = ctx.params.rows!;
    const later = new Date(Date.now() + FAR_AHEAD_MS).toISOString();
    const file = path.join(ctx.workDir, 'import.csv');
    const lines = Array.from(
      { length: rows },
      (_, i) => `+1415${String(2_000_000 + i).padStart(7, '0')},P${i},${later}`,
    );
    await writeFile(file, ['phone,firstName,callDelayedUntil', ...lines].join('\n'));
    ctx.log(`import: calls import of ${rows} rows`);
    const started = performance.now();
    const result = await new Promise<{ calls: number; apiSeconds: number }>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', path.resolve(__dirname, '../../src/main/admin.ts'), 'calls', 'import', '--json'].concat([
          '--team',
          ctx.team.teamId,
          '--template',
          ctx.team.templateId,
          '--file',
          file,
          '--api-url',
          ctx.apiUrl,
        ]),
        { env: { ...ctx.serviceEnv, OCO_API_KEY: ctx.team.key }, maxBuffer: 64 * 2 ** 20 },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`))
            : resolve(JSON.parse(stdout) as { calls: number; apiSeconds: number }),
      );
    });
    const seconds = (performance.now() - started) / 1000;
    return [
      figure(`calls import of ${result.calls} CSV rows, in all`, ms(seconds), 's'),
      figure(`calls import: the CLI's own part`, ms(seconds - result.apiSeconds), 's'),
      figure(`calls import: waiting for the API`, ms(result.apiSeconds), 's', {
        note: `${Math.round(result.calls / result.apiSeconds)} calls/s`,
      }),
    ];
  },
};

// `npm run chaos`: injects faults into a running service (a killed worker, a restarted Temporal
// server, a database outage, an API killed under a batch, a misbehaving provider, a webhook receiver
// that is down) and proves that nothing is lost. Prints one row per fault, every count expected 0,
// with the details of every non-zero one; exits 1 if any is not 0 or a scenario could not run.
//
//   npm run chaos                          # about 10-15 minutes on 2 cores
//   npm run chaos -- --quick               # the same scenarios, small and fast (under 2 minutes)
//   npm run chaos -- --only worker-killed,database-down --calls 30 --json chaos.json --keep
import { formatDetails, formatTable, writeJsonReport } from './chaos/report';
import { parseChaosArgs, UsageError } from './chaos/options';
import { runChaos } from './chaos/run';

async function main(): Promise<number> {
  let options;
  try {
    options = parseChaosArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  const report = await runChaos(options);
  const say = (text: string) => process.stdout.write(`${text}\n`);
  say(formatDetails(report.scenarios, { outputOnFailure: true }));
  say(`\nResults (${report.seconds.toFixed(0)} s, seed ${options.seed}):\n`);
  say(formatTable(report.scenarios));
  for (const error of report.errors) say(`ERROR: ${error}`);
  if (options.jsonFile) {
    await writeJsonReport(options.jsonFile, report);
    say(`\nWrote ${options.jsonFile}`);
  }
  say(report.ok ? '\nNothing lost.' : '\nFAILED: see the details above.');
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chaos failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

// The chaos run (`npm run chaos -- --quick`) through its library, with the fault nothing else in the
// suite injects: the database (FerretDB and PostgreSQL) stopped under live calls and started again;
// nothing is lost, every count is 0. The failure message is the run's report, with the calls behind
// every non-zero count and the processes' last lines. The other faults run in `npm run chaos` (each
// adds 10-40 s, more than the suite's time allows); their fast relatives here: dial answers and
// callbacks lost (provider-faults.test.ts), the Idempotency-Key takeover after an API died
// (dispatch.test.ts), a failing webhook receiver (webhooks.test.ts), worker restarts (campaigns,
// redial and webhook tests).
import { expect, inject, it } from 'vitest';
import { CHECKS } from '../../scripts/chaos/checks';
import { chaosOptions, type ScenarioName } from '../../scripts/chaos/options';
import { formatDetails, formatTable } from '../../scripts/chaos/report';
import { runChaos } from '../../scripts/chaos/run';

const IN_SUITE: ScenarioName[] = ['database-down'];

it('loses, rings twice, strands, duplicates, misreports and drops nothing through a database outage', async () => {
  const report = await runChaos(
    // Three calls per provider: every provider, outcome and state still met; the suite's workflow bundle.
    chaosOptions({ quick: true, calls: 9, only: IN_SUITE, workflowBundlePath: inject('workflowBundlePath') }),
    (line) => process.stdout.write(`${line}\n`),
  );
  const story = [
    formatTable(report.scenarios),
    formatDetails(report.scenarios, { outputOnFailure: true }),
    ...report.errors.map((e) => `ERROR: ${e}`),
  ].join('\n');
  expect(report.errors, story).toEqual([]);
  expect(report.scenarios.map((s) => s.name)).toEqual(IN_SUITE);
  for (const scenario of report.scenarios) {
    expect(scenario.errors, `${scenario.name} could not run as meant\n${story}`).toEqual([]);
    expect(scenario.faultsInjected, `${scenario.name} injected no fault\n${story}`).toBeGreaterThan(0);
    expect(scenario.calls, `${scenario.name} created no calls\n${story}`).toBeGreaterThan(0);
    for (const check of CHECKS) expect(scenario.findings[check], `${scenario.name}: ${check}\n${story}`).toEqual([]);
  }
}, 300_000);

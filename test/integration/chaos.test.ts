// The chaos run (`npm run chaos -- --quick`) through its library: each fault of the processes a call
// depends on (a worker killed twice, a restarted Temporal server, a database outage, a misbehaving
// provider) is injected at least once into its own servers and processes, and nothing is lost: every
// count of every scenario is 0. The failure message is the run's report, with the calls behind every
// non-zero count and the processes' last lines. Two faults stay in `npm run chaos` to keep the suite
// within its time: the API killed under a batch (40 s even small: a real kill, a lease to run out, a
// batch to cancel; test/integration/dispatch.test.ts checks the takeover it relies on) and the webhook
// receiver that is down (test/integration/webhooks.test.ts checks retries against a failing one).
import { expect, inject, it } from 'vitest';
import { CHECKS } from '../../scripts/chaos/checks';
import { chaosOptions, SCENARIO_NAMES } from '../../scripts/chaos/options';
import { formatDetails, formatTable } from '../../scripts/chaos/report';
import { runChaos } from '../../scripts/chaos/run';

const IN_SUITE = SCENARIO_NAMES.filter((name) => name !== 'api-killed-mid-batch' && name !== 'webhook-receiver-down');

it('loses, rings twice, strands, duplicates, misreports and drops nothing under any fault', async () => {
  const report = await runChaos(
    // The suite's workflow bundle: the run's worker restarts then take a second or two.
    // Three calls per provider and scenario: every provider, outcome and state still met.
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

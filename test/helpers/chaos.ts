// Runs chosen faults of the chaos run (`npm run chaos -- --quick`) through its library and asserts
// what its table says: every fault injected, every count 0. A failure's message is the run's report,
// with the calls behind every non-zero count and the processes' last lines.
import { expect, inject } from 'vitest';
import { CHECKS } from '../../scripts/chaos/checks';
import { chaosOptions, type ScenarioName } from '../../scripts/chaos/options';
import { formatDetails, formatTable } from '../../scripts/chaos/report';
import { runChaos } from '../../scripts/chaos/run';

export async function expectNothingLostThrough(scenarios: ScenarioName[]): Promise<void> {
  const report = await runChaos(
    // Three calls per provider: every provider, outcome and state still met. A batch of 150 for the API
    // kill: the kill lands while its workflows start (about a second and a half), and cancelling it
    // afterwards, a call at a time through each workflow, takes half as long as the CLI's 300.
    // The suite's workflow bundle, and its compiled build: the service's processes start again and again.
    chaosOptions({
      quick: true,
      calls: 9,
      batchSize: 150,
      only: scenarios,
      workflowBundlePath: inject('workflowBundlePath'),
      dist: inject('compiledDistPath'),
    }),
    (line) => process.stdout.write(`${line}\n`),
  );
  const story = [
    formatTable(report.scenarios),
    formatDetails(report.scenarios, { outputOnFailure: true }),
    ...report.errors.map((e) => `ERROR: ${e}`),
  ].join('\n');
  expect(report.errors, story).toEqual([]);
  expect(report.scenarios.map((s) => s.name)).toEqual(scenarios);
  for (const scenario of report.scenarios) {
    expect(scenario.errors, `${scenario.name} could not run as meant\n${story}`).toEqual([]);
    expect(scenario.faultsInjected, `${scenario.name} injected no fault\n${story}`).toBeGreaterThan(0);
    expect(scenario.calls, `${scenario.name} created no calls\n${story}`).toBeGreaterThan(0);
    for (const check of CHECKS) expect(scenario.findings[check], `${scenario.name}: ${check}\n${story}`).toEqual([]);
  }
}

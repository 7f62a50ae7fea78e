// The results as a developer reads them: one aligned row per fault (every loss count expected 0),
// then what each scenario did and, for every non-zero cell, the calls behind it.
import { writeFile } from 'node:fs/promises';
import { CHECKS, type Check } from './checks';
import type { ChaosOptions } from './options';
import type { ScenarioResult } from './scenario-run';

export interface ChaosReport {
  startedAt: string;
  seconds: number;
  options: Omit<ChaosOptions, 'workflowBundlePath'>;
  scenarios: ScenarioResult[];
  /** Errors of the run itself (servers that would not start). */
  errors: string[];
  ok: boolean;
}

const COLUMN_TITLES: Record<Check, string> = {
  lost: 'lost',
  doubleDialled: 'double-dialled',
  stuck: 'stuck',
  duplicates: 'duplicate records',
  mismatched: 'mismatched',
  undelivered: 'undelivered events',
};

/** A scenario passes when it injected its fault, ran to the end, and every count is 0. */
export function scenarioPassed(result: ScenarioResult): boolean {
  return (
    result.errors.length === 0 && result.faultsInjected > 0 && CHECKS.every((c) => result.findings[c].length === 0)
  );
}

/** One line per scenario as it ends: `worker-killed: 12 calls, 2 faults injected; lost 0, ...`. */
export function summary(s: ScenarioResult): string {
  const counts = CHECKS.map((c) => `${COLUMN_TITLES[c]} ${s.findings[c].length}`).join(', ');
  const errors = s.errors.length ? `; ${s.errors.length} error(s)` : '';
  return `${s.name}: ${s.calls} calls, ${s.faultsInjected} faults injected; ${counts}${errors} (${s.seconds.toFixed(0)} s)`;
}

export function formatTable(scenarios: ScenarioResult[]): string {
  const header = ['fault', 'calls', 'faults injected', ...CHECKS.map((c) => COLUMN_TITLES[c]), 'seconds', 'result'];
  const rows = scenarios.map((s) => [
    s.name,
    String(s.calls),
    String(s.faultsInjected),
    ...CHECKS.map((c) => String(s.findings[c].length)),
    s.seconds.toFixed(0),
    scenarioPassed(s) ? 'ok' : s.errors.length ? 'ERROR' : 'FAIL',
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  // Names left, numbers right.
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 || i === cells.length - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatDetails(scenarios: ScenarioResult[], options: { outputOnFailure: boolean }): string {
  const out: string[] = [];
  for (const s of scenarios) {
    out.push(`\n${s.name} (${s.seconds.toFixed(0)} s):`);
    for (const note of s.notes) out.push(`  - ${note}`);
    if (s.faultsInjected === 0) out.push('  ERROR: no fault was injected: this scenario proved nothing');
    for (const error of s.errors) out.push(`  ERROR: ${error}`);
    for (const check of CHECKS) {
      const items = s.findings[check];
      if (items.length === 0) continue;
      out.push(`  ${COLUMN_TITLES[check]}: ${items.length}`);
      for (const item of items) out.push(`    * ${item}`);
    }
    if (options.outputOnFailure && s.output && !scenarioPassed(s))
      out.push('  last lines of the servers and service processes:', s.output);
  }
  return out.join('\n');
}

/** The report as JSON, each scenario with its counts beside the findings behind them. */
export async function writeJsonReport(file: string, report: ChaosReport): Promise<void> {
  const scenarios = report.scenarios.map((s) => ({
    ...s,
    passed: scenarioPassed(s),
    counts: Object.fromEntries(CHECKS.map((c) => [c, s.findings[c].length])),
  }));
  await writeFile(file, `${JSON.stringify({ ...report, scenarios }, null, 2)}\n`);
}

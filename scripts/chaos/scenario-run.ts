// What every scenario shares: its record of what happened (notes, errors, faults injected), the
// harness it runs in, and the last step of every scenario: observe the service, the provider and the
// receiver once the calls have settled, and check them against each other.
import { checkCalls, emptyFindings, mergeFindings, statusSpread, type Findings, type StoredCall } from './checks';
import type { EmulatorControl } from './emulator-control';
import { stillRunningAfterGrace, storedCalls, type Settled } from './observe';
import type { ChaosOptions, ScenarioName } from './options';
import type { ChaosTeam } from './population';
import type { ChaosStack } from './processes';
import type { WebhookReceiver } from './receiver';
import { requestJson, sleep } from './http';

export interface Harness {
  stack: ChaosStack;
  options: ChaosOptions;
  receiver: WebhookReceiver;
  emulator: EmulatorControl;
  /** Unique per run: idempotency keys and file ids carry it. */
  runId: string;
  /** Seeded (`--seed`): the kill moments and the emulator's faults repeat with it. */
  random: () => number;
  log: (line: string) => void;
}

export interface ScenarioResult {
  name: ScenarioName;
  /** Calls the API accepted (201). */
  calls: number;
  faultsInjected: number;
  findings: Findings;
  /** Why the scenario could not run as meant (no 201, a process that crashed, ...): the run fails. */
  errors: string[];
  /** What happened: when the faults hit, how the calls were spread, how long recovery took. */
  notes: string[];
  seconds: number;
  /** The processes' and servers' last lines, when something was found. */
  output?: string;
}

export class ScenarioRun {
  readonly notes: string[] = [];
  readonly errors: string[] = [];
  readonly findings = emptyFindings();
  injected = 0;
  accepted = 0;
  /** The scenario's own team, once seeded. */
  team: ChaosTeam | null = null;
  private readonly started = Date.now();
  private readonly exitsBefore: number;

  constructor(
    readonly name: ScenarioName,
    readonly h: Harness,
  ) {
    this.exitsBefore = h.stack.unexpectedExits().length;
  }

  note(line: string): void {
    this.notes.push(line);
    this.h.log(`  [${this.name}] ${line}`);
  }

  fail(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.errors.push(message);
    this.h.log(`  [${this.name}] could not go on: ${message}`);
  }

  /**
   * Waits until the API says it is ready (`/readyz`: MongoDB and Temporal reachable) after `what`
   * came back; an API that stays unready is an error of the scenario.
   */
  async apiReadyAgain(what: string, since: number): Promise<boolean> {
    const deadline = since + this.h.options.timing.recoveryDeadlineMs;
    let last: string;
    for (;;) {
      const answer = await requestJson(`${this.h.stack.apiUrl}/readyz`, { timeoutMs: 5_000 });
      if (answer.status === 200) {
        this.note(`the API was ready again ${((Date.now() - since) / 1000).toFixed(1)} s after ${what}`);
        return true;
      }
      last = answer.status === 0 ? `no answer (${answer.error})` : `${answer.status} ${JSON.stringify(answer.body)}`;
      if (Date.now() > deadline) break;
      await sleep(500);
    }
    this.errors.push(
      `the API was still not ready ${((Date.now() - since) / 1000).toFixed(0)} s after ${what}: ${last}`,
    );
    return false;
  }

  /**
   * The result. A service process that died on its own meanwhile, or an API that stays unready, is
   * started again (and said so) so that the next scenario meets a working service.
   */
  async finish(): Promise<ScenarioResult> {
    const { stack } = this.h;
    // Taken before anything is restarted: the lines that show what went wrong.
    const output = stack.recentOutput();
    const ready = await requestJson(`${stack.apiUrl}/readyz`, { timeoutMs: 5_000 });
    if (stack.api.running && ready.status !== 200) {
      this.errors.push(
        `the API was not ready at the end of the scenario (${ready.status || ready.error} ${JSON.stringify(ready.body ?? '')}): ` +
          'restarted it for the next scenario',
      );
      await stack.api.kill('SIGKILL');
    }
    this.errors.push(...stack.unexpectedExits().slice(this.exitsBefore));
    for (const service of [stack.emulator, stack.worker, stack.api]) {
      if (service.running) continue;
      this.note(`${service.name} was not running at the end: starting it again for the next scenario`);
      if (service === stack.worker) await stack.startWorker().catch((err: unknown) => this.fail(err));
      else if (service === stack.api) await stack.startApi().catch((err: unknown) => this.fail(err));
      else service.start();
    }
    const found = Object.values(this.findings).some((items) => items.length > 0);
    return {
      name: this.name,
      calls: this.accepted,
      faultsInjected: this.injected,
      findings: this.findings,
      errors: this.errors,
      notes: this.notes,
      seconds: (Date.now() - this.started) / 1000,
      ...(found || this.errors.length ? { output } : {}),
    };
  }
}

/**
 * The checks, once the calls settled (or the deadline came): the emulator is let finish what it
 * still does, call workflows get a grace period to close, then every view is read and compared.
 */
export async function observeAndCheck(
  run: ScenarioRun,
  input: {
    team: ChaosTeam;
    accepted: Map<string, string>;
    receiverEvents: () => ReturnType<WebhookReceiver['events']>;
    settled: Settled;
    fileId?: string;
    /** Calls the scenario stored and then deleted itself: gone from the records is their right end. */
    deletedByScenario?: Set<string>;
    /** Calls seen stored earlier (the batch before its cancel), so that a record deleted since still counts. */
    seenStored?: StoredCall[];
  },
): Promise<Findings> {
  const { h } = run;
  if (!input.settled.settled) {
    run.note(
      `deadline (${input.settled.seconds.toFixed(0)} s): ${input.settled.notTerminal.size} call(s) not terminal, ` +
        `${input.settled.undelivered} terminal event(s) not at the receiver` +
        (input.settled.problem ? ` (${input.settled.problem})` : ''),
    );
  }
  if (!(await h.emulator.idle()))
    run.note('the emulator was not idle within 30 s: calls still live or callbacks pending');
  const scope = { teamId: input.team.teamId, fileId: input.fileId };
  const before = await storedCalls(scope);
  const ids = new Set([
    ...input.accepted.keys(),
    ...before.map((c) => c._id),
    ...(input.seenStored ?? []).map((c) => c._id),
  ]);
  const running = await stillRunningAfterGrace(
    h.stack.temporal,
    h.stack.taskQueue,
    ids,
    h.options.timing.workflowGraceMs,
  );
  const stored = await storedCalls(scope);
  const records = new Map<string, StoredCall | 'deleted'>(stored.map((c) => [c._id, c]));
  for (const seen of input.seenStored ?? []) {
    if (records.has(seen._id)) continue;
    // Gone since: deleted by the scenario's own cancel, or lost.
    records.set(seen._id, input.deletedByScenario?.has(seen._id) ? 'deleted' : seen);
  }
  const emulatorCalls = (await h.emulator.calls()).filter((c) => input.team.accounts.has(c.account));
  const received = input.receiverEvents();
  run.note(
    `checked ${records.size} stored calls (${statusSpread(records.values())}) against ${emulatorCalls.length} ` +
      `provider calls and ${received.length} webhook events`,
  );
  const findings = checkCalls({
    accepted: input.accepted,
    records,
    running,
    notTerminalAtDeadline: input.settled.notTerminal,
    emulatorCalls,
    received,
    graceSeconds: h.options.timing.workflowGraceMs / 1000,
  });
  mergeFindings(run.findings, findings);
  return findings;
}

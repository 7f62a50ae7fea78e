// The chaos run as a library (`npm run chaos` and test/integration/chaos.test.ts both call it):
// start the stack once, run the chosen scenarios one after another on it, stop everything, even when
// a scenario or the run fails or is interrupted.
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { connectMongo } from '../../src/data/connection';
import { mulberry32 } from '../../src/emulator/faults';
import { emulatorControl } from './emulator-control';
import type { ChaosOptions } from './options';
import { startChaosStack, type ChaosStack } from './processes';
import { WebhookReceiver } from './receiver';
import { scenarioPassed, summary, type ChaosReport } from './report';
import type { Harness, ScenarioResult } from './scenario-run';
import { SCENARIOS } from './scenarios';

export async function runChaos(
  options: ChaosOptions,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<ChaosReport> {
  const startedAt = new Date();
  // Seconds since the start on every line: the report's notes say when each fault hit.
  const log = (line: string) =>
    write(
      line.startsWith('\n') ? line : `${((Date.now() - startedAt.getTime()) / 1000).toFixed(1).padStart(6)}s ${line}`,
    );
  const scenarios: ScenarioResult[] = [];
  const errors: string[] = [];
  const receiver = new WebhookReceiver();
  let stack: ChaosStack | null = null;
  // Ctrl-C: stop every process and server this run started before leaving.
  const interrupted = (signal: NodeJS.Signals) => {
    log(`\n${signal}: stopping every process and server of this run...`);
    void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    log(
      `Chaos run${options.quick ? ' (quick)' : ''}: ${options.only.join(', ')}; ${options.calls} calls per scenario, ` +
        `a batch of ${options.batchSize}; seed ${options.seed}`,
    );
    stack = await startChaosStack({
      workflowBundlePath: options.workflowBundlePath,
      dist: options.dist,
      keep: options.keep,
      verbose: options.verbose,
      log,
    });
    log(
      `Stack up in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)} s: API ${stack.apiUrl}, task queue ${stack.taskQueue}`,
    );
    const connection = await connectMongo(stack.mongoUri, 5);
    // Without a listener an error event during the database outage would end the process.
    connection.connection.on('error', () => undefined);
    await receiver.start();
    const emulator = emulatorControl(stack.emulatorUrl);
    // The control API is what the checks see the provider through: without it nothing can be proven.
    await emulator.calls().catch((err: unknown) => {
      throw new Error(
        `the emulator's control API does not answer (EMULATOR_CONTROL=1, GET /emulator/calls): ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    const harness: Harness = {
      stack,
      options,
      receiver,
      emulator,
      runId: randomBytes(4).toString('hex'),
      // Seeded (`--seed`): the kill moments repeat with it.
      random: mulberry32(options.seed),
      log,
    };
    for (const name of options.only) {
      log(`\n▶ ${name}`);
      const result = await SCENARIOS[name](harness);
      scenarios.push(result);
      log(`${scenarioPassed(result) ? '✓' : '✗'} ${summary(result)}`);
    }
  } catch (err) {
    errors.push(err instanceof Error ? err.message : String(err));
    log(`The run failed: ${errors.at(-1)}`);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await receiver.close();
    await mongoose.disconnect().catch(() => undefined);
    await stack?.stop();
  }
  const ran = new Set(scenarios.map((s) => s.name));
  for (const name of options.only) if (!ran.has(name)) errors.push(`${name} did not run`);
  return {
    startedAt: startedAt.toISOString(),
    seconds: (Date.now() - startedAt.getTime()) / 1000,
    options: withoutBundlePath(options),
    scenarios,
    errors,
    ok: errors.length === 0 && scenarios.every(scenarioPassed),
  };
}

function withoutBundlePath(options: ChaosOptions): ChaosReport['options'] {
  const { workflowBundlePath: _bundle, ...rest } = options;
  return rest;
}

// The faults. Five of them hit a fresh population of calls (a team of its own, calls over every
// outcome, provider and schedule, some waiting for a dial slot) at the moment they are spread over
// every state; the sixth kills the API under a batch request (api-killed-mid-batch.ts).
import { apiKilledMidBatch } from './api-killed-mid-batch';
import { statusSpread } from './checks';
import { sleep } from './http';
import { storedCalls, waitUntilSettled } from './observe';
import type { ScenarioName } from './options';
import { createCalls, planPopulation, seedTeam, subscribeWebhook } from './population';
import { waitForPoller } from './processes';
import { WebhookReceiver } from './receiver';
import { observeAndCheck, ScenarioRun, type Harness, type ScenarioResult } from './scenario-run';

/** What a population scenario does to the service. */
interface Fault {
  /** Before the calls are created: a fault that holds for the whole scenario. */
  before?(run: ScenarioRun): Promise<void>;
  /** Once the calls are spread over their states: the fault, and the recovery from it. */
  inject(run: ScenarioRun): Promise<void>;
  /** Once every call has settled (or the deadline came). */
  after?(run: ScenarioRun): Promise<void>;
  /** A receiver of its own, to take down without touching the others'. */
  receiver?: WebhookReceiver;
}

async function spreadNow(teamId: string): Promise<string> {
  return statusSpread(await storedCalls({ teamId }).catch(() => []));
}

/**
 * Waits (10 s at most) until half the team's live slots are taken, some by calls already talking,
 * while other calls still wait: so the fault meets every state.
 */
async function waitForSpread(run: ScenarioRun, teamId: string, cap: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const calls = await storedCalls({ teamId });
    const live = calls.filter((c) => c.status === 'ringing' || c.status === 'inProgress').length;
    const spread =
      live >= Math.ceil(cap / 2) &&
      calls.some((c) => c.status === 'inProgress') &&
      calls.some((c) => c.status === 'queued');
    if (spread || Date.now() > deadline) {
      run.note(`when the fault hits: ${statusSpread(calls)}`);
      return;
    }
    await sleep(100);
  }
}

async function populationScenario(h: Harness, name: ScenarioName, fault: Fault): Promise<ScenarioResult> {
  const run = new ScenarioRun(name, h);
  const receiver = fault.receiver ?? h.receiver;
  const count = h.options.calls;
  // A low cap: while some calls ring or talk, others wait in the team's pacer for their dial.
  const cap = Math.max(2, Math.round(count / 4));
  let afterDone = false;
  try {
    const team = await seedTeam({
      name: `chaos ${name}`,
      apiUrl: () => h.stack.apiUrl,
      encryptionKey: h.stack.encryptionKey,
      vonageSignatureSecret: h.stack.vonageSignatureSecret,
      telnyxPublicKey: h.stack.telnyxPublicKey,
      maxConcurrentCalls: cap,
    });
    run.team = team;
    const path = `/hooks/${name}`;
    await subscribeWebhook(team, `${receiver.url}${path}`, ['*']);
    await fault.before?.(run);
    const planned = planPopulation(name, team, count, { fromMs: 1_500, spreadMs: h.options.timing.scheduleSpreadMs });
    const creation = await createCalls(team, planned, { runId: h.runId, concurrency: 6, deadlineMs: 60_000 });
    run.accepted = creation.accepted.size;
    run.errors.push(...creation.failures);
    run.note(
      `${creation.accepted.size} calls accepted over 3 providers (${planned.filter((c) => c.body.callDelayedUntil).length} ` +
        `scheduled to fall due during the fault), at most ${cap} live at once`,
    );
    try {
      await waitForSpread(run, team.teamId, cap);
      await fault.inject(run);
    } catch (err) {
      run.fail(err);
    }
    const settled = await waitUntilSettled({
      scope: { teamId: team.teamId },
      events: () => receiver.events(path),
      deadlineMs: h.options.timing.settleDeadlineMs,
    });
    if (settled.settled) run.note(`every call ended and reported its end within ${settled.seconds.toFixed(1)} s`);
    afterDone = true;
    await fault.after?.(run);
    await observeAndCheck(run, {
      team,
      accepted: creation.accepted,
      receiverEvents: () => receiver.events(path),
      settled,
    });
  } catch (err) {
    run.fail(err);
  } finally {
    // A fault left on (emulator faults) would hit the next scenario's calls.
    if (!afterDone) await fault.after?.(run).catch((err: unknown) => run.fail(err));
    if (fault.receiver) await fault.receiver.close();
  }
  return run.finish();
}

function workerKilled(h: Harness): Fault {
  return {
    async inject(run) {
      for (const moment of ['once', 'again']) {
        if (moment === 'again') await sleep(h.options.timing.secondWorkerKillAfterMs * (0.75 + 0.5 * h.random()));
        const pid = h.stack.worker.pid;
        const spread = await spreadNow(run.team!.teamId);
        await h.stack.worker.kill('SIGKILL');
        run.injected += 1;
        const killedAt = Date.now();
        await h.stack.startWorker();
        run.note(
          `SIGKILL to the worker (pid ${pid}) ${moment}, calls then: ${spread}; ` +
            `a new worker (pid ${h.stack.worker.pid}) polled ${seconds(killedAt)} s later`,
        );
      }
    },
  };
}

function temporalRestarted(h: Harness): Fault {
  return {
    async inject(run) {
      const spread = await spreadNow(run.team!.teamId);
      const stoppingAt = Date.now();
      await h.stack.stopTemporal();
      run.injected += 1;
      const stoppedAt = Date.now();
      await h.stack.startTemporal();
      run.note(
        `Temporal dev server stopped (calls then: ${spread}; it took ${seconds(stoppingAt, stoppedAt)} s) ` +
          `and started again on its database file ${seconds(stoppedAt)} s later`,
      );
      const startedAt = Date.now();
      await waitForPoller(h.stack.temporal, h.stack.taskQueue, h.stack.worker, 120_000);
      run.note(`the worker polled again ${seconds(startedAt)} s after the restart`);
      await run.apiReadyAgain('the Temporal server came back', startedAt);
    },
  };
}

function databaseDown(h: Harness): Fault {
  return {
    async inject(run) {
      const spread = await spreadNow(run.team!.teamId);
      const stoppingAt = Date.now();
      await h.stack.stopDatabase();
      run.injected += 1;
      const stoppedAt = Date.now();
      await sleep(h.options.timing.databaseOutageMs);
      await h.stack.startDatabase();
      const startedAt = Date.now();
      run.note(
        `FerretDB, then PostgreSQL stopped (calls then: ${spread}; it took ${seconds(stoppingAt, stoppedAt)} s), ` +
          `started again on the same data and ports ${seconds(stoppedAt)} s later`,
      );
      await run.apiReadyAgain('the database came back', startedAt);
    },
  };
}

/**
 * A misbehaving provider while the calls are placed and run: faults on from before the calls are
 * created until every call is past its dial and every provider call has ended (or half the deadline
 * has passed); then the provider is healthy again and every call must end as the provider saw it.
 */
function providerFaults(h: Harness): Fault {
  let baseline = 0;
  let on = false;
  const total = (injected: Awaited<ReturnType<Harness['emulator']['injected']>>) =>
    injected.refused + injected.lostAnswers + injected.late + injected.duplicated;
  const turnOff = async (run: ScenarioRun) => {
    if (!on) return;
    const injected = await h.emulator.injected();
    await h.emulator.setFaults(null);
    on = false;
    run.injected = total(injected) - baseline;
    run.note(
      `emulator faults off; injected: ${injected.refused} requests refused (503), ${injected.lostAnswers} dial ` +
        `answers lost, ${injected.late} callbacks late, ${injected.duplicated} callbacks sent twice`,
    );
  };
  return {
    async before(run) {
      baseline = total(await h.emulator.injected());
      const faults = {
        seed: Math.floor(h.random() * 2 ** 31),
        refuseShare: 0.2,
        lostAnswer: { share: 0.2, kinds: ['answer-500', 'drop', 'timeout'] as ('answer-500' | 'drop' | 'timeout')[] },
        callbacks: { lateShare: 0.3, maxDelayMs: 1_500, duplicateShare: 0.3 },
        timeoutHoldMs: h.options.timing.timeoutHoldMs,
      };
      await h.emulator.setFaults(faults);
      on = true;
      run.note(`emulator faults on: ${JSON.stringify(faults)}`);
    },
    async inject(run) {
      const team = run.team!;
      const since = Date.now();
      const until = since + h.options.timing.settleDeadlineMs / 2;
      for (;;) {
        const calls = await storedCalls({ teamId: team.teamId });
        const dialling = calls.filter((c) => c.status === 'queued' || c.status === 'ringing').length;
        const live = (await h.emulator.calls()).filter((c) => team.accounts.has(c.account) && c.state !== 'ended');
        if ((dialling === 0 && live.length === 0) || Date.now() > until) {
          run.note(
            `${seconds(since)} s on: ${dialling} call(s) still before or in their dial, ` +
              `${live.length} provider call(s) live`,
          );
          break;
        }
        await sleep(500);
      }
      await turnOff(run);
    },
    after: turnOff,
  };
}

async function webhookReceiverDown(h: Harness): Promise<Fault> {
  // Its own receiver: its port is closed for a while, which must not touch the other scenarios' endpoint.
  const receiver = new WebhookReceiver();
  await receiver.start();
  const outageMs = h.options.timing.receiverOutageMs;
  let downSince = 0;
  return {
    receiver,
    async before(run) {
      await receiver.takeDown('answer-503');
      downSince = Date.now();
      run.note(`the webhook receiver answers 503 for ${outageMs / 2000} s, then refuses connections as long`);
    },
    async inject(run) {
      await sleep(downSince + outageMs / 2 - Date.now());
      await receiver.takeDown('port-closed');
      const refused = receiver.refused;
      await sleep(downSince + outageMs - Date.now());
      await receiver.bringBack();
      run.injected = receiver.refused;
      run.note(
        `receiver back after ${seconds(downSince)} s: ${refused} deliveries were answered 503, ` +
          `then its port was closed for ${(outageMs / 2000).toFixed(1)} s`,
      );
    },
  };
}

function seconds(from: number, to = Date.now()): string {
  return ((to - from) / 1000).toFixed(1);
}

export const SCENARIOS: Record<ScenarioName, (h: Harness) => Promise<ScenarioResult>> = {
  'worker-killed': (h) => populationScenario(h, 'worker-killed', workerKilled(h)),
  'temporal-restarted': (h) => populationScenario(h, 'temporal-restarted', temporalRestarted(h)),
  'database-down': (h) => populationScenario(h, 'database-down', databaseDown(h)),
  'api-killed-mid-batch': (h) => apiKilledMidBatch(h),
  'provider-faults': (h) => populationScenario(h, 'provider-faults', providerFaults(h)),
  'webhook-receiver-down': async (h) => populationScenario(h, 'webhook-receiver-down', await webhookReceiverDown(h)),
};

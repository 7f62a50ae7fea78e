// webhooks: a team webhook on every event, a receiver in the harness, and calls created at a steady
// rate by autocannon (batches of a few calls, each call's `phoneCall.queued` an event); for each event,
// the time from its status change (the event's `timestamp`: when the call entered the status) to its
// arrival at the receiver with a valid Standard Webhooks signature. No baseline: the budget is absolute.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { runHttpLoad } from '../load/autocannon';
import { summarize } from '../load/stats';
import { BUDGETS, FAR_AHEAD_MS, apiRequest, conversationNumber, expectStatus, figure, ms, sleep } from '../scenario';
import type { BenchScenario } from '../scenario';

interface Arrival {
  id: string;
  latencyMs: number;
  signed: boolean;
}

/** The team's endpoint; it checks signatures once it knows the secret (given when the webhook is made). */
async function startReceiver() {
  let verifier: Webhook | null = null;
  const arrivals = new Map<string, Arrival>();
  let duplicates = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      let signed = false;
      try {
        verifier?.verify(body, req.headers as Record<string, string>);
        signed = verifier !== null;
      } catch {
        // counted as unsigned below
      }
      let timestamp = Number.NaN;
      try {
        timestamp = Date.parse((JSON.parse(body) as { timestamp?: string }).timestamp ?? '');
      } catch {
        // not JSON: no latency
      }
      if (arrivals.has(id)) duplicates += 1;
      else arrivals.set(id, { id, latencyMs: at - timestamp, signed });
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    duplicates: () => duplicates,
    setSecret: (secret: string) => (verifier = new Webhook(secret)),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const webhooksScenario: BenchScenario = {
  name: 'webhooks',
  description: 'status change to signed event at a receiver, p50/p99, at a steady rate of events',
  defaultOn: true,
  params: {
    rate: { full: 100, quick: 100, description: 'events per second offered (calls created per second)' },
    seconds: { full: 20, quick: 2, description: 'how long the rate is held' },
    batchSize: { full: 10, quick: 10, description: 'calls per create request' },
    drainSeconds: { full: 180, quick: 30, description: 'the longest wait for the last events after the load' },
  },
  async run(ctx) {
    const { rate, seconds, batchSize, drainSeconds } = ctx.params as Record<string, number>;
    const team = await ctx.seedTeam('Bench webhooks');
    const receiver = await startReceiver();
    try {
      const created = expectStatus(
        await apiRequest<{ data: { secret: string } }>(ctx, team.key, 'POST', '/v1/webhooks', {
          teamId: team.teamId,
          url: receiver.url,
          subscribedEvents: ['*'],
          method: 'POST',
        }),
        200,
        'POST /v1/webhooks',
      );
      receiver.setSecret(created.data.secret);
      const bodyFile = path.join(ctx.workDir, 'webhooks-body.json');
      await writeFile(
        bodyFile,
        JSON.stringify({
          phoneCalls: Array.from({ length: batchSize }, (_, i) => ({
            teamId: team.teamId,
            callTemplateId: team.templateId,
            toPhoneNumber: conversationNumber(i),
            promptVariableValues: [{ key: 'firstName', value: `W[<id>]` }],
            callDelayedUntil: new Date(Date.now() + FAR_AHEAD_MS).toISOString(),
          })),
        }),
      );
      ctx.log(`webhooks: ${rate} events/s for ${seconds} s (${rate / batchSize} batches of ${batchSize} per second)`);
      const load = await runHttpLoad({
        url: `${ctx.apiUrl}/v1/phoneCalls/batch`,
        method: 'POST',
        headers: { 'service-api-key': team.key, 'content-type': 'application/json' },
        bodyFile,
        idReplacement: true,
        connections: 8,
        durationSeconds: seconds,
        overallRate: rate / batchSize,
      });
      if (load.ok === 0) throw new Error(`no batch was accepted: ${JSON.stringify(load.statusCodes)}`);
      // Every call created is one event: counted on the server (a request still in flight when the load
      // stopped may have created its calls after autocannon stopped counting).
      const createdCalls = async () =>
        (
          await ctx.temporal.workflow.count(
            `WorkflowType = 'phoneCallWorkflow' AND CallTeamId = '${team.teamId}' AND TaskQueue = '${ctx.taskQueue}'`,
          )
        ).count;
      const deadline = Date.now() + drainSeconds * 1000;
      let expected = Math.max(load.ok * batchSize, await createdCalls());
      for (let i = 0; receiver.arrivals.size < expected && Date.now() < deadline; i += 1) {
        await sleep(250);
        if (i % 8 === 0) expected = Math.max(expected, await createdCalls());
      }
      expected = Math.max(expected, await createdCalls());
      const arrivals = [...receiver.arrivals.values()];
      const unsigned = arrivals.filter((a) => !a.signed).length;
      if (unsigned) throw new Error(`${unsigned} events arrived without a valid signature`);
      // An event that never arrived counts as later than any that did (a percentile it reaches is n/a).
      const late = Math.max(0, expected - arrivals.length);
      const latency = summarize([...arrivals.map((a) => a.latencyMs), ...Array<number>(late).fill(Infinity)]);
      const offered = expected / load.seconds;
      const note = `${arrivals.length}/${expected} events arrived${late > 0 ? ` (${late} not within ${drainSeconds} s after the load: counted as later than every other)` : ''}, ${receiver.duplicates()} twice; ${ms(offered)} events/s offered`;
      const what = `${Math.round(offered)} events/s for ${seconds} s`;
      return [
        figure(`webhook latency p50, ${what}`, ms(latency.p50), 'ms'),
        figure(`webhook latency p99`, ms(latency.p99), 'ms', { budget: BUDGETS.webhookP99, note }),
        figure(`webhook latency max`, ms(latency.max), 'ms'),
      ];
    } finally {
      await receiver.close();
    }
  },
};

// webhooks: a team webhook on every event, a receiver in the harness, and calls created at a steady
// rate by autocannon (batches of a few calls, each call's `phoneCall.queued` an event); for each event,
// the time from its status change (the event's `timestamp`: when the call entered the status) to its
// arrival at the receiver with a valid Standard Webhooks signature. No baseline: the budget is absolute.
// First, the same at a modest rate of single creates (no budget): where the machine keeps up, what
// the pipeline's own latency is.
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
  /** The event's own time (its status change). */
  timestamp: number;
  latencyMs: number;
  signed: boolean;
}

/**
 * The team's endpoints, one path per phase: each checks signatures with the webhook's secret and keeps
 * its own arrivals, so that an event of one phase never counts in the next.
 */
async function startReceiver() {
  const paths = new Map<string, { verifier: Webhook; arrivals: Map<string, Arrival>; duplicates: number }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const endpoint = paths.get(req.url ?? '');
      let signed = false;
      try {
        endpoint?.verifier.verify(body, req.headers as Record<string, string>);
        signed = endpoint !== undefined;
      } catch {
        // counted as unsigned below
      }
      let timestamp = Number.NaN;
      try {
        timestamp = Date.parse((JSON.parse(body) as { timestamp?: string }).timestamp ?? '');
      } catch {
        // not JSON: no latency
      }
      if (endpoint) {
        if (endpoint.arrivals.has(id)) endpoint.duplicates += 1;
        else endpoint.arrivals.set(id, { id, timestamp, latencyMs: at - timestamp, signed });
      }
      res.statusCode = endpoint ? 200 : 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path: string) => `${base}${path}`,
    /** Starts an endpoint at `path`, checking signatures with `secret`. */
    listen(path: string, secret: string) {
      const endpoint = { verifier: new Webhook(secret), arrivals: new Map<string, Arrival>(), duplicates: 0 };
      paths.set(path, endpoint);
      return endpoint;
    },
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
    rate: { full: 100, quick: 20, description: 'events per second offered (calls created per second)' },
    seconds: { full: 20, quick: 1, description: 'how long each rate is held' },
    batchSize: { full: 10, quick: 10, description: 'calls per create request' },
    modestRate: { full: 10, quick: 5, description: 'events per second of the first phase (single creates; 0: none)' },
    drainSeconds: { full: 180, quick: 30, description: 'the longest wait for the last events after the load' },
  },
  async run(ctx) {
    const { rate, seconds, batchSize, modestRate, drainSeconds } = ctx.params as Record<string, number>;
    const team = await ctx.seedTeam('Bench webhooks');
    const receiver = await startReceiver();
    // Every call created is one event: counted on the server (a request still in flight when the load
    // stopped may have created its calls after autocannon stopped counting).
    const createdCalls = async () =>
      (
        await ctx.temporal.workflow.count(
          `WorkflowType = 'phoneCallWorkflow' AND CallTeamId = '${team.teamId}' AND TaskQueue = '${ctx.taskQueue}'`,
        )
      ).count;
    const call = (i: number) => ({
      teamId: team.teamId,
      callTemplateId: team.templateId,
      toPhoneNumber: conversationNumber(i),
      promptVariableValues: [{ key: 'firstName', value: `W[<id>]` }],
      callDelayedUntil: new Date(Date.now() + FAR_AHEAD_MS).toISOString(),
    });

    let webhook: { _id: string; secret: string } | null = null;
    /** One phase: the team's webhook pointed at an endpoint of its own, `perSecond` events as requests of `size` calls. */
    async function phase(name: string, perSecond: number, size: number) {
      const route = `/hooks/${name}`;
      const target = { url: receiver.url(route), subscribedEvents: ['*'], method: 'POST' };
      if (!webhook) {
        webhook = expectStatus(
          await apiRequest<{ data: { _id: string; secret: string } }>(ctx, team.key, 'POST', '/v1/webhooks', {
            teamId: team.teamId,
            ...target,
          }),
          200,
          'POST /v1/webhooks',
        ).data;
      } else {
        expectStatus(
          await apiRequest(ctx, team.key, 'PATCH', `/v1/webhooks/${webhook._id}`, target),
          200,
          'PATCH /v1/webhooks',
        );
      }
      const endpoint = receiver.listen(route, webhook.secret);
      const bodyFile = path.join(ctx.workDir, `webhooks-${name}.json`);
      const single = size === 1;
      await writeFile(
        bodyFile,
        JSON.stringify(single ? call(0) : { phoneCalls: Array.from({ length: size }, (_, i) => call(i)) }),
      );
      ctx.log(
        `webhooks: ${perSecond} events/s for ${seconds} s (${single ? 'single creates' : `${perSecond / size} batches of ${size} per second`})`,
      );
      const before = await createdCalls();
      const startedAt = Date.now();
      const load = await runHttpLoad({
        url: `${ctx.apiUrl}/v1/phoneCalls${single ? '' : '/batch'}`,
        method: 'POST',
        headers: { 'service-api-key': team.key, 'content-type': 'application/json' },
        bodyFile,
        idReplacement: true,
        connections: 8,
        durationSeconds: seconds,
        overallRate: perSecond / size,
      });
      if (load.ok === 0) throw new Error(`no create was accepted: ${JSON.stringify(load.statusCodes)}`);
      // An event of the phase before that arrived only after the webhook moved is not this phase's.
      const ofThisPhase = () => [...endpoint.arrivals.values()].filter((a) => !(a.timestamp < startedAt));
      const deadline = Date.now() + drainSeconds * 1000;
      let expected = Math.max(load.ok * size, (await createdCalls()) - before);
      for (let i = 0; ofThisPhase().length < expected && Date.now() < deadline; i += 1) {
        await sleep(250);
        if (i % 8 === 0) expected = Math.max(expected, (await createdCalls()) - before);
      }
      expected = Math.max(expected, (await createdCalls()) - before);
      const arrivals = ofThisPhase();
      const unsigned = arrivals.filter((a) => !a.signed).length;
      if (unsigned) throw new Error(`${unsigned} events arrived without a valid signature`);
      // An event that never arrived counts as later than any that did (a percentile it reaches is n/a).
      const late = Math.max(0, expected - arrivals.length);
      const latency = summarize([...arrivals.map((a) => a.latencyMs), ...Array<number>(late).fill(Infinity)]);
      const offered = expected / load.seconds;
      const note = `${arrivals.length}/${expected} events arrived${late > 0 ? ` (${late} not within ${drainSeconds} s after the load: counted as later than every other)` : ''}, ${endpoint.duplicates} twice; ${ms(offered)} events/s offered`;
      return { latency, note, offered, what: `${Math.round(offered)} events/s for ${seconds} s` };
    }

    try {
      const figures = [];
      if (modestRate > 0) {
        const modest = await phase('modest', modestRate, 1);
        figures.push(
          figure(`webhook latency p50, ${modest.what}, single creates`, ms(modest.latency.p50), 'ms'),
          figure(`webhook latency p99, ${modest.what} (no budget)`, ms(modest.latency.p99), 'ms', {
            note: modest.note,
          }),
        );
        await ctx.settle("webhooks: before the budget's rate");
      }
      const full = await phase('full', rate, batchSize);
      // The budget is a rate's: a load the API slowed below it (autocannon waits for each answer) is
      // judged not met, whatever its latency, rather than passed at a rate nobody asked for.
      const atRate = full.offered >= 0.95 * rate;
      figures.push(
        figure(`webhook latency p50, ${full.what}`, ms(full.latency.p50), 'ms'),
        figure(`webhook latency p99`, atRate ? ms(full.latency.p99) : Number.NaN, 'ms', {
          budget: BUDGETS.webhookP99,
          note: atRate
            ? full.note
            : `the load reached only ${ms(full.offered)} of the ${rate} events/s asked (p99 ${ms(full.latency.p99)} ms): not judged met; ${full.note}`,
        }),
        figure(`webhook latency max`, ms(full.latency.max), 'ms'),
      );
      return figures;
    } finally {
      await receiver.close();
    }
  },
};

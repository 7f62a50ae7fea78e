// Prometheus metrics on the real stack: the API's requests by route template, the worker's dials,
// status changes, webhook attempts and activity failures, the Temporal SDK's own worker metrics,
// the bearer token that guards both endpoints, and the worker's health and readiness beside them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { expectWorkerReady } from '../helpers/worker-readiness';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

const TOKEN = 'metrics-token-for-the-test-0123456789';

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  stack = await startTestStack({ env: { METRICS_BEARER_TOKEN: TOKEN } });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const TERMINAL = ['completed', 'busy', 'noAnswer', 'failed', 'cancelled'];

async function scrape(
  url: string,
  token: string | null = TOKEN,
): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The sum of a metric's samples whose labels include `labels` (0 when there is none). */
function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const given = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => given[k] === v)) sum += Number(match[3]);
  }
  return sum;
}

describe('/metrics', () => {
  it('counts requests by route template, and the worker counts dials, status changes, webhook attempts and failures', async () => {
    const client = apiClient(stack.baseUrl, stack.team.key);
    const place = async (to: string) => {
      const res = await client.post(
        '/v1/phoneCalls',
        seededCallBody(stack.team, to, {
          phoneCallWebhooks: [
            { url: `${receiver.url}/metrics-hook`, subscribedEvent: '*', secret: 'metrics hook secret' },
          ],
        }),
      );
      expect(res.status).toBe(201);
      const id = res.body.data._id as string;
      return eventually(async () => {
        const read = await client.get(`/v1/phoneCalls/${id}`);
        return TERMINAL.includes(read.body.data.status) ? read.body.data : undefined;
      }, 60_000);
    };
    // A conversation, and a number the provider refuses (the dial activity fails for good).
    expect((await place('+14155550007')).status).toBe('completed');
    expect((await place('+14155551404')).statusExtraInfo.statusCode).toBe('invalid-number');
    await eventually(async () => (receiver.at('/metrics-hook').length >= 4 ? true : undefined));

    const api = await scrape(`${stack.baseUrl}/metrics`);
    expect(api.status).toBe(200);
    expect(api.type).toMatch(/^text\/plain/);
    expect(sampleSum(api.text, 'http_requests_total', { method: 'POST', route: '/v1/phoneCalls', status: '201' })).toBe(
      2,
    );
    expect(
      sampleSum(api.text, 'http_request_duration_seconds_count', { method: 'GET', route: '/v1/phoneCalls/:id' }),
    ).toBeGreaterThanOrEqual(2);
    // Ids never become label values: every GET of a call counts under its template.
    expect(api.text).not.toMatch(/route="[^"]*[0-9a-f]{24}/);
    expect(sampleSum(api.text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    // The API reports no worker figures, even with a worker in the same process.
    expect(api.text).not.toContain('phone_call_dials_total');

    const worker = await eventually(async () => {
      const scraped = await scrape(stack.workerMetricsUrl());
      return sampleSum(scraped.text, 'webhook_delivery_attempts_total', { outcome: 'delivered' }) >= 4
        ? scraped
        : undefined;
    });
    expect(worker.status).toBe(200);
    expect(sampleSum(worker.text, 'phone_call_dials_total', { provider: 'twilio', outcome: 'placed' })).toBe(1);
    expect(sampleSum(worker.text, 'phone_call_dials_total', { provider: 'twilio', outcome: 'rejected' })).toBe(1);
    expect(
      sampleSum(worker.text, 'phone_call_status_changes_total', {
        status: 'completed',
        status_code: 'completed',
        provider: 'twilio',
      }),
    ).toBe(1);
    expect(
      sampleSum(worker.text, 'phone_call_status_changes_total', { status: 'failed', status_code: 'invalid-number' }),
    ).toBe(1);
    expect(
      sampleSum(worker.text, 'activity_failures_total', { activity: 'dialCall', error_type: 'PROVIDER_REJECTED' }),
    ).toBe(1);
    expect(sampleSum(worker.text, 'webhook_delivery_attempt_duration_seconds_count', { outcome: 'delivered' })).toBe(
      sampleSum(worker.text, 'webhook_delivery_attempts_total', { outcome: 'delivered' }),
    );
    // The Temporal SDK's own worker metrics, for this worker's task queue.
    expect(worker.text).toMatch(
      new RegExp(`^temporal_\\w+\\{[^}]*task_queue="${stack.config.TEMPORAL_TASK_QUEUE}"[^}]*\\} \\S+$`, 'm'),
    );
  });

  it('answers 401 without the bearer token or with another, on the API and on the worker', async () => {
    for (const url of [`${stack.baseUrl}/metrics`, stack.workerMetricsUrl()]) {
      for (const token of [null, 'not-the-metrics-token-0123456789']) {
        const res = await scrape(url, token);
        expect(res.status).toBe(401);
        expect(res.text).not.toContain('http_requests_total');
      }
    }
    const api = await fetch(`${stack.baseUrl}/metrics`);
    expect(api.headers.get('www-authenticate')).toBe('Bearer');
    expect(await api.json()).toMatchObject({ error: { statusCode: 401 } });
  });

  it("answers the worker's /healthz and /readyz without the token: ready while both its workers poll", async () => {
    const base = stack.workerMetricsUrl().replace(/\/metrics$/, '');
    await expectWorkerReady(base, stack.config.TEMPORAL_TASK_QUEUE);
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
  });
});

// What operators and integrators see, in a real browser: headless Chromium (Debian's `chromium`
// package, driven by playwright-core) finds a completed call in the Temporal Web UI by its search
// attributes and reads its named steps, summary and webhook delivery child workflow; and it reads the
// API reference at /docs. Screenshots are saved under test-results/browser/.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { deliveryWorkflowId } from '../../src/contracts/ids';
import { apiClient, callReaching, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

function chromiumPath(): string {
  const found = CHROMIUM_CANDIDATES.find((candidate): candidate is string => !!candidate && existsSync(candidate));
  if (!found) {
    throw new Error(
      'Chromium is needed for the Temporal UI test and was not found. Install it with ' +
        '`apt-get install chromium` (Debian), or set CHROMIUM_PATH to a Chromium or Chrome binary.',
    );
  }
  return found;
}

function temporalUi(): string {
  const url = inject('temporalUiUrl');
  if (!url) throw new Error('TEMPORAL_ADDRESS is set without TEMPORAL_UI_URL: the test needs that server Web UI.');
  return url;
}

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
  stack = await startTestStack();
  receiver = await startReceiver();
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await stack?.stop();
});

it('finds a completed call by its search attributes and reads its named steps and webhook deliveries', async () => {
  const client = apiClient(stack.baseUrl, stack.team.key);
  const to = '+14155550007';
  const created = await client.post(
    '/v1/phoneCalls',
    seededCallBody(stack.team, to, {
      phoneCallWebhooks: [{ url: `${receiver.url}/ui`, subscribedEvent: '*', secret: 'ui webhook secret' }],
    }),
  );
  expect(created.status).toBe(201);
  const id = created.body.data._id as string;
  await callReaching(client, id, 'completed', 60_000);
  await eventually(async () => receiver.at('/ui').some((r) => r.body.includes('phoneCall.completed')) || undefined);

  const ui = temporalUi();
  const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
  try {
    const query = `CallTeamId="${stack.team.teamId}" AND CallStatus="completed"`;
    await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
    await page
      .getByRole('link', { name: `phoneCall-${id}` })
      .first()
      .click({ timeout: 30_000 });
    await page.waitForURL(new RegExp(`/workflows/phoneCall-${id}/`), { timeout: 30_000 });

    // The timeline names each step: activities by their summary, timers by what they wait for.
    for (const step of [
      `dial ${to} via twilio, record ringing`,
      'record inProgress (answered)',
      // The capture writes the final status with the results: one step, named for both.
      'capture transcript and results, record completed (completed)',
    ]) {
      await expect(page.getByText(step).first().waitFor({ timeout: 30_000 })).resolves.toBeUndefined();
    }
    await page
      .getByText(/ring timeout at|max duration at/)
      .first()
      .waitFor({ timeout: 30_000 });
    await mkdir(path.resolve('test-results/browser'), { recursive: true });
    await page.screenshot({ path: path.resolve(`test-results/browser/phoneCall-${id}.png`), fullPage: true });

    // The call's summary and details as the dispatcher wrote them (the UI renders them in frames), and
    // every named step in one list.
    await page.getByRole('tab', { name: /User Metadata/ }).click();
    await page.getByText(`Webhooks of the call to ${to} for`).first().waitFor({ timeout: 30_000 });
    const framed = await eventually(async () => {
      const texts = await Promise.all(
        page.frames().map((frame) =>
          frame
            .locator('body')
            .innerText({ timeout: 1_000 })
            .catch(() => ''),
        ),
      );
      const all = texts.join('\n');
      return all.includes(`Call to ${to} via twilio`) && all.includes('placed at once') ? all : undefined;
    }, 30_000);
    expect(framed).toContain(`Phone call ${id}`);

    // The webhook deliveries run as a child workflow of the call.
    await page.getByRole('tab', { name: /Relationships/ }).click();
    await page.getByText(deliveryWorkflowId(id, 'call-0')).first().waitFor({ timeout: 30_000 });
  } finally {
    await page.close();
  }
});

it('serves the API reference at /docs, from this process, listing every operation of the document', async () => {
  const doc = (await (await fetch(`${stack.baseUrl}/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
    webhooks: Record<string, Record<string, unknown>>;
  };
  // Every operation, and the webhook deliveries the document describes (shown by their name).
  const documented = [...Object.entries(doc.paths), ...Object.entries(doc.webhooks)]
    .flatMap(([name, item]) =>
      Object.keys(item)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${name}`),
    )
    .sort();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const elsewhere: string[] = [];
  // Nothing may come from another origin (no CDN): every request the page makes stays on the API.
  page.on('request', (request) => {
    if (!request.url().startsWith(stack.baseUrl) && !request.url().startsWith('data:')) elsewhere.push(request.url());
  });
  try {
    await page.goto(`${stack.baseUrl}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    const rendered = await eventually(async () => {
      const operations = await page
        .locator('.opblock-summary')
        .evaluateAll((nodes) =>
          nodes.map(
            (node) =>
              `${node.querySelector('.opblock-summary-method')?.textContent?.trim() ?? ''} ${
                node.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''
              }`,
          ),
        );
      return operations.length >= documented.length ? operations.sort() : undefined;
    }, 30_000);
    expect(rendered).toEqual(documented);
    // The key's header is there to read (and to set, for trying an operation).
    await page.getByRole('button', { name: /Authorize/ }).click();
    await page.getByText('service-api-key').first().waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.resolve('test-results/browser/docs.png') });
    expect(elsewhere).toEqual([]);
    // Only the page's own files are served from the package's folder.
    expect((await fetch(`${stack.baseUrl}/docs/swagger-ui.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    for (const other of ['package.json', 'index.html', '..%2Fpackage.json', 'swagger-ui-bundle.js.map']) {
      expect((await fetch(`${stack.baseUrl}/docs/${other}`)).status).toBe(404);
    }
  } finally {
    await page.close();
  }
});

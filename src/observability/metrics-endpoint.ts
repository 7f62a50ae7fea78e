// Serving /metrics: the bearer check both processes share, and the worker's own small server, which
// adds the Temporal SDK's metrics (served by the SDK on a loopback port) to ours and answers the
// worker's /healthz and /readyz (as the API's, without a key: they tell nothing about calls).
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger';
import type { Readiness } from './readiness';

/** Whether an Authorization header may read /metrics (anyone, when no token is configured). */
export function metricsAuthorized(authorization: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const given = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Our registry's exposition, then the SDK's (without it when the SDK's exporter cannot be read). */
export async function workerExposition(registry: Registry, sdkMetricsUrl: string | null): Promise<string> {
  const ours = await registry.metrics();
  if (!sdkMetricsUrl) return ours;
  try {
    const res = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) });
    if (!res.ok) return `${ours}\n# the Temporal SDK's metrics answered ${res.status}\n`;
    return `${ours}\n${await res.text()}`;
  } catch (err) {
    return `${ours}\n# the Temporal SDK's metrics could not be read: ${String(err).replace(/\s+/g, ' ')}\n`;
  }
}

export async function startWorkerMetricsServer(options: {
  host: string;
  port: number;
  token: string | undefined;
  registry: Registry;
  /** The SDK's own exporter, once the worker's runtime serves it (null: none yet). */
  sdkMetricsUrl: () => string | null;
  logger: Logger;
  /** The worker's /readyz (src/worker/readiness.ts). */
  readiness: () => Promise<Readiness>;
}): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (req.method === 'GET' && path === '/healthz') return json(200, { status: 'ok' });
    if (req.method === 'GET' && path === '/readyz') {
      options.readiness().then(
        (readiness) => json(readiness.status === 'ready' ? 200 : 503, readiness),
        (err: unknown) => {
          options.logger.error({ err }, 'readiness could not be checked');
          json(500, { status: 'unavailable', checks: {} });
        },
      );
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (!metricsAuthorized(req.headers.authorization, options.token)) {
      res.writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    workerExposition(options.registry, options.sdkMetricsUrl()).then(
      (text) => res.writeHead(200, { 'Content-Type': options.registry.contentType }).end(text),
      (err: unknown) => {
        options.logger.error({ err }, 'metrics exposition failed');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host === '0.0.0.0' ? '127.0.0.1' : options.host}:${port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

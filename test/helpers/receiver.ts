// A real HTTP receiver for webhook deliveries, with per-path behaviour.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  /** Query string as sent, without the leading '?'. */
  query: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Behaviour = (request: ReceivedRequest, countForPath: number) => number;

export async function startReceiver(port = 0) {
  const received: ReceivedRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: q === -1 ? url : url.slice(0, q),
        query: q === -1 ? '' : url.slice(q + 1),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const count = received.filter((r) => r.path === request.path).length;
      res.statusCode = (behaviours.get(request.path) ?? (() => 200))(request, count);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    received,
    on(path: string, behaviour: Behaviour) {
      behaviours.set(path, behaviour);
    },
    at(path: string) {
      return received.filter((r) => r.path === path);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  attemptDelivery,
  buildGetQuery,
  type DeliveryAttemptRequest,
  WEBHOOK_USER_AGENT,
} from '../../../src/webhooks/attempt';
import type { HostLookup } from '../../../src/webhooks/ssrf-guard';
import { generateWebhookSecret } from '../../../src/webhooks/signing';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Reply = (res: ServerResponse) => void;

// A real receiver on a free loopback port; `reply` decides each answer.
async function startReceiver(
  reply: Reply = (res) => res.writeHead(204).end(),
  host = '127.0.0.1',
): Promise<{ url: string; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      reply(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${port}/hooks/in`, port, received };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const secret = generateWebhookSecret();
const event = {
  type: 'phoneCall.completed',
  timestamp: '2026-11-22T10:00:00.000Z',
  data: { _id: '6650f1c2a1b2c3d4e5f60718', status: 'completed', toPhoneNumber: '+14155550100', callDuration: 42.5 },
};

function input(url: string, overrides: Partial<DeliveryAttemptRequest> = {}): DeliveryAttemptRequest {
  const webhookId = 'evt_6650f1c2a1b2c3d4e5f60718_completed';
  return { url, method: 'POST', secret, webhookId, event, allowPrivate: true, ...overrides };
}

function signatureHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  };
}

describe('attemptDelivery with POST', () => {
  it('sends the signed JSON event and reports a 2xx as ok', async () => {
    const receiver = await startReceiver();
    const result = await attemptDelivery(input(receiver.url));

    expect(result).toEqual({
      ok: true,
      statusCode: 204,
      durationMs: expect.any(Number),
      error: null,
      gone: false,
      attemptedAt: expect.any(String),
    });
    expect(new Date(result.attemptedAt).toISOString()).toBe(result.attemptedAt);
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/hooks/in');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe(WEBHOOK_USER_AGENT);
    expect(request.headers['webhook-id']).toBe('evt_6650f1c2a1b2c3d4e5f60718_completed');
    expect(Number(request.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    const payload = new Webhook(secret).verify(request.body, signatureHeaders(request.headers));
    expect(payload).toEqual({ type: event.type, timestamp: event.timestamp, data: event.data });
  });

  it('signs with the UTF-8 bytes of a per-call secret that has no whsec_ prefix', async () => {
    const receiver = await startReceiver();
    const callSecret = 'my-call-secret-ü';
    expect((await attemptDelivery(input(receiver.url, { secret: callSecret }))).ok).toBe(true);
    const [request] = receiver.received;
    const verifier = new Webhook(new TextEncoder().encode(callSecret), { format: 'raw' });
    expect(verifier.verify(request.body, signatureHeaders(request.headers))).toMatchObject({ type: event.type });
  });

  it('keeps the webhook-id across attempts while the timestamp and signature are fresh', async () => {
    const receiver = await startReceiver();
    const start = Date.now();
    await attemptDelivery(input(receiver.url, { now: () => new Date(start) }));
    await attemptDelivery(input(receiver.url, { now: () => new Date(start + 30_000) }));

    const [first, second] = receiver.received;
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(Number(second.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp'])).toBe(30);
    expect(second.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    for (const request of [first, second]) {
      expect(() => new Webhook(secret).verify(request.body, signatureHeaders(request.headers))).not.toThrow();
    }
  });
});

describe('attemptDelivery with GET', () => {
  it('sends type, timestamp, phoneCallId and status as the signed query string', async () => {
    const receiver = await startReceiver((res) => res.writeHead(200).end('thanks'));
    const result = await attemptDelivery(input(receiver.url, { method: 'GET' }));

    expect(result.ok).toBe(true);
    const [request] = receiver.received;
    expect(request.method).toBe('GET');
    expect(request.body).toBe('');
    expect(request.headers['content-type']).toBeUndefined();
    const query = request.url.slice(request.url.indexOf('?') + 1);
    expect([...new URLSearchParams(query)]).toEqual([
      ['type', 'phoneCall.completed'],
      ['timestamp', '2026-11-22T10:00:00.000Z'],
      ['phoneCallId', '6650f1c2a1b2c3d4e5f60718'],
      ['status', 'completed'],
    ]);
    expect(() =>
      new Webhook(secret).verify(query, signatureHeaders(request.headers), { jsonParse: false }),
    ).not.toThrow();
  });

  it('keeps and signs a query the registered URL already has, and uses getQuery when given', async () => {
    const receiver = await startReceiver();
    const getQuery = {
      type: 'transcript.created',
      timestamp: event.timestamp,
      phoneCallId: 'abc',
      status: 'inProgress',
    };
    await attemptDelivery(input(`${receiver.url}?token=s3cr%C3%A9t#fragment`, { method: 'GET', getQuery }));

    const [request] = receiver.received;
    expect(request.url.startsWith('/hooks/in?token=s3cr%C3%A9t&type=transcript.created&')).toBe(true);
    const query = request.url.slice(request.url.indexOf('?') + 1);
    expect(Object.fromEntries(new URLSearchParams(query))).toEqual({ token: 's3crét', ...getQuery });
    expect(() =>
      new Webhook(secret).verify(query, signatureHeaders(request.headers), { jsonParse: false }),
    ).not.toThrow();
  });

  it("sends the registered query's bytes as registered, and the event's parameters in place of its own of those names", async () => {
    // Written again by URLSearchParams, `a%20b` went as `a+b` and `~` as `%7E`; a `type` of its own
    // went out beside the event's.
    const receiver = await startReceiver();
    await attemptDelivery(input(`${receiver.url}?token=a%20b~c&type=mine&flag`, { method: 'GET' }));
    const [request] = receiver.received;
    const query = request.url.slice(request.url.indexOf('?') + 1);
    expect(query).toBe(
      'token=a%20b~c&flag&type=phoneCall.completed&timestamp=2026-11-22T10%3A00%3A00.000Z&phoneCallId=6650f1c2a1b2c3d4e5f60718&status=completed',
    );
    expect(() =>
      new Webhook(secret).verify(query, signatureHeaders(request.headers), { jsonParse: false }),
    ).not.toThrow();
  });
});

describe('attemptDelivery reports failures without throwing', () => {
  it('a 500 is not ok', async () => {
    const receiver = await startReceiver((res) => res.writeHead(500).end('boom'));
    const result = await attemptDelivery(input(receiver.url));
    expect(result).toMatchObject({ ok: false, statusCode: 500, gone: false });
    expect(result.error).toBe('receiver answered 500 Internal Server Error');
  });

  it('a 410 is gone', async () => {
    const receiver = await startReceiver((res) => res.writeHead(410).end());
    const result = await attemptDelivery(input(receiver.url));
    expect(result).toMatchObject({ ok: false, statusCode: 410, gone: true, error: 'receiver answered 410 Gone' });
  });

  it('a redirect is not followed', async () => {
    const receiver = await startReceiver((res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end());
    const result = await attemptDelivery(input(receiver.url));
    expect(result).toMatchObject({ ok: false, statusCode: 302, gone: false });
    expect(receiver.received).toHaveLength(1);
  });

  it('a receiver that hangs past the timeout', async () => {
    const receiver = await startReceiver(() => undefined);
    const result = await attemptDelivery(input(receiver.url, { timeoutMs: 300 }));
    expect(result).toMatchObject({ ok: false, statusCode: null, gone: false, error: 'no response within 300 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it('a receiver that is down', async () => {
    const receiver = await startReceiver();
    const server = servers.pop() as Server;
    await new Promise((resolve) => server.close(resolve));
    const result = await attemptDelivery(input(receiver.url));
    expect(result).toMatchObject({ ok: false, statusCode: null, gone: false });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('a 2xx whose body stalls past the timeout still counts: the status arrived in time', async () => {
    const receiver = await startReceiver((res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const result = await attemptDelivery(input(receiver.url, { timeoutMs: 300 }));
    expect(result).toMatchObject({ ok: true, statusCode: 200, error: null });
  });

  it('a large answer is not read to the end', async () => {
    const receiver = await startReceiver((res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(8 * 1024 * 1024));
    });
    const result = await attemptDelivery(input(receiver.url));
    expect(result).toMatchObject({ ok: true, statusCode: 200 });
  });

  it('a secret that cannot sign is recorded as an error and nothing is sent', async () => {
    const receiver = await startReceiver();
    const result = await attemptDelivery(input(receiver.url, { secret: 'whsec_not base64' }));
    expect(result).toMatchObject({ ok: false, statusCode: null, gone: false });
    expect(result.error).toMatch(/invalid webhook secret/);
    expect(receiver.received).toHaveLength(0);
  });
});

describe('attemptDelivery checks the URL again at delivery', () => {
  it('refuses a loopback receiver unless private URLs are allowed, without sending anything', async () => {
    const receiver = await startReceiver();
    const result = await attemptDelivery(input(receiver.url, { allowPrivate: false }));
    expect(result).toMatchObject({ ok: false, statusCode: null, gone: false });
    expect(result.error).toBe('refused: url host 127.0.0.1 is a loopback address');
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses a hostname that now resolves to a private address', async () => {
    const lookup: HostLookup = async () => [{ address: '10.0.0.7', family: 4 }];
    const result = await attemptDelivery(input('https://hooks.example.com/in', { allowPrivate: false, lookup }));
    expect(result.ok).toBe(false);
    expect(result.error).toBe('refused: url host hooks.example.com resolves to a non-public address');
  });

  it('records a name that does not resolve as a failure, not a refusal', async () => {
    const lookup: HostLookup = async () => {
      throw Object.assign(new Error('queryA ETIMEOUT hooks.example.com'), { code: 'ETIMEOUT' });
    };
    const result = await attemptDelivery(input('https://hooks.example.com/in', { allowPrivate: false, lookup }));
    expect(result).toMatchObject({ ok: false, statusCode: null, gone: false });
    expect(result.error).toBe('url host hooks.example.com could not be resolved (ETIMEOUT)');
  });

  it('connects to the address that was vetted, keeping the hostname in the Host header', async () => {
    const receiver = await startReceiver();
    let lookups = 0;
    const lookup: HostLookup = async () => {
      lookups += 1;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const result = await attemptDelivery(input(`http://hooks.example.test:${receiver.port}/in`, { lookup }));
    expect(result.ok).toBe(true);
    expect(lookups).toBe(1);
    expect(receiver.received[0].headers.host).toBe(`hooks.example.test:${receiver.port}`);
  });

  it('reaches an IPv6 receiver, by literal and by a hostname pinned to its address', async () => {
    const receiver = await startReceiver(undefined, '::1');
    expect((await attemptDelivery(input(`http://[::1]:${receiver.port}/in`))).ok).toBe(true);
    const lookup: HostLookup = async () => [{ address: '::1', family: 6 }];
    expect((await attemptDelivery(input(`http://v6.example.test:${receiver.port}/in`, { lookup }))).ok).toBe(true);
    expect(receiver.received.map((r) => r.headers.host)).toEqual([
      `[::1]:${receiver.port}`,
      `v6.example.test:${receiver.port}`,
    ]);
  });
});

describe('buildGetQuery', () => {
  it('takes phoneCallId from a transcript and omits a status it does not have', () => {
    const transcript = { _id: 'tr1', phoneCallId: 'call1', text: 'hello', speaker: 'agent' };
    expect(buildGetQuery({ type: 'transcript.created', timestamp: 't', data: transcript })).toEqual({
      type: 'transcript.created',
      timestamp: 't',
      phoneCallId: 'call1',
    });
  });
});

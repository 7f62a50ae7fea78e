// A callback receiver for driving the emulator over HTTP: it keeps every request it is sent, and
// checks each provider's signature independently of the emulator's own signing code.
import { createHash, createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator';

export interface Received {
  /** The URL as the sender addressed it (what Twilio signs). */
  url: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  /** Requests whose path starts with `path`, in arrival order. */
  received(path: string): Received[];
  /** Resolves with the requests to `path` once one of them satisfies `done`. */
  waitFor(path: string, done: (r: Received) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const all: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      all.push({ url: `${url}${path}`, path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const received = (path: string): Received[] => all.filter((r) => r.path.startsWith(path));
  return {
    url,
    received,
    async waitFor(path, done, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!received(path).some(done)) {
        if (Date.now() > deadline) throw new Error(`nothing awaited arrived at ${path}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return received(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function header(r: Received, name: string): string {
  const value = r.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function sameText(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** X-Twilio-Signature: HMAC-SHA1 over the URL followed by the sorted form names and values. */
export function twilioSigned(r: Received, authToken: string): boolean {
  const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  const params = [...new URLSearchParams(r.body)].sort(([a, x], [b, y]) => byName(a, b) || byName(x, y));
  const data = params.reduce((acc, [name, value]) => acc + name + value, r.url);
  const expected = createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
  return sameText(header(r, 'x-twilio-signature'), expected);
}

/** A Vonage signed webhook: an HS256 JWT whose payload_hash is the body's SHA-256. */
export function vonageSigned(r: Received, secret: string): boolean {
  const token = /^Bearer (.+)$/.exec(header(r, 'authorization'))?.[1] ?? '';
  const [head, claims, signature] = token.split('.');
  if (!head || !claims || !signature) return false;
  const expected = createHmac('sha256', secret).update(`${head}.${claims}`).digest('base64url');
  const payloadHash = (JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as { payload_hash?: string })
    .payload_hash;
  return sameText(signature, expected) && payloadHash === createHash('sha256').update(r.body).digest('hex');
}

/** A Telnyx webhook: Ed25519 over `${timestamp}|${body}` with the account's public key. */
export function telnyxSigned(r: Received, publicKeyBase64: string): boolean {
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyBase64, 'base64').toString('base64url') },
    format: 'jwk',
  });
  const signed = Buffer.from(`${header(r, 'telnyx-timestamp')}|${r.body}`, 'utf8');
  return verify(null, signed, key, Buffer.from(header(r, 'telnyx-signature-ed25519'), 'base64'));
}

export const OPENING_LINE = 'Hello Grace, this is Ada from Acme Dental. Could we book your check-up next week?';
export const VOICEMAIL =
  'Hi Grace, this is Ada from Acme Dental. Please call us back to book your check-up. Thank you!';

let numbers = 0;

/** A number no other test dials, ending in `lastFour` (the emulator's outcome rule). */
export function numberEnding(lastFour: string): string {
  numbers += 1;
  return `+1${String(4_150_000 + numbers)}${lastFour}`;
}

/** An emulator on a fast clock and a receiver for its callbacks; `stop` ends both. */
export async function startEmulatorAndReceiver(options: Partial<EmulatorOptions> = {}) {
  const emulator: Emulator = createEmulator({
    port: 0,
    speedFactor: 0.01,
    vonageSignatureSecret: 'unused',
    ...options,
  });
  const { url } = await emulator.start();
  const receiver = await startReceiver();
  return {
    emulator,
    url,
    receiver,
    async stop() {
      await emulator.stop();
      await receiver.close();
    },
  };
}

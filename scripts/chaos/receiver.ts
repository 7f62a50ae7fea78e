// The teams' webhook endpoint: a plain HTTP server in the harness that records what reached it
// (webhook-id, event type, call id) per path. It can be taken down: answering 503, or with its
// port closed (connections refused), and brought back on the same port.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedEvent {
  webhookId: string;
  type: string;
  /** `data._id` of a call event, `data.phoneCallId` of a transcript event. */
  callId: string | null;
  at: number;
}

export type Outage = 'answer-503' | 'port-closed';

export class WebhookReceiver {
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly byPath = new Map<string, ReceivedEvent[]>();
  private refusing = false;
  private port = 0;
  /** Deliveries answered 503 while refusing. */
  refused = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (this.refusing) {
          this.refused += 1;
          res.statusCode = 503;
          res.end();
          return;
        }
        this.record(req, Buffer.concat(chunks).toString('utf8'));
        res.statusCode = 200;
        res.end();
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private record(req: http.IncomingMessage, body: string): void {
    const path = (req.url ?? '/').split('?')[0]!;
    let type = '';
    let callId: string | null = null;
    try {
      const parsed = JSON.parse(body) as { type?: string; data?: { _id?: string; phoneCallId?: string } };
      type = parsed.type ?? '';
      callId = parsed.data?._id ?? parsed.data?.phoneCallId ?? null;
    } catch {
      // not a JSON event: kept with an empty type, so it shows in the details
    }
    const events = this.byPath.get(path) ?? [];
    events.push({ webhookId: String(req.headers['webhook-id'] ?? ''), type, callId, at: Date.now() });
    this.byPath.set(path, events);
  }

  events(path: string): ReceivedEvent[] {
    return this.byPath.get(path) ?? [];
  }

  /** Down: every delivery answered 503, or no connection at all. */
  async takeDown(outage: Outage): Promise<void> {
    if (outage === 'answer-503') {
      this.refusing = true;
      return;
    }
    await this.close();
  }

  /** Up again: on the same port, answering 200. */
  async bringBack(): Promise<void> {
    this.refusing = false;
    if (!this.server) await this.start();
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }
}

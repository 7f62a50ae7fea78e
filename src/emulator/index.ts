// The provider emulator: one plain HTTP server that speaks the subset of the Twilio, Vonage and
// Telnyx APIs the adapters use (all three at its root; their paths do not overlap), simulates
// each call on a scaled clock and sends each provider's own signed callbacks. It imports nothing
// from the API, the data layer, workflows or activities: it stands where the providers stand.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderName } from '../contracts/providers';
import { createAccountsRoute } from './accounts';
import type { ProviderContext } from './context';
import { CallbackQueue } from './delivery';
import { DialRateLimiter, type DialsPerSecond } from './dial-rate';
import { json, matchRoute, type Route } from './http';
import { digitsOf, type MachineDetectionResult, type Outcome } from './scenarios';
import {
  CallSimulator,
  type EmulatedCallState,
  type EmulatedCall,
  type EmulatorLogger,
  type SpokenUtterance,
} from './simulation';
import { createTelnyxEmulator } from './telnyx';
import { createTwilioEmulator } from './twilio';
import { createVonageEmulator } from './vonage';

export { parseDialsPerSecond, type DialsPerSecond } from './dial-rate';
export {
  MACHINE_GREETING,
  MACHINE_OUTCOMES,
  numberForScenario,
  outcomeFor,
  scenarioFor,
  SCENARIOS,
  type MachineDetectionResult,
  type Outcome,
  type Scenario,
} from './scenarios';
export type { EmulatorLogger } from './simulation';

export interface EmulatorOptions {
  port: number;
  host?: string;
  /** 1 is real time; tests use about 0.02. */
  speedFactor?: number;
  /** Ed25519 private key (PEM) Telnyx webhooks are signed with; generated when absent. */
  telnyxSigningKeyPem?: string;
  /** The HS256 secret Vonage signed webhooks use (the teams' Vonage signatureSecret). */
  vonageSignatureSecret: string;
  /** How the service reaches the emulator (recording URLs use it); defaults to the listening URL. */
  publicBaseUrl?: string;
  /** Retries of a failed callback after its first attempt. */
  callbackRetries?: number;
  logger?: EmulatorLogger;
  /** Per-account dial rates, as the providers enforce them (dial-rate.ts); none when absent. */
  dialsPerSecond?: DialsPerSecond;
}

export interface EmulatedCallView {
  provider: ProviderName;
  providerCallId: string;
  /** The account that placed it (Twilio Account SID, Vonage application id, Telnyx API key). */
  account: string;
  /** When the provider placed it (ms since the epoch): after the account's dial queue, if any. */
  placedAt: number | null;
  to: string;
  from: string;
  record: boolean;
  state: EmulatedCallState;
  outcome: Outcome;
  scenarioId: string | null;
  end?: EmulatedCall['end'];
  /** The answering-machine detection the dial asked for, in the provider's words (null: none). */
  machineDetection: string | null;
  /** What the detector concluded (null: no detection asked for, or no verdict yet). */
  answeredBy: MachineDetectionResult | null;
  /** Everything said, in order: a message left on a machine is the agent's. */
  spoken: SpokenUtterance[];
  hasRecording: boolean;
}

export interface Emulator {
  start(): Promise<{ url: string }>;
  stop(): Promise<void>;
  /** The listening URL (after start). Every provider's base URL is this URL. */
  readonly url: string;
  /** Base64 of the raw Ed25519 public key: a team's Telnyx `publicKey`. */
  readonly telnyxPublicKeyBase64: string;
  /** How many dials to `number` the providers accepted (refused dials ring nobody). */
  callsTo(number: string): number;
  calls(): EmulatedCallView[];
  /** Sets the accounts' dial rates from now on ({} turns them off). */
  setDialsPerSecond(limits: DialsPerSecond): void;
  /** Dials a provider refused for its account's rate (429). */
  rateLimited(provider: ProviderName): number;
  /** Resolves when every call has ended and every callback has been delivered or given up on. */
  idle(): Promise<void>;
  /**
   * Faults for the dials that follow: every `every`-th accepted dial is placed (the phone rings) and
   * then its answer is lost: `answer-500` answers 500, `drop` closes the connection without an answer,
   * taking turns when both are given. `null` turns faults off. The client cannot tell that the call
   * was placed: a second dial for it would ring the person twice.
   */
  setDialFaults(faults: { every: number; kinds: DialFault[] } | null): void;
  /** The dials whose answer was lost, in order. */
  dialFaults(): LostDialAnswer[];
}

export type DialFault = 'answer-500' | 'drop';
export interface LostDialAnswer {
  provider: ProviderName;
  providerCallId: string;
  to: string;
  kind: DialFault;
}

const MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_RETRIES = 3;
const silentLogger: EmulatorLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

class BodyTooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function signingKey(pem: string | undefined): KeyObject {
  return pem ? createPrivateKey(pem) : generateKeyPairSync('ed25519').privateKey;
}

export function createEmulator(options: EmulatorOptions): Emulator {
  const speedFactor = options.speedFactor ?? 1;
  if (!(speedFactor > 0)) throw new Error('speedFactor must be a positive number');
  const logger = options.logger ?? silentLogger;
  const telnyxKey = signingKey(options.telnyxSigningKeyPem);
  const telnyxJwk = createPublicKey(telnyxKey).export({ format: 'jwk' });
  if (telnyxJwk.crv !== 'Ed25519' || !telnyxJwk.x)
    throw new Error('telnyxSigningKeyPem must be an Ed25519 private key');
  const telnyxPublicKeyBase64 = Buffer.from(telnyxJwk.x, 'base64url').toString('base64');

  const simulator = new CallSimulator(speedFactor, logger);
  // Which calls the request being handled placed, for the dial faults.
  const requestScope = new AsyncLocalStorage<{ placed: EmulatedCall[] }>();
  let faults: { every: number; kinds: DialFault[]; seen: number } | null = null;
  const lostAnswers: LostDialAnswer[] = [];
  const dialRate = new DialRateLimiter(options.dialsPerSecond);
  const dialCounts = new Map<string, number>();
  const allCalls: EmulatedCall[] = [];
  const queues = new Set<CallbackQueue>();
  let stopped = false;
  let server: Server | null = null;
  let listeningUrl: string | null = null;

  const publicUrl = (): string => {
    const base = options.publicBaseUrl ?? listeningUrl;
    if (!base) throw new Error('the emulator has not been started');
    return base.replace(/\/+$/, '');
  };

  const context: ProviderContext = {
    simulator,
    logger,
    publicUrl,
    newQueue() {
      const queue = new CallbackQueue({
        retries: options.callbackRetries ?? DEFAULT_RETRIES,
        retryDelayMs: (retry) => Math.max(10, 1000 * 2 ** (retry - 1) * speedFactor),
        logger,
        isStopped: () => stopped,
      });
      queues.add(queue);
      return queue;
    },
    dialled(call) {
      requestScope.getStore()?.placed.push(call);
      const key = digitsOf(call.to);
      dialCounts.set(key, (dialCounts.get(key) ?? 0) + 1);
      allCalls.push(call);
      logger.info({ provider: call.provider, callId: call.id, to: call.to, outcome: call.plan.outcome }, 'call placed');
    },
    dialRate,
  };

  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/healthz$/,
      handle: () => json(200, { status: 'ok', providers: ['twilio', 'vonage', 'telnyx'] }),
    },
    createAccountsRoute({ vonageSignatureSecret: options.vonageSignatureSecret, telnyxPublicKeyBase64 }),
    ...createTwilioEmulator(context).routes,
    ...createVonageEmulator(context, options.vonageSignatureSecret).routes,
    ...createTelnyxEmulator(context, telnyxKey).routes,
  ];

  /** The fault the answer to a request that placed `placed` meets, if any. */
  function faultFor(placed: readonly EmulatedCall[]): DialFault | null {
    if (!faults || placed.length === 0) return null;
    faults.seen += 1;
    if (faults.seen % faults.every !== 0) return null;
    const kind = faults.kinds[(faults.seen / faults.every - 1) % faults.kinds.length]!;
    for (const call of placed) {
      lostAnswers.push({ provider: call.provider, providerCallId: call.id, to: call.to, kind });
      logger.info(
        { provider: call.provider, callId: call.id, kind },
        'dial fault: the call is placed, its answer lost',
      );
    }
    return kind;
  }

  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return requestScope.run({ placed: [] }, () => handleInScope(req, res));
  }

  async function handleInScope(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    try {
      const body = await readBody(req);
      const matched = matchRoute(routes, method, url.pathname);
      const result =
        matched === null
          ? json(404, { error: `no emulated endpoint ${method} ${url.pathname}` })
          : matched === 'method-not-allowed'
            ? json(405, { error: `${method} is not allowed on ${url.pathname}` })
            : await matched.route.handle(
                { method, path: url.pathname, query: url.searchParams, headers: req.headers, body },
                matched.params,
              );
      if (result.status >= 400)
        logger.info({ method, path: url.pathname, status: result.status }, 'emulated API refused a request');
      const fault = faultFor(requestScope.getStore()?.placed ?? []);
      if (fault === 'drop') {
        res.socket?.destroy();
        return;
      }
      if (fault === 'answer-500') {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: 'emulated provider failure after the call was placed' }));
        return;
      }
      res.writeHead(result.status, result.headers);
      res.end(result.body);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        res.writeHead(413).end();
        return;
      }
      logger.error({ err, method, path: url.pathname }, 'emulator request failed');
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'emulator internal error' }));
    }
  }

  return {
    get url(): string {
      if (!listeningUrl) throw new Error('the emulator has not been started');
      return listeningUrl;
    },
    telnyxPublicKeyBase64,

    async start() {
      if (server) throw new Error('the emulator is already started');
      const host = options.host ?? '127.0.0.1';
      const created = createServer((req, res) => void handle(req, res));
      await new Promise<void>((resolve, reject) => {
        created.once('error', reject);
        created.listen(options.port, host, () => {
          created.off('error', reject);
          resolve();
        });
      });
      server = created;
      const { port } = created.address() as AddressInfo;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
      listeningUrl = `http://${shownHost}:${port}`;
      return { url: listeningUrl };
    },

    async stop() {
      stopped = true;
      await simulator.stop();
      const running = server;
      server = null;
      if (!running) return;
      await new Promise<void>((resolve) => {
        running.close(() => resolve());
        running.closeAllConnections();
      });
    },

    callsTo(number) {
      return dialCounts.get(digitsOf(number)) ?? 0;
    },

    calls() {
      return allCalls.map((call) => ({
        provider: call.provider,
        providerCallId: call.id,
        account: call.account,
        placedAt: call.placedAt?.getTime() ?? null,
        to: call.to,
        from: call.from,
        record: call.record,
        state: call.state,
        outcome: call.plan.outcome,
        scenarioId: call.plan.scenarioId,
        end: call.end,
        machineDetection: call.machineDetection,
        answeredBy: call.answeredBy ?? null,
        spoken: [...call.spoken],
        hasRecording: call.recording !== undefined,
      }));
    },

    setDialsPerSecond(limits) {
      dialRate.configure(limits);
    },

    setDialFaults(next) {
      if (next && (!(next.every >= 1) || next.kinds.length === 0))
        throw new Error('dial faults need every >= 1 and at least one kind');
      faults = next ? { every: Math.floor(next.every), kinds: [...next.kinds], seen: 0 } : null;
    },
    dialFaults() {
      return [...lostAnswers];
    },
    rateLimited(provider) {
      return dialRate.refused(provider);
    },

    async idle() {
      await simulator.idle();
      await Promise.all([...queues].map((q) => q.drained()));
    },
  };
}

// The provider emulator: one plain HTTP server that speaks the subset of the Twilio, Vonage and
// Telnyx APIs the adapters use (all three at its root; their paths do not overlap), simulates
// each call on a scaled clock and sends each provider's own signed callbacks. It imports nothing
// from the API, the data layer, workflows or activities: it stands where the providers stand.
// For chaos tests it injects faults (faults.ts) and, when asked, serves a control API (control.ts).
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderName } from '../contracts/providers';
import { createAccountsRoute } from './accounts';
import type { ProviderContext } from './context';
import { createControlRoutes } from './control';
import { CallbackQueue, type OutboundCallback } from './delivery';
import { DialRateLimiter, type DialsPerSecond } from './dial-rate';
import {
  FaultInjector,
  parseDialFaults,
  parseFaults,
  type CallbackFault,
  type DialFault,
  type DialFaults,
  type EmulatorFaults,
  type InjectedFaults,
} from './faults';
import { json, matchRoute, type ApiResponse, type Route } from './http';
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
export type { DialFault, DialFaults, EmulatorFaults, InjectedFaults } from './faults';
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
  /** Serves the control API under /emulator/ (control.ts); off by default. */
  control?: boolean;
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
  /** Our service's id for the call: the `callId` query parameter of the callback URL the dial gave (null: none). */
  serviceCallId: string | null;
  end?: EmulatedCall['end'];
  /** The answering-machine detection the dial asked for, in the provider's words (null: none). */
  machineDetection: string | null;
  /** How long the provider lets it ring unanswered: the dial's timeout, else the provider's default. */
  ringTimeoutSeconds: number;
  /** How long the provider lets it last from answer: the dial's time limit, else the provider's own. */
  timeLimitSeconds: number;
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
   * `timeout` holds it open without one (EmulatorFaults.timeoutHoldMs), taking turns when several are
   * given. `null` turns faults off. The client cannot tell that the call was placed: a second dial for
   * it would ring the person twice.
   */
  setDialFaults(faults: DialFaults | null): void;
  /** The dials whose answer was lost (to either kind of fault), in order. */
  dialFaults(): LostDialAnswer[];
  /** Share-based faults from now on, drawn from a generator seeded afresh; null turns them off. */
  setFaults(faults: EmulatorFaults | null): void;
  /** The share-based faults in force, and every fault injected since the start. */
  faults(): { faults: EmulatorFaults | null; injected: InjectedFaults };
}

export interface LostDialAnswer {
  provider: ProviderName;
  providerCallId: string;
  to: string;
  kind: DialFault;
}

const MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_CALLBACK_RETRIES = 3;
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

/**
 * The service puts its own call id in the callback URL it gives the provider (`?callId=`); read it
 * generically, so the emulator needs nothing from the service.
 */
function serviceCallIdOf(callbackUrl: string | null): string | null {
  if (!callbackUrl) return null;
  try {
    return new URL(callbackUrl).searchParams.get('callId');
  } catch {
    return null;
  }
}

function send(res: ServerResponse, answer: ApiResponse): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

function viewOf(call: EmulatedCall): EmulatedCallView {
  return {
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
    serviceCallId: serviceCallIdOf(call.callbackUrl),
    end: call.end,
    machineDetection: call.machineDetection,
    ringTimeoutSeconds: call.plan.ringTimeoutSeconds,
    timeLimitSeconds: call.timeLimitSeconds,
    answeredBy: call.answeredBy ?? null,
    spoken: [...call.spoken],
    hasRecording: call.recording !== undefined,
  };
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
  const injector = new FaultInjector();
  const lostAnswers: LostDialAnswer[] = [];
  /** Connections held open by `timeout` faults, cleared when the emulator stops. */
  const holds = new Set<NodeJS.Timeout>();
  const dialRate = new DialRateLimiter(options.dialsPerSecond);
  const dialCounts = new Map<string, number>();
  const allCalls: EmulatedCall[] = [];
  const queues = new Set<CallbackQueue>();
  const stopping = new AbortController();
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
        retries: options.callbackRetries ?? DEFAULT_CALLBACK_RETRIES,
        retryDelayMs: (retry) => Math.max(10, 1000 * 2 ** (retry - 1) * speedFactor),
        logger,
        stopped: stopping.signal,
        faultFor: callbackFault,
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

  const providers = {
    twilio: createTwilioEmulator(context),
    vonage: createVonageEmulator(context, options.vonageSignatureSecret),
    telnyx: createTelnyxEmulator(context, telnyxKey),
  };
  /** The provider API routes a refusal fault may answer 503 (media downloads are storage, not the API). */
  const refusable = new Map<Route, ProviderName>(
    (['twilio', 'vonage', 'telnyx'] as const).flatMap((name) =>
      providers[name].routes.filter((route) => !route.media).map((route) => [route, name] as const),
    ),
  );
  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/healthz$/,
      handle: () => json(200, { status: 'ok', providers: ['twilio', 'vonage', 'telnyx'] }),
    },
    createAccountsRoute({ vonageSignatureSecret: options.vonageSignatureSecret, telnyxPublicKeyBase64 }),
    ...providers.twilio.routes,
    ...providers.vonage.routes,
    ...providers.telnyx.routes,
  ];

  function callbackFault(callback: OutboundCallback): CallbackFault {
    const fault = injector.callbackFault();
    const about = { event: callback.event, url: callback.url };
    if (fault.delayMs !== null) {
      logger.info({ ...about, delayMs: fault.delayMs }, 'injected fault: callback held back, later ones overtake it');
    }
    if (fault.duplicate) logger.info(about, 'injected fault: callback to be delivered twice');
    return fault;
  }

  /** The fault the answer to a request that placed `placed` meets, if any. */
  function lostAnswerFor(placed: readonly EmulatedCall[]): DialFault | null {
    const kind = injector.dialAnswerFault(placed.length);
    if (!kind) return null;
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

  /** Sends nothing and holds the connection until the client gives up or the hold ends. */
  function holdWithoutAnswer(res: ServerResponse): void {
    const timer = setTimeout(() => res.socket?.destroy(), injector.timeoutHoldMs);
    holds.add(timer);
    res.once('close', () => {
      clearTimeout(timer);
      holds.delete(timer);
    });
  }

  function loseAnswer(res: ServerResponse, kind: DialFault): void {
    if (kind === 'drop') res.socket?.destroy();
    else if (kind === 'timeout') holdWithoutAnswer(res);
    else send(res, json(500, { error: 'emulated provider failure after the call was placed' }));
  }

  async function handleInScope(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    try {
      const body = await readBody(req);
      const matched = matchRoute(routes, method, url.pathname);
      const provider = matched && matched !== 'method-not-allowed' ? refusable.get(matched.route) : undefined;
      if (provider && injector.refuses()) {
        logger.info({ method, path: url.pathname, provider }, 'injected fault: request refused with 503, nothing done');
        send(res, providers[provider].unavailable());
        return;
      }
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
      const fault = lostAnswerFor(requestScope.getStore()?.placed ?? []);
      if (fault) loseAnswer(res, fault);
      else send(res, result);
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

  const emulator: Emulator = {
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
      stopping.abort();
      for (const timer of holds) clearTimeout(timer);
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
      return allCalls.map(viewOf);
    },

    setDialsPerSecond(limits) {
      dialRate.configure(limits);
    },

    setDialFaults(next) {
      const parsed = parseDialFaults(next);
      if (!parsed.ok)
        throw new Error(`dial faults need every >= 1 and at least one kind: ${parsed.problems.join('; ')}`);
      injector.schedule(parsed.value);
    },
    dialFaults() {
      return [...lostAnswers];
    },
    setFaults(next) {
      const parsed = parseFaults(next);
      if (!parsed.ok) throw new Error(`invalid emulator faults: ${parsed.problems.join('; ')}`);
      injector.configure(parsed.value);
    },
    faults() {
      return { faults: injector.current(), injected: { ...injector.injected } };
    },
    rateLimited(provider) {
      return dialRate.refused(provider);
    },

    async idle() {
      await simulator.idle();
      await Promise.all([...queues].map((q) => q.drained()));
    },
  };
  if (options.control) routes.push(...createControlRoutes(emulator));
  return emulator;
}

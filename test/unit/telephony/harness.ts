// A real emulator and a real Koa app with the callback router, both on free ports, and adapters
// pointed at the emulator: what the service does, minus the database and Temporal.
import { generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { ProviderEvent, ProviderEventKind, ProviderName } from '../../../src/contracts/providers';
import { createEmulator, type Emulator } from '../../../src/emulator';
import { createTelephonyCallbackRouter } from '../../../src/api/routes/provider-callbacks';
import { callbackUrlFor } from '../../../src/telephony/callback-url';
import { createProvider, type ProviderBaseUrls } from '../../../src/telephony';
import type { PlaceCallRequest, ProviderCredentials, TelephonyProvider } from '../../../src/telephony/provider';

export const OPENING_LINE = 'Hello Grace, this is Ada from Acme Dental. Could we book your check-up next week?';
const TERMINAL: ReadonlySet<ProviderEventKind> = new Set(['completed', 'busy', 'no-answer', 'failed']);

export interface Harness {
  emulator: Emulator;
  routerUrl: string;
  /** The key the emulator signs Telnyx webhooks with (tests forge callbacks with it). */
  telnyxPrivateKey: KeyObject;
  credentials: CredentialsByProvider;
  provider(name: ProviderName): TelephonyProvider;
  /** A request for a fresh call id; the router knows the call from now on. */
  request(name: ProviderName, overrides?: Partial<PlaceCallRequest>): PlaceCallRequest;
  eventsFor(callId: string): ProviderEvent[];
  /** onEvents throws for the next `times` batches of this call (the router then answers 500). */
  failNextDeliveries(callId: string, times: number): void;
  onEventsCalls(): number;
  /** The router's next lookups for this call answer a remembered adapter holding `stale` credentials. */
  rememberStale(callId: string, stale: ProviderCredentials): void;
  /** Each lookup the router made for this call: whether it asked for fresh credentials. */
  lookupsFor(callId: string): Array<{ fresh: boolean }>;
  waitFor(callId: string, kind: ProviderEventKind | 'terminal', timeoutMs?: number): Promise<ProviderEvent[]>;
  close(): Promise<void>;
}

type CredentialsByProvider = { [P in ProviderName]: Extract<ProviderCredentials, { provider: P }> };

let sequence = 0;

/** A unique E.164 number ending in `lastFour` (the emulator's outcome rule), else a plain one. */
export function uniqueNumber(lastFour?: string): string {
  sequence += 1;
  const middle = String((Date.now() + sequence * 7919) % 1_000_000).padStart(6, '0');
  const tail = lastFour ?? String(3000 + ((sequence * 37) % 6000)).padStart(4, '0');
  return `+1${middle}${tail}`;
}

export async function startHarness(options: { speedFactor?: number } = {}): Promise<Harness> {
  const vonageSignatureSecret = randomBytes(24).toString('base64url');
  const telnyxPrivateKey = generateKeyPairSync('ed25519').privateKey;
  const emulator = createEmulator({
    port: 0,
    speedFactor: options.speedFactor ?? 0.02,
    vonageSignatureSecret,
    telnyxSigningKeyPem: telnyxPrivateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  });
  const { url: emulatorUrl } = await emulator.start();
  const baseUrls: ProviderBaseUrls = { twilio: emulatorUrl, vonage: emulatorUrl, telnyx: emulatorUrl };

  const credentials: CredentialsByProvider = {
    twilio: {
      provider: 'twilio',
      twilio: { accountSid: `AC${randomBytes(16).toString('hex')}`, authToken: randomBytes(16).toString('hex') },
    },
    vonage: {
      provider: 'vonage',
      vonage: {
        applicationId: randomUUID(),
        privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 })
          .privateKey.export({ type: 'pkcs8', format: 'pem' })
          .toString(),
        signatureSecret: vonageSignatureSecret,
      },
    },
    telnyx: {
      provider: 'telnyx',
      telnyx: {
        apiKey: `KEY${randomBytes(16).toString('hex')}`,
        connectionId: '1494404757140276705',
        publicKey: emulator.telnyxPublicKeyBase64,
      },
    },
  };

  const owners = new Map<string, ProviderName>();
  const events = new Map<string, ProviderEvent[]>();
  const failures = new Map<string, number>();
  const stale = new Map<string, ProviderCredentials>();
  const lookups = new Map<string, Array<{ fresh: boolean }>>();
  let onEventsCalls = 0;
  const app = new Koa();
  let routerUrl = '';
  const router = createTelephonyCallbackRouter({
    get publicBaseUrl() {
      return routerUrl;
    },
    async resolveProvider(provider, callId, options = {}) {
      const fresh = options.fresh === true;
      lookups.set(callId, [...(lookups.get(callId) ?? []), { fresh }]);
      if (owners.get(callId) !== provider) return null;
      const remembered = fresh ? undefined : stale.get(callId);
      return remembered
        ? { adapter: createProvider(remembered, baseUrls), remembered: true }
        : { adapter: createProvider(credentials[provider], baseUrls), remembered: false };
    },
    async onEvents(batch) {
      onEventsCalls += 1;
      const callId = batch[0].callId;
      const failing = failures.get(callId) ?? 0;
      if (failing > 0) {
        failures.set(callId, failing - 1);
        throw new Error('receiver unavailable');
      }
      events.set(callId, [...(events.get(callId) ?? []), ...batch]);
    },
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  app.silent = true;
  app.use(router.routes()).use(router.allowedMethods());
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  routerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    emulator,
    routerUrl,
    telnyxPrivateKey,
    credentials,
    provider: (name) => createProvider(credentials[name], baseUrls),
    request(name, overrides = {}) {
      const callId = randomBytes(12).toString('hex');
      owners.set(overrides.callId ?? callId, name);
      return {
        callId,
        to: uniqueNumber(),
        from: '+14155550100',
        record: true,
        statusCallbackUrl: callbackUrlFor(routerUrl, name, overrides.callId ?? callId),
        script: { openingLine: OPENING_LINE },
        ...overrides,
      };
    },
    eventsFor: (callId) => events.get(callId) ?? [],
    failNextDeliveries: (callId, times) => failures.set(callId, times),
    onEventsCalls: () => onEventsCalls,
    rememberStale: (callId, credentialsHeld) => stale.set(callId, credentialsHeld),
    lookupsFor: (callId) => lookups.get(callId) ?? [],
    async waitFor(callId, kind, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const seen = events.get(callId) ?? [];
        if (seen.some((e) => (kind === 'terminal' ? TERMINAL.has(e.kind) : e.kind === kind))) return seen;
        if (Date.now() > deadline)
          throw new Error(`no ${kind} event for ${callId}; saw ${seen.map((e) => e.kind).join(', ') || 'nothing'}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      await emulator.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

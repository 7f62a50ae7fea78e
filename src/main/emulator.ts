// Entry point: `npm run emulator` serves the emulated Twilio, Vonage and Telnyx APIs.
// EMULATOR_PORT (4010), EMULATOR_HOST (127.0.0.1; 0.0.0.0 to be reached from other hosts or containers,
// as docker-compose.yml's demo is), EMULATOR_SPEED_FACTOR (1 = real time),
// EMULATOR_PUBLIC_BASE_URL (how the service reaches it, for recording links; the listening URL if unset),
// EMULATOR_VONAGE_SIGNATURE_SECRET and EMULATOR_TELNYX_PRIVATE_KEY (Ed25519 PEM): the secrets the
// teams' Vonage signatureSecret and Telnyx publicKey must match; generated (and printed) if unset.
// EMULATOR_DIALS_PER_SECOND: per-account dial rates as the providers enforce them (`twilio=1,
// vonage=3,telnyx=30`, or one number for all); unset: no limit.
// EMULATOR_CALLBACK_RETRIES: retries of a callback the receiver fails, after the first attempt (3).
// EMULATOR_CONTROL (`1` or `true`; off by default): serve the control API under /emulator/ (faults,
// the calls seen, idle), for chaos tests that run the emulator as its own process (src/emulator/control.ts).
import { randomBytes } from 'node:crypto';
import { createEmulator, DEFAULT_CALLBACK_RETRIES, parseDialsPerSecond } from '../emulator';
import { createLogger } from '../logger';

function numberFromEnv(name: string, fallback: number, valid: (n: number) => boolean, what: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!valid(value)) throw new Error(`${name} must be ${what}, got "${raw}"`);
  return value;
}

/** `1`/`true` on, `0`/`false`/unset off; anything else is a mistake worth stopping for. */
function flagFromEnv(name: string): boolean {
  const raw = (process.env[name] ?? '').trim().toLowerCase();
  if (raw === '1' || raw === 'true') return true;
  if (raw === '' || raw === '0' || raw === 'false') return false;
  throw new Error(`${name} must be 1, true, 0 or false, got "${process.env[name]}"`);
}

async function main(): Promise<void> {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info', 'emulator');
  const control = flagFromEnv('EMULATOR_CONTROL');
  const givenSecret = process.env.EMULATOR_VONAGE_SIGNATURE_SECRET || undefined;
  const generatedSecret = givenSecret ? undefined : randomBytes(24).toString('base64url');
  const emulator = createEmulator({
    port: numberFromEnv(
      'EMULATOR_PORT',
      4010,
      (n) => Number.isInteger(n) && n >= 0 && n < 65536,
      'a port number (0: any free port)',
    ),
    host: process.env.EMULATOR_HOST || '127.0.0.1',
    speedFactor: numberFromEnv('EMULATOR_SPEED_FACTOR', 1, (n) => Number.isFinite(n) && n > 0, 'a positive number'),
    publicBaseUrl: process.env.EMULATOR_PUBLIC_BASE_URL || undefined,
    // Set but empty counts as unset (as for every other variable here): never an empty secret.
    vonageSignatureSecret: givenSecret ?? generatedSecret ?? '',
    telnyxSigningKeyPem: process.env.EMULATOR_TELNYX_PRIVATE_KEY || undefined,
    dialsPerSecond: parseDialsPerSecond(process.env.EMULATOR_DIALS_PER_SECOND),
    callbackRetries: numberFromEnv(
      'EMULATOR_CALLBACK_RETRIES',
      DEFAULT_CALLBACK_RETRIES,
      (n) => Number.isInteger(n) && n >= 0,
      'an integer >= 0',
    ),
    control,
    logger,
  });
  const { url } = await emulator.start();
  process.stdout.write(`Provider emulator listening on ${url} (Twilio, Vonage and Telnyx APIs at this base URL)\n`);
  const publicBaseUrl = process.env.EMULATOR_PUBLIC_BASE_URL;
  if (publicBaseUrl) process.stdout.write(`Recording links name it as ${publicBaseUrl} (EMULATOR_PUBLIC_BASE_URL)\n`);
  if (control) process.stdout.write(`Control API at ${url}/emulator/ (faults, calls, idle)\n`);
  if (generatedSecret) process.stdout.write(`Vonage signature secret (generated): ${generatedSecret}\n`);
  if (!process.env.EMULATOR_TELNYX_PRIVATE_KEY) {
    process.stdout.write(`Telnyx public key (generated): ${emulator.telnyxPublicKeyBase64}\n`);
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'emulator stopping');
    emulator
      .stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'emulator did not stop cleanly');
        process.exit(1);
      });
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`emulator failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});

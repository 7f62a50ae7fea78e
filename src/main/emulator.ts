// Entry point: `npm run emulator` serves the emulated Twilio, Vonage and Telnyx APIs.
// EMULATOR_PORT (4010), EMULATOR_HOST (127.0.0.1), EMULATOR_SPEED_FACTOR (1 = real time),
// EMULATOR_PUBLIC_BASE_URL (how the service reaches it, for recording links),
// EMULATOR_VONAGE_SIGNATURE_SECRET and EMULATOR_TELNYX_PRIVATE_KEY (Ed25519 PEM): the secrets the
// teams' Vonage signatureSecret and Telnyx publicKey must match; generated (and printed) if unset.
// EMULATOR_DIALS_PER_SECOND: per-account dial rates as the providers enforce them (`twilio=1,
// vonage=3,telnyx=30`, or one number for all); unset: no limit.
import { randomBytes } from 'node:crypto';
import { createEmulator, parseDialsPerSecond } from '../emulator';
import { createLogger } from '../logger';

function numberFromEnv(name: string, fallback: number, valid: (n: number) => boolean, what: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!valid(value)) throw new Error(`${name} must be ${what}, got "${raw}"`);
  return value;
}

async function main(): Promise<void> {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info', 'emulator');
  const generatedSecret = process.env.EMULATOR_VONAGE_SIGNATURE_SECRET
    ? undefined
    : randomBytes(24).toString('base64url');
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
    vonageSignatureSecret: process.env.EMULATOR_VONAGE_SIGNATURE_SECRET ?? generatedSecret ?? '',
    telnyxSigningKeyPem: process.env.EMULATOR_TELNYX_PRIVATE_KEY || undefined,
    dialsPerSecond: parseDialsPerSecond(process.env.EMULATOR_DIALS_PER_SECOND),
    logger,
  });
  const { url } = await emulator.start();
  process.stdout.write(`Provider emulator listening on ${url} (Twilio, Vonage and Telnyx APIs at this base URL)\n`);
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

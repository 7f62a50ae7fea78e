// Configuration: one typed module, validated when an entry point calls loadConfig() (never at
// import). A wrong or missing value stops the process with a message naming the variable.
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from './contracts/ids';
import { MAX_DIALS_PER_SECOND } from './contracts/pacing';
import { DEFAULT_RETRY_DELAYS, parseRetryDelays } from './webhooks/retry-schedule';

/** The providers' real API roots: the defaults, and never asked for emulator accounts. */
export const PROVIDER_API_BASE_URLS = {
  twilio: 'https://api.twilio.com',
  vonage: 'https://api.nexmo.com',
  telnyx: 'https://api.telnyx.com',
} as const;

const booleanFlag = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1');

const url = z.url({ message: 'must be an absolute URL' }).transform((value) => value.replace(/\/+$/, ''));

const port = z.coerce.number().int().min(0).max(65535);
/** A worker's pollers of one kind: a fixed maximum, or `auto` (the SDK scales them with the backlog). */
const pollers = (min: number) =>
  z
    .union([z.literal('auto'), z.coerce.number().int().min(min).max(100)], {
      message: `must be \`auto\` or a whole number from ${min} to 100`,
    })
    .optional();

const schema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_BASE_URL: url.optional(),
  MONGODB_URI: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// or mongodb+srv:// URI'),
  MONGODB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  // The worker's: an activity whose database round trip is never answered fails after this long and
  // is retried, instead of running out its start-to-close timeout (up to 2 minutes). 0: no limit.
  WORKER_MONGODB_SOCKET_TIMEOUT_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ENCRYPTION_KEY: z
    .string()
    .refine(
      (value) => Buffer.from(value, 'base64').length === 32,
      'must be 32 bytes, base64-encoded (openssl rand -base64 32)',
    ),
  /** Keys values may still be sealed under while ENCRYPTION_KEY is rotated (opened, never sealed with). */
  ENCRYPTION_KEYS_PREVIOUS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean),
    )
    .refine(
      (keys) => keys.every((key) => Buffer.from(key, 'base64').length === 32),
      'must be a comma-separated list of 32-byte base64 keys',
    ),
  WEBHOOK_RETRY_DELAYS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (!value) return DEFAULT_RETRY_DELAYS;
      try {
        return parseRetryDelays(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
        return z.NEVER;
      }
    }),
  ALLOW_PRIVATE_WEBHOOK_URLS: booleanFlag.default(false),
  /**
   * Webhooks one team may have (each call runs a delivery stream per endpoint); one more is a 400.
   * 0, the default: no cap, as before the setting (a cap refuses creates existing clients made).
   */
  MAX_WEBHOOKS_PER_TEAM: z.coerce.number().int().min(0).max(10_000).default(0),
  /**
   * On: the API sits behind one reverse proxy, and the client's address (and protocol and host) are
   * read from the X-Forwarded-* headers it sets (the last X-Forwarded-For entry). Off: those headers
   * are anyone's to write and are ignored.
   */
  TRUST_PROXY: booleanFlag.default(false),
  TWILIO_API_BASE_URL: url.default(PROVIDER_API_BASE_URLS.twilio),
  VONAGE_API_BASE_URL: url.default(PROVIDER_API_BASE_URLS.vonage),
  TELNYX_API_BASE_URL: url.default(PROVIDER_API_BASE_URLS.telnyx),
  BATCH_START_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(32),
  /**
   * The API's and the worker's heaps may grow this far (percent) past what their last full garbage
   * collection kept before the next one; 0: V8's own factor (up to 4x on a small heap, which lets
   * their RSS swell with garbage under load). Unset: HEAP_GROWING_PERCENT_DEFAULTS. See
   * src/main/heap-growth.ts.
   */
  HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(400).optional(),
  WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).max(1000).default(100),
  /** Webhook attempts one worker process makes at once, on their own task queue (webhookAttemptTaskQueue). */
  WEBHOOK_MAX_CONCURRENT_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(50),
  /**
   * Of those, the attempts one team may have under way at once (0: no cap): a team whose receiver
   * hangs leaves the other slots to the other teams (src/webhooks/team-attempts.ts).
   */
  WEBHOOK_MAX_ATTEMPTS_PER_TEAM: z.coerce.number().int().min(0).max(1000).default(20),
  /**
   * Workflows the worker keeps in memory between their tasks. The SDK's default grows with the heap
   * limit (about 2,300 on a 4 GiB heap, some 0.25 MiB each); a sleeping call needs none, and one that
   * wakes after eviction replays its short history.
   */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(2).max(100_000).default(500),
  /** Workflow tasks one worker runs at once (unset: the SDK's 40). */
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().min(2).max(1000).optional(),
  /**
   * Long polls for workflow tasks at most (unset: the SDK's min(10, concurrent workflow tasks); at
   * least 2), or `auto`: as many as the backlog the server reports asks for, up to 100.
   */
  WORKER_WORKFLOW_TASK_POLLERS: pollers(2),
  /** Long polls for activity tasks at most (unset: the SDK's 10), or `auto`. */
  WORKER_ACTIVITY_TASK_POLLERS: pollers(1),
  /** Threads running workflow code (unset: the SDK's 1, as it reuses one V8 context). */
  WORKER_WORKFLOW_THREADS: z.coerce.number().int().min(1).max(16).optional(),
  /** A dialled call not answered within this long is hung up and ends `noAnswer`, whatever the provider says. */
  RING_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  /** Off: calls dial without a slot from their team's pacer (for measurements only; the limits are then not held). */
  PACING_ENABLED: booleanFlag.default(true),
  /** Service-wide default of a team's live-call cap (a team's own setting wins). */
  PACING_MAX_CONCURRENT_CALLS: z.coerce.number().int().min(1).max(10_000).optional(),
  /** Service-wide default dials per second per provider account, e.g. `twilio=1,vonage=3,telnyx=30`. */
  PACING_DIALS_PER_SECOND: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (!value) return undefined;
      const out: Partial<Record<'twilio' | 'vonage' | 'telnyx', number>> = {};
      for (const part of value.split(',')) {
        const match = /^\s*(twilio|vonage|telnyx)\s*=\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
        // The same bounds as `team set-limits --dials-per-second`.
        if (!match || Number(match[2]) <= 0 || Number(match[2]) > MAX_DIALS_PER_SECOND) {
          ctx.addIssue({
            code: 'custom',
            message: `must look like twilio=1,vonage=3,telnyx=30 (each above 0, at most ${MAX_DIALS_PER_SECOND}); got "${part}"`,
          });
          return z.NEVER;
        }
        out[match[1] as 'twilio' | 'vonage' | 'telnyx'] = Number(match[2]);
      }
      return out;
    }),
  /**
   * How long a live or ringing call may stay silent before its workflow asks the provider how it
   * stands (a callback lost in an outage of ours); 0: never asks, the call's own timeouts end it.
   */
  CALL_STATUS_POLL_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  RECONCILE_AFTER_SECONDS: z.coerce.number().int().min(1).default(300),
  REQUEST_BODY_LIMIT: z
    .string()
    .regex(/^\d+(kb|mb)$/, 'must look like 512kb or 20mb')
    .default('20mb'),
  /** Sustained requests per second per API key, held over each minute, across API processes (0: no limit). */
  RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).max(100_000).default(300),
  /** Requests per API key within any one second (the burst a well-behaved client never meets). */
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /** When set, GET /metrics (API and worker) needs `Authorization: Bearer <this>`. */
  METRICS_BEARER_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** The worker's /metrics port (0: none). */
  WORKER_METRICS_PORT: port.default(9464),
  /** A workflow bundle built ahead of time (`bundleWorkflowCode`); unset: the worker bundles at start. */
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
});

export type Config = Omit<z.infer<typeof schema>, 'PUBLIC_BASE_URL'> & { PUBLIC_BASE_URL: string };

/**
 * HEAP_GROWING_PERCENT when unset, per process. The API's live heap is small (about 45 MiB) and for
 * the length of a 10,000-call batch holds the batch: at 10 % its RSS under one peaked at 194 MiB,
 * against 199 at 20 % and 228 at 50, and under the create load at 154 against 167, with no more CPU
 * per create (bench/performance-log.md). The worker was not measured at other factors and keeps 50.
 */
export const HEAP_GROWING_PERCENT_DEFAULTS = { api: 10, worker: 50 } as const;

/**
 * HEAP_GROWING_PERCENT alone, for the first import of the API and the worker (src/main/
 * api-heap-growth.ts, worker-heap-growth.ts), which acts before the rest of the config is read: the
 * process's default when unset or empty, undefined when the value is invalid (loadConfig says why).
 */
export function heapGrowingPercentOf(
  processName: keyof typeof HEAP_GROWING_PERCENT_DEFAULTS,
  env: NodeJS.ProcessEnv = process.env,
): number | undefined {
  const value = env.HEAP_GROWING_PERCENT;
  if (value === undefined || value === '') return HEAP_GROWING_PERCENT_DEFAULTS[processName];
  const parsed = schema.shape.HEAP_GROWING_PERCENT.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, so `FOO= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.');
      const message = issue.code === 'invalid_type' && cleaned[name] === undefined ? 'is required' : issue.message;
      return `${name} ${message}`;
    });
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}\nSee README.md, "Configuration".`);
  }
  const config = parsed.data;
  return { ...config, PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}` };
}

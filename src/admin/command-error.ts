// The error of a refused input (exit code 2), and what an error adds to its JSON form, in a module of
// its own: the runner and the commands that only talk to the API need them without loading
// commands.ts, which loads mongoose and the models.
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** Fields an error adds beside `error` in its JSON form (--json): what a script needs as data. */
const DETAILS = Symbol('error details');

/** Gives `err` fields for its JSON form (see errorDetails); answers it. */
export function withDetails<E>(err: E, details: Record<string, unknown>): E {
  if (err instanceof Error) {
    const held = (err as { [DETAILS]?: Record<string, unknown> })[DETAILS];
    Object.assign(err, { [DETAILS]: { ...held, ...details } });
  }
  return err;
}

/** The fields `err` adds beside `error` under --json (none: empty). */
export function errorDetails(err: unknown): Record<string, unknown> {
  return err instanceof Error ? ((err as { [DETAILS]?: Record<string, unknown> })[DETAILS] ?? {}) : {};
}

/**
 * A create's failure, naming the Idempotency-Key it was sent with (as `idempotencyKey` beside `error`
 * under --json). When its outcome is not known (a 5xx, a timeout, an API that could not be reached)
 * the call may exist, and only a retry with the same key creates it at most once: the message says so.
 */
export function withIdempotencyKey(err: unknown, key: string, outcomeUnknown: boolean): unknown {
  if (!(err instanceof Error)) return err;
  if (outcomeUnknown)
    err.message += ` (sent with Idempotency-Key ${key}: run the command again with --idempotency-key ${key} to create the call at most once)`;
  return withDetails(err, { idempotencyKey: key });
}

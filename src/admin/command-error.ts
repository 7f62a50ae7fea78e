// The error of a refused input (exit code 2), and the Idempotency-Key a failed create names, in a
// module of its own: the runner and the commands that only talk to the API need them without loading
// commands.ts, which loads mongoose and the models.
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/**
 * A create's failure, naming the Idempotency-Key it was sent with (in its message, and as
 * `idempotencyKey` beside `error` under --json): after a 5xx, a timeout or a lost answer the call may
 * exist, and only a retry with the same key creates it at most once.
 */
export function withIdempotencyKey(err: unknown, key: string): unknown {
  if (!(err instanceof Error)) return err;
  err.message += ` (sent with Idempotency-Key ${key}: run the command again with --idempotency-key ${key} to create the call at most once)`;
  return Object.assign(err, { idempotencyKey: key });
}

/** The Idempotency-Key a failed create names (withIdempotencyKey), for the JSON error. */
export function idempotencyKeyOf(err: unknown): string | undefined {
  const key = (err as { idempotencyKey?: unknown } | null)?.idempotencyKey;
  return typeof key === 'string' ? key : undefined;
}

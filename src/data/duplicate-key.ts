// MongoDB's answer to a write that a unique index refused (code 11000), for single writes and for
// unordered bulk inserts. The stores use it to make retried and concurrent inserts idempotent.
const DUPLICATE_KEY = 11000;

/** True when the write failed only because of unique-index duplicates (every failed document, for a bulk insert). */
export function isDuplicateKeyOnly(err: unknown): boolean {
  const writeErrors = (err as { writeErrors?: Array<{ code?: number; err?: { code?: number } }> }).writeErrors;
  if (writeErrors?.length) return writeErrors.every((e) => (e.code ?? e.err?.code) === DUPLICATE_KEY);
  return (err as { code?: number }).code === DUPLICATE_KEY;
}

/** Tries of an upsert that a racing insert may refuse (upsertRacingInserts). */
const UPSERT_TRIES = 5;

/**
 * Runs an upsert again when racing inserts of the same new documents made it fail on the unique
 * index: FerretDB refuses the losing insert (MongoDB retries it itself), and a later pass finds the
 * document to update. With several writers at once a pass can lose again, so a few are made.
 */
export async function upsertRacingInserts<T>(write: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await write();
    } catch (err) {
      if (!isDuplicateKeyOnly(err) || tries >= UPSERT_TRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, tries * 5));
    }
  }
}

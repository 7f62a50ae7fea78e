// MongoDB's answer to a write that a unique index refused (code 11000), for single writes and for
// unordered bulk inserts. The stores use it to make retried and concurrent inserts idempotent.
const DUPLICATE_KEY = 11000;

/** True when the write failed only because of unique-index duplicates (every failed document, for a bulk insert). */
export function isDuplicateKeyOnly(err: unknown): boolean {
  const writeErrors = (err as { writeErrors?: Array<{ code?: number; err?: { code?: number } }> }).writeErrors;
  if (writeErrors?.length) return writeErrors.every((e) => (e.code ?? e.err?.code) === DUPLICATE_KEY);
  return (err as { code?: number }).code === DUPLICATE_KEY;
}

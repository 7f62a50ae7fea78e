// The webhook retry schedule (decisions.md "Webhooks"). Imported by workflow code, so this file
// stays pure: no Node modules, no clock, no environment reads.

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Waits before retries 1..7 after a failed first attempt; then the delivery is given up. */
export const DEFAULT_RETRY_DELAYS: readonly number[] = Object.freeze([
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
]);

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/**
 * Parses the `WEBHOOK_RETRY_DELAYS` format: comma-separated durations such as `1s,2s,5s`
 * (units ms, s, m, h; whitespace around entries ignored). A bare number is refused rather than
 * guessed at, since `5` could mean seconds or milliseconds.
 */
export function parseRetryDelays(text: string): number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length === 1 && entries[0] === '') {
    throw new Error('retry delays must list at least one duration, e.g. "1s,2s,5s"');
  }
  return entries.map((entry, index) => {
    const match = DURATION.exec(entry);
    if (match === null) {
      throw new Error(
        `retry delay ${index + 1} ("${entry}") is not a duration: use a number and a unit ms, s, m or h, e.g. "1s,2s,5s"`,
      );
    }
    const ms = Math.round(Number(match[1]) * UNIT_MS[match[2]]);
    if (!Number.isSafeInteger(ms)) {
      throw new Error(`retry delay ${index + 1} ("${entry}") is too large`);
    }
    return ms;
  });
}

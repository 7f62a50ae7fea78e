// Field validators shared by every resource's schemas.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';
import { OBJECT_ID_HEX_ANY_CASE } from '../contracts/ids';

// PostgreSQL (under FerretDB) cannot store U+0000, and no text of this API needs it: every free-text
// field says so in its pattern, so the OpenAPI document and the server agree.
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what these patterns are about
const NO_NUL = /^[^\u0000]*$/;
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * Half of a surrogate pair alone (JSON's `\ud800`) is no character: the store keeps U+FFFD in its
 * place, so the call read back would differ from the one the create answered with.
 */
const UNPAIRED_SURROGATE_MESSAGE = 'must be valid Unicode text (it holds half of a surrogate pair alone)';
const wellFormed = (value: string) => value.isWellFormed();

/** A string without U+0000. */
export const text = () =>
  z.string({ error: 'must be a string' }).regex(NO_NUL, NUL_MESSAGE).refine(wellFormed, UNPAIRED_SURROGATE_MESSAGE);

/**
 * Some character other than whitespace (as String.prototype.trim sees it) and no U+0000. Matched in
 * time linear in the length: the visible character is looked for ahead, once, from the start (the
 * pattern `^[^\0]*[^\s\0][^\0]*$` took time quadratic in it on a long text ending in U+0000:
 * seconds of the API's event loop for 60 KB).
 */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what these patterns are about
export const VISIBLE_TEXT = /^(?=[^\u0000]*[^\s\ufeff\u0000])[^\u0000]*$/;
export const visibleText = () =>
  z
    .string({ error: 'must be a string' })
    .regex(VISIBLE_TEXT, 'must contain a visible character and no NUL character (U+0000)')
    .refine(wellFormed, UNPAIRED_SURROGATE_MESSAGE)
    .trim();

/** An id in a body or query: letter case is tolerated, the value is lower-cased. */
export const objectId = z
  .string({ error: 'must be a string' })
  .regex(new RegExp(`^${OBJECT_ID_HEX_ANY_CASE}$`), 'must be a 24-character hex id')
  .transform((v) => v.toLowerCase());

/** A phone number, normalised to E.164 (spaces, dashes and brackets are tolerated on input). */
export const e164 = z.string({ error: 'must be a string' }).transform((value, ctx) => {
  // The whole value must be the number: by default the library finds one inside any text, and took
  // "Call me at +1 415 555 2671 thanks" and "abc+14155552671xyz" (the OpenAPI pattern refuses both).
  const parsed = parsePhoneNumberFromString(value.trim(), { extract: false });
  if (!parsed || !parsed.isValid()) {
    ctx.addIssue({ code: 'custom', message: 'must be a valid E.164 phone number' });
    return z.NEVER;
  }
  // E.164 has no extension, and a call cannot dial one: dropping it would ring the wrong desk.
  if (parsed.ext) {
    ctx.addIssue({ code: 'custom', message: 'must be a valid E.164 phone number, without an extension' });
    return z.NEVER;
  }
  return parsed.number;
});

const PAGE_LIMIT_RANGE = 'must be between 1 and 1000';
/** An integer as a query string writes one: decimal digits (leading zeros taken, as always), `-` before them at most. */
const PLAIN_INTEGER = /^-?[0-9]+$/;

/**
 * A list's page size (`limit`): 1-1000, default 100. A query's value must be the integer in plain
 * decimal digits: Number() would also read `1e2`, `0x10`, ` 1` and `+5`, which are refused (leading
 * zeros, `05`, are taken).
 */
export const pageLimit = z.preprocess(
  (value, ctx) => {
    if (typeof value !== 'string') return value;
    if (!PLAIN_INTEGER.test(value)) {
      ctx.issues.push({ code: 'custom', message: 'must be an integer in decimal digits, e.g. 100', input: value });
      return z.NEVER;
    }
    const limit = Number(value);
    if (limit < 1 || limit > 1000) {
      ctx.issues.push({ code: 'custom', message: PAGE_LIMIT_RANGE, input: value });
      return z.NEVER;
    }
    return limit;
  },
  // The default inside: the OpenAPI document (the schema as input) states it, as it did.
  z
    .number({ error: 'must be a number' })
    .int('must be an integer')
    .min(1, PAGE_LIMIT_RANGE)
    .max(1000, PAGE_LIMIT_RANGE)
    .default(100),
);

/** A list's `cursor`: opaque, as a previous page's `nextCursor` gave it (src/api/pagination.ts reads it). */
export const pageCursor = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional();

/**
 * What RFC 3986 lets a URI hold, with `//` after an http(s) scheme: the URL is stored and answered as
 * sent (the OpenAPI document says `format: uri`), and requests go where it says. `new URL` alone took
 * spaces, tabs and newlines (dropping the latter two), `http:/host` and non-ASCII names, which it
 * rewrites: the hook shown would not be the one called.
 */
const URI_AS_SENT = /^https?:\/\/[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/i;
/** An empty host (`http:///x`, `https://?q`): `new URL` makes the path's first part the host (`http://x/`). */
const NO_HOST = /^https?:\/\/[/?#]/i;

export const httpUrl = text()
  .max(2048, 'must be at most 2048 characters')
  .superRefine((value, ctx) => {
    let url: URL | null = null;
    try {
      url = new URL(value);
    } catch {
      // said below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      ctx.addIssue({ code: 'custom', message: 'must be an absolute http or https URL' });
    else if (NO_HOST.test(value))
      ctx.addIssue({ code: 'custom', message: 'must name its host right after http:// or https://' });
    else if (!URI_AS_SENT.test(value))
      ctx.addIssue({
        code: 'custom',
        message:
          'must be written as a URI: http:// or https://, with spaces and characters outside ASCII percent-encoded (a name in another script as punycode, xn--)',
      });
  });

// Years 1000-9999, hours 00-23 (JavaScript would read "T24:00" as the next day), minutes and
// seconds 00-59, offsets up to +-23:59. The day is checked against its month by the transform.
const DATE_TIME_SHAPE =
  /^[1-9]\d{3}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)$/;

const TIME_OF_DAY = 'T(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?(?:Z|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)$';
const DAY_IN_ANY_YEAR =
  '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))';
const LEAP_YEAR = '(?:[1-9]\\d(?:0[48]|[2468][048]|[13579][26])|(?:[13579][26]|[2468][048])00)';

/**
 * Exactly the date-times `isoDateTime` accepts, as one regular expression (for the OpenAPI
 * document, where the day-in-month rule cannot be a transform): Feb 29 only in leap years.
 */
export const DATE_TIME_PATTERN = `^(?:[1-9]\\d{3}-${DAY_IN_ANY_YEAR}|${LEAP_YEAR}-02-29)${TIME_OF_DAY}`;

/** ISO 8601 date-time with an explicit offset or Z, parsed to a Date. */
export const isoDateTime = z
  .string({ error: 'must be a string' })
  .regex(DATE_TIME_SHAPE, 'must be an ISO 8601 date-time with Z or an offset')
  .transform((value, ctx) => {
    const date = new Date(value);
    // Date() rolls 2026-02-30 over to March: the written day must exist in the written month.
    const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
    const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
    if (Number.isNaN(date.getTime()) || day > daysInMonth) {
      ctx.addIssue({ code: 'custom', message: 'must be a real date-time' });
      return z.NEVER;
    }
    return date;
  });

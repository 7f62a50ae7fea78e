// A list's `limit` is a plain decimal integer from 1 to 1000 (decisions.md: bad values are a 400).
// Number() reads far more than that (`1e2`, `0x10`, ` 1`, `+5`): each list refuses them.
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/api/errors';
import { parseQueryOrThrow } from '../../../src/api/validation';
import { pageLimit } from '../../../src/schemas/common';
import { doNotCallListQuerySchema } from '../../../src/schemas/do-not-call';
import { phoneCallListQuerySchema } from '../../../src/schemas/phone-calls';

function messagesFor(schema: Parameters<typeof parseQueryOrThrow>[0], query: Record<string, unknown>): string[] {
  try {
    parseQueryOrThrow(schema, query);
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(400);
    return (err as HttpError).messages;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('pageLimit', () => {
  it('takes 1 to 1000 written in decimal digits, and 100 when left out', () => {
    expect(pageLimit.parse(undefined)).toBe(100);
    for (const [written, limit] of [
      ['1', 1],
      ['7', 7],
      ['100', 100],
      ['1000', 1000],
      // Leading zeros were always taken: they still are.
      ['05', 5],
      ['007', 7],
    ] as const) {
      expect(pageLimit.parse(written)).toBe(limit);
      expect(parseQueryOrThrow(phoneCallListQuerySchema, { limit: written }).limit).toBe(limit);
      expect(parseQueryOrThrow(doNotCallListQuerySchema, { limit: written }).limit).toBe(limit);
    }
    expect(parseQueryOrThrow(phoneCallListQuerySchema, {}).limit).toBe(100);
  });

  it('refuses every other way of writing a number, on each list, in the usual words', () => {
    const notInteger = 'limit must be an integer in decimal digits, e.g. 100';
    for (const written of ['1e2', '0x10', ' 1', '1 ', '+5', '1.5', '10.0', '', 'ten', '１０']) {
      for (const schema of [phoneCallListQuerySchema, doNotCallListQuerySchema]) {
        // ` 1` is also what an unencoded `+1` arrives as: the query-string hint follows the message.
        const hint = written === ' 1' ? ' (a `+` in a query string must be sent as %2B)' : '';
        expect({ written, messages: messagesFor(schema, { limit: written }) }).toEqual({
          written,
          messages: [notInteger + hint],
        });
      }
    }
  });

  it('keeps the range message for integers out of range', () => {
    for (const written of ['0', '-0', '-5', '1001', '99999999999999999999999']) {
      expect({ written, messages: messagesFor(phoneCallListQuerySchema, { limit: written }) }).toEqual({
        written,
        messages: ['limit must be between 1 and 1000'],
      });
    }
  });

  it('still says a parameter given twice', () => {
    expect(messagesFor(phoneCallListQuerySchema, { limit: ['5', '6'] })).toEqual(['limit may be given only once']);
  });
});

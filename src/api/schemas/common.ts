// Field validators shared by every resource's schemas.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';

export const objectId = z.string({ error: 'must be a string' }).regex(/^[0-9a-f]{24}$/i, 'must be a 24-character hex id').transform((v) => v.toLowerCase());

/** A phone number, normalised to E.164 (spaces, dashes and brackets are tolerated on input). */
export const e164 = z.string({ error: 'must be a string' }).transform((value, ctx) => {
  const parsed = parsePhoneNumberFromString(value.trim());
  if (!parsed || !parsed.isValid()) {
    ctx.addIssue({ code: 'custom', message: 'must be a valid E.164 phone number' });
    return z.NEVER;
  }
  return parsed.number;
});

export const httpUrl = z.string({ error: 'must be a string' }).max(2048, 'must be at most 2048 characters').refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an absolute http or https URL');

/** ISO 8601 date-time with an explicit offset or Z, parsed to a Date. */
export const isoDateTime = z
  .string({ error: 'must be a string' })
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/, 'must be an ISO 8601 date-time with Z or an offset')
  .transform((value, ctx) => {
    const date = new Date(value);
    // Date() rolls 2026-02-30 over to March: the written day must exist in the written month.
    const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
    const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
    if (Number.isNaN(date.getTime()) || month < 1 || month > 12 || day < 1 || day > daysInMonth) {
      ctx.addIssue({ code: 'custom', message: 'must be a real date-time' });
      return z.NEVER;
    }
    return date;
  });

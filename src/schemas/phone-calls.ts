// Request schemas for phone calls; the request types are inferred from them.
import { z } from 'zod';
import { ALL_EVENTS, isEventName } from '../contracts/events';
import { parseStatusFilter } from '../contracts/call-status';
import { MAX_BATCH } from '../contracts/batches';
import { PROVIDERS } from '../contracts/providers';
import { webhookSecretProblem } from '../webhooks/signing';
import { isTimeZone } from '../calling-hours/calling-window';
import { e164, httpUrl, isoDateTime, objectId, pageCursor, pageLimit, text, visibleText } from './common';

const MAX_SCHEDULE_AHEAD_MS = 365 * 24 * 60 * 60 * 1000;

const promptVariableValue = z.strictObject({
  key: text().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  value: text().max(5000, 'must be at most 5000 characters'),
});

const phoneCallWebhook = z.strictObject({
  url: httpUrl,
  subscribedEvent: z
    .string({ error: 'must be a string' })
    .refine((v) => v === ALL_EVENTS || isEventName(v), 'must be a known event name or *'),
  secret: text()
    .min(8, 'must be at least 8 characters')
    .max(500, 'must be at most 500 characters')
    .superRefine((secret, ctx) => {
      if (webhookSecretProblem(secret))
        ctx.addIssue({ code: 'custom', message: 'starting with whsec_ must continue with padded standard base64' });
    }),
});

/** Each field of a create on its own; phoneCallCreateSchema adds what is checked across fields. */
export const phoneCallCreateFields = z.strictObject({
  teamId: objectId,
  callTemplateId: objectId,
  nameOfHuman: visibleText().max(200, 'must be at most 200 characters').optional(),
  toPhoneNumber: e164,
  promptVariableValues: z
    .array(promptVariableValue, { error: 'must be an array' })
    .max(100, 'must have at most 100 entries')
    .optional(),
  phoneNumberId: objectId.optional(),
  fromPhoneNumber: e164.optional(),
  toEmailAddress: z
    .email({ error: 'must be a valid e-mail address' })
    .max(320, 'must be at most 320 characters')
    .optional(),
  status: z.literal('queued', { error: 'must be queued (the only status a call can be created in)' }).optional(),
  telephonyProvider: z.enum(PROVIDERS, { error: `must be one of ${PROVIDERS.join(', ')}` }).optional(),
  record: z.boolean({ error: 'must be a boolean' }).optional(),
  callDelayedUntil: isoDateTime
    .refine((date) => date.getTime() - Date.now() <= MAX_SCHEDULE_AHEAD_MS, 'must be at most 365 days ahead')
    .optional(),
  phoneCallWebhooks: z
    .array(phoneCallWebhook, { error: 'must be an array' })
    .max(20, 'must have at most 20 entries')
    .optional(),
  calleeTimeZone: text()
    .max(64, 'must be at most 64 characters')
    .refine(isTimeZone, 'must be an IANA time zone such as America/New_York')
    .optional(),
});

export const phoneCallCreateSchema = phoneCallCreateFields.superRefine((value, ctx) => {
  const keys = (value.promptVariableValues ?? []).map((v) => v.key);
  const duplicates = keys.filter((key, index) => keys.indexOf(key) !== index);
  for (const key of new Set(duplicates)) {
    ctx.addIssue({ code: 'custom', path: ['promptVariableValues'], message: `has a duplicate key ${key}` });
  }
});
export type PhoneCallCreateInput = z.output<typeof phoneCallCreateSchema>;

/** The file a batch of calls came from, as a batch body and the file controls' path name it. */
export const fileIdText = () => text().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

export const phoneCallBatchSchema = z.strictObject({
  phoneCalls: z
    .array(z.unknown(), { error: 'must be an array' })
    .min(1, 'must have at least 1 element')
    .max(MAX_BATCH, `must have at most ${MAX_BATCH} elements`),
  fileId: fileIdText().optional(),
  fileName: text().min(1, 'must not be empty').max(500, 'must be at most 500 characters').optional(),
});

export const phoneCallListQuerySchema = z.strictObject({
  callTemplateId: objectId.optional(),
  phoneNumberId: objectId.optional(),
  createdAfter: isoDateTime.optional(),
  createdBefore: isoDateTime.optional(),
  toPhoneNumber: e164.optional(),
  status: z
    .string()
    .transform((value, ctx) => {
      const status = parseStatusFilter(value);
      if (!status) {
        ctx.addIssue({
          code: 'custom',
          message:
            'must be one of queued, ringing, inProgress, completed, busy, noAnswer, failed, cancelled (or canceled)',
        });
        return z.NEVER;
      }
      return status;
    })
    .optional(),
  fileId: text().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
  limit: pageLimit,
  cursor: pageCursor,
});
export type PhoneCallListQuery = z.output<typeof phoneCallListQuerySchema>;

// The answer schemas are one source for the views, validation and the OpenAPI document: the document's
// answer components are exactly what the registry generates, and what the views build from realistic
// records parses with the zod schema (no unknown key) and validates against the document alike.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Types } from 'mongoose';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { errorBody } from '../../../src/api/errors';
import { buildOpenApiDocument, responseComponents } from '../../../src/api/openapi';
import { toWebhookView } from '../../../src/api/routes/webhooks';
import { PhoneCall, type PhoneCallDoc } from '../../../src/data/models/phone-call';
import { Transcript, type TranscriptDoc } from '../../../src/data/models/transcript';
import { Webhook, type WebhookDoc } from '../../../src/data/models/webhook';
import { toCreateView, toReadView } from '../../../src/data/phone-call-view';
import { toTranscriptView } from '../../../src/data/transcript-view';
import {
  errorBodySchema,
  phoneCallCreateViewSchema,
  phoneCallReadViewSchema,
  transcriptViewSchema,
  webhookViewSchema,
} from '../../../src/schemas/responses';

const REQUEST_COMPONENTS = [
  'PhoneCallCreateRequest',
  'PhoneCallBatchRequest',
  'WebhookCreateRequest',
  'WebhookUpdateRequest',
  'DoNotCallAddRequest',
];
const DOC_ID = 'https://openapi.test/openapi.json';
const doc: Record<string, any> = buildOpenApiDocument('http://x');
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, DOC_ID);

/** Parses with the zod schema and validates against the document's component of that name. */
function expectValid(schema: z.ZodType, component: string, value: unknown): void {
  expect(schema.parse(value)).toEqual(value);
  const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/${component}`)!;
  expect(validate(value), ajv.errorsText(validate.errors)).toBe(true);
}

function expectRejected(schema: z.ZodType, component: string, value: unknown): void {
  expect(schema.safeParse(value).success).toBe(false);
  expect(ajv.getSchema(`${DOC_ID}#/components/schemas/${component}`)!(value)).toBe(false);
}

const at = (iso: string) => new Date(iso);
const callDoc = (fields: Record<string, unknown>): PhoneCallDoc =>
  new PhoneCall({
    teamId: new Types.ObjectId(),
    callTemplateId: new Types.ObjectId(),
    toPhoneNumber: '+14155552671',
    fromPhoneNumber: '+14155550100',
    telephonyProvider: 'twilio',
    callOrigin: 'api',
    dispatchBatchId: new Types.ObjectId(),
    createdAt: at('2026-11-22T09:00:00.000Z'),
    updatedAt: at('2026-11-22T09:00:00.000Z'),
    ...fields,
  }).toObject() as PhoneCallDoc;

describe('the answer components of the OpenAPI document', () => {
  it('are exactly those the registry generates, next to the request bodies', () => {
    const generated = responseComponents();
    expect(Object.keys(generated)).toContain('PhoneCall');
    expect(Object.keys(doc.components.schemas).sort()).toEqual(
      [...REQUEST_COMPONENTS, ...Object.keys(generated)].sort(),
    );
    // Components, not documents of their own: no `$schema` or `$id` left by the generator.
    for (const [id, schema] of Object.entries(generated)) {
      expect(schema, id).not.toHaveProperty('$schema');
      expect(schema, id).not.toHaveProperty('$id');
    }
  });
});

describe('the views', () => {
  const full = callDoc({
    nameOfHuman: 'Grace',
    promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
    phoneNumberId: new Types.ObjectId(),
    toEmailAddress: 'grace@example.com',
    status: 'completed',
    telephonyProvider: 'telnyx',
    record: true,
    callDelayedUntil: at('2026-11-22T10:00:00.000Z'),
    calleeTimeZone: 'America/Chicago',
    phoneCallWebhooks: [{ url: 'https://example.com/hook', subscribedEvent: '*', secretSealed: 'sealed' }],
    resultValues: [
      { columnName: 'interested', value: 'yes' },
      { columnName: 'budget', value: '' },
    ],
    fileId: 'leads-2026-11',
    fileName: 'leads.csv',
    callTriggeredAt: at('2026-11-22T10:00:00.125Z'),
    callStartedAt: at('2026-11-22T10:00:04.500Z'),
    callEndedAt: at('2026-11-22T10:02:10.000Z'),
    statusExtraInfo: { statusCode: 'completed', dateTime: at('2026-11-22T10:02:10.000Z') },
    fixedMeetingTime: at('2026-11-25T15:30:00.000Z'),
    recordingUrl: 'http://localhost:3000/recordings/abcdefghijklmnopqrstuvwxyz012345.wav',
    callDuration: 125.5,
    callOrigin: 'file',
    customTagsHitOnCall: ['pricing'],
    attempts: [
      {
        attempt: 1,
        providerCallId: 'CA122',
        callTriggeredAt: at('2026-11-22T09:00:00.000Z'),
        callStartedAt: null,
        callEndedAt: at('2026-11-22T09:00:20.000Z'),
        status: 'busy',
        statusCode: 'busy',
      },
    ],
    providerCallId: 'CA123',
    calleeTimeZones: ['America/Chicago'],
  });

  it('read form: every field, in the order the API has always written them, and nothing internal', () => {
    const view = toReadView(full);
    expect(Object.keys(view)).toEqual([
      '_id',
      'teamId',
      'callTemplateId',
      'nameOfHuman',
      'toPhoneNumber',
      'promptVariableValues',
      'phoneNumberId',
      'fromPhoneNumber',
      'toEmailAddress',
      'status',
      'telephonyProvider',
      'record',
      'callDelayedUntil',
      'calleeTimeZone',
      'phoneCallWebhooks',
      'fileId',
      'fileName',
      'createdAt',
      'updatedAt',
      'resultValues',
      'callTriggeredAt',
      'callStartedAt',
      'callEndedAt',
      'statusExtraInfo',
      'fixedMeetingTime',
      'recordingUrl',
      'callDuration',
      'callOrigin',
      'customTagsHitOnCall',
      'attempts',
    ]);
    expect(view.phoneCallWebhooks).toEqual([{ url: 'https://example.com/hook', subscribedEvent: '*' }]);
    expectValid(phoneCallReadViewSchema, 'PhoneCall', view);
    expectRejected(phoneCallReadViewSchema, 'PhoneCall', { ...view, providerCallId: 'CA123' });
  });

  it('create form and a sparse read form leave out the keys without a value', () => {
    const sparse = callDoc({ status: 'queued' });
    const created = toCreateView(sparse);
    expect(Object.keys(created)).toEqual([
      '_id',
      'teamId',
      'callTemplateId',
      'toPhoneNumber',
      'promptVariableValues',
      'fromPhoneNumber',
      'status',
      'telephonyProvider',
      'record',
      'phoneCallWebhooks',
      'createdAt',
      'updatedAt',
    ]);
    expectValid(phoneCallCreateViewSchema, 'PhoneCallCreated', created);
    expectRejected(phoneCallCreateViewSchema, 'PhoneCallCreated', { ...created, status: 'ringing' });
    expectValid(phoneCallReadViewSchema, 'PhoneCall', toReadView(sparse));
  });

  it('webhook, transcript and error bodies', () => {
    const webhook = new Webhook({
      teamId: new Types.ObjectId(),
      url: 'https://example.com/hooks/calls',
      subscribedEvents: ['phoneCall.completed', 'transcript.created'],
      method: 'POST',
      secretSealed: 'sealed',
      createAt: at('2026-11-22T09:00:00.000Z'),
      updatedAt: at('2026-11-22T09:30:00.000Z'),
    }).toObject() as WebhookDoc;
    expectValid(webhookViewSchema, 'Webhook', toWebhookView(webhook));

    const transcript = new Transcript({
      teamId: new Types.ObjectId(),
      phoneCallId: new Types.ObjectId(),
      text: 'Hello, is this Grace?',
      speaker: 'agent',
      sequence: 0,
      createdAt: at('2026-11-22T10:00:05.000Z'),
      updatedAt: at('2026-11-22T10:00:05.000Z'),
    }).toObject() as TranscriptDoc;
    expectValid(transcriptViewSchema, 'Transcript', toTranscriptView(transcript));

    expectValid(errorBodySchema, 'Error', errorBody(400, ['toPhoneNumber must be a valid E.164 phone number']));
    expectRejected(errorBodySchema, 'Error', { ...errorBody(404, ['resource not found']), payload: { detail: 1 } });
  });
});

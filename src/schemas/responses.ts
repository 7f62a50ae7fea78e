// Response schemas: what every answer (and webhook delivery) of the API holds. The views are typed
// from them, the tests parse real answers with them, and the OpenAPI document's answer components
// are generated from `responseRegistry` (src/api/openapi.ts), so the three cannot drift apart.
import { z } from 'zod';
import { BATCH_ACTIONS } from '../contracts/batches';
import { CALL_STATUSES, STATUS_CODE_MEANINGS, STATUS_CODES, STATUS_MEANINGS } from '../contracts/call-status';
import { ALL_EVENTS, CALL_EVENT_NAMES } from '../contracts/events';
import { OBJECT_ID_HEX } from '../contracts/ids';
import { ANSWERED_BY } from '../contracts/machine-detection';
import { PROVIDERS } from '../contracts/providers';
import { DNC_SOURCES } from '../data/models/do-not-call-entry';
import { CALL_ORIGINS } from '../data/models/phone-call';

/**
 * The document's words for a schema: `id` names a component (`#/components/schemas/<id>`); fields
 * carry only a description. A registry of its own, so these ids never meet anyone else's.
 */
export const responseRegistry = z.registry<{ id?: string; description?: string }>();

function component<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  responseRegistry.add(schema as z.ZodType, description === undefined ? { id } : { id, description });
  return schema;
}
function described<T extends z.ZodType>(schema: T, description: string): T {
  responseRegistry.add(schema as z.ZodType, { description });
  return schema;
}
/** A `$ref` to a component with a description of its own (zod writes a clone of a component as a `$ref`). */
const describedRef = <T extends z.ZodType>(schema: T, description: string): T =>
  described(schema.clone() as T, description);

const text = (description: string) => described(z.string(), description);
const hexId = (description: string) => described(z.string().regex(new RegExp(`^${OBJECT_ID_HEX}$`)), description);
/** `Date.prototype.toISOString()`: UTC, milliseconds. */
const timestamp = (description: string) => described(z.iso.datetime({ precision: 3 }), description);
const e164 = (description: string) => described(z.string().regex(/^\+[1-9][0-9]{1,14}$/), description);
const count = (minimum: number, description: string) => described(z.int().min(minimum), description);

// ---------------------------------------------------------------------------------------------
// Shared

export const errorBodySchema = component(
  'Error',
  z.strictObject({
    error: z.strictObject({
      statusCode: described(z.int(), 'The HTTP status again.'),
      message: described(z.array(z.string()), 'One entry per problem, each naming the field and why.'),
      error: described(z.string(), 'The standard reason phrase of the status, e.g. `Bad Request`.'),
    }),
    payload: described(z.strictObject({}), 'Always empty.'),
  }),
  'The one error shape of the service.',
);

const callStatusSchema = component(
  'CallStatus',
  z.enum(CALL_STATUSES),
  `Status of a call:\n${CALL_STATUSES.map((s) => `- \`${s}\`: ${STATUS_MEANINGS[s]}`).join('\n')}`,
);

const statusCodeSchema = described(
  z.enum(STATUS_CODES),
  `Why the status was reached:\n${Object.entries(STATUS_CODE_MEANINGS)
    .map(([code, meaning]) => `- \`${code}\`: ${meaning}`)
    .join('\n')}`,
);

const telephonyProviderSchema = component(
  'TelephonyProvider',
  z.enum(PROVIDERS),
  'Telephony provider that carries a call.',
);

export const eventNameSchema = component(
  'EventName',
  z.enum([...CALL_EVENT_NAMES, ALL_EVENTS]),
  'A webhook event name, or `*` for every event.',
);

const promptVariableValueSchema = component(
  'PromptVariableValue',
  z.strictObject({ key: text('Prompt variable name.'), value: text('Its value.') }),
);

const envelope = <T extends z.ZodType>(data: T) => z.strictObject({ data });
const page = <T extends z.ZodType>(item: T) =>
  z.strictObject({
    data: z.array(item),
    nextCursor: described(z.string().nullable(), 'Pass as `cursor` for the next page; `null` on the last page.'),
  });

// ---------------------------------------------------------------------------------------------
// Phone calls

/** The fields both forms of a call share (src/data/phone-call-view.ts). */
const phoneCallFields = {
  _id: hexId('Unique ID of the call.'),
  teamId: hexId('Team the call belongs to.'),
  callTemplateId: hexId('Call template used.'),
  nameOfHuman: text('Name of the person called.').optional(),
  toPhoneNumber: e164('Number called, in E.164.'),
  promptVariableValues: described(z.array(promptVariableValueSchema), 'Prompt variable values given on create.'),
  phoneNumberId: hexId('Phone number of the team the call is made from, when one was given.').optional(),
  fromPhoneNumber: e164('Number the call is made from, in E.164.'),
  toEmailAddress: described(z.email(), 'E-mail address of the person called.').optional(),
  status: callStatusSchema,
  telephonyProvider: telephonyProviderSchema,
  record: described(z.boolean(), 'Whether the call is recorded.'),
  callDelayedUntil: timestamp('When the call is (or was) scheduled for, in UTC.').optional(),
  calleeTimeZone: text('The callee time zone given on create, if any.').optional(),
  phoneCallWebhooks: described(
    z.array(z.strictObject({ url: z.url(), subscribedEvent: eventNameSchema })),
    "The call's own webhooks; their secrets are never returned.",
  ),
  fileId: text('ID of the file the call was triggered from in bulk.').optional(),
  fileName: text('Name of that file.').optional(),
  createdAt: timestamp('Creation time (UTC, milliseconds).'),
  updatedAt: timestamp('Last change (UTC, milliseconds).'),
};

export const phoneCallCreateViewSchema = component(
  'PhoneCallCreated',
  z.strictObject({
    ...phoneCallFields,
    status: described(z.literal('queued'), 'Always `queued` right after creation.'),
  }),
  'A call as returned by create and batch create: the fields sent, normalised, with the defaults applied. ' +
    'Keys without a value are left out.',
);

const answeredBySchema = described(
  z.enum(ANSWERED_BY),
  "Who answered, as the provider's answering-machine detection decided (only when the call template's " +
    '`machineDetection` is on): `human`, `machine`, `fax`, or `unknown` (treated as a person: never hung up on).',
);

const callAttemptSchema = component(
  'CallAttempt',
  z.strictObject({
    attempt: count(1, 'Which attempt: 1 is the first dial.'),
    providerCallId: text("The provider's id for this attempt's call (absent when the dial was refused).").optional(),
    callTriggeredAt: timestamp('When this attempt was dialled.'),
    callStartedAt: timestamp('When it was answered.').optional(),
    callEndedAt: timestamp('When it ended.'),
    status: described(callStatusSchema.clone(), 'How it ended: a terminal status.'),
    statusCode: described(z.enum(STATUS_CODES), 'Why (a status code, e.g. `busy`, `declined`, `no-answer`).'),
    answeredBy: answeredBySchema.clone().optional(),
  }),
  'One dial attempt of a call.',
);

export const phoneCallReadViewSchema = component(
  'PhoneCall',
  z.strictObject({
    ...phoneCallFields,
    resultValues: described(
      z.array(
        z.strictObject({
          columnName: text('Result column of the template.'),
          value: text('What the conversation gave for it.'),
        }),
      ),
      'One entry per result column of the call template, filled by the time the status reads `completed` ' +
        '(`value` is empty when nothing was found).',
    ),
    callTriggeredAt: timestamp('When the provider was asked to dial.').optional(),
    callStartedAt: timestamp('When the call was answered.').optional(),
    callEndedAt: timestamp('When the call ended.').optional(),
    statusExtraInfo: described(
      z.strictObject({ statusCode: statusCodeSchema, dateTime: timestamp('When that status was reached.') }),
      'Short stable code of why the current status was reached, and when.',
    ).optional(),
    fixedMeetingTime: timestamp('A meeting time agreed in the conversation, if any.').optional(),
    recordingUrl: described(
      z.url(),
      'Set when `record` was true and the call was answered: an absolute URL with an unguessable token, ' +
        'fetchable without the API key, serving a WAV file.',
    ).optional(),
    callDuration: described(z.number().min(0), 'Seconds from answer to hang-up (may be fractional).').optional(),
    answeredBy: answeredBySchema.optional(),
    callOrigin: described(
      z.enum(CALL_ORIGINS),
      'How the call was created: `api` (POST /v1/phoneCalls), `batch` (POST /v1/phoneCalls/batch), ' +
        '`file` (a batch given `fileId` or `fileName`).',
    ),
    customTagsHitOnCall: described(
      z.array(z.string()),
      'Custom tags of the template whose trigger phrase occurs in the transcript (whoever spoke it); ' +
        'filled by `completed`. `optOut` when the callee asked not to be called again (the number is then on ' +
        "the team's do-not-call list).",
    ),
    attempts: described(
      z.array(callAttemptSchema),
      'Every dial attempt that has ended, oldest first: one for a call dialled once, more when the ' +
        "template's redial policy dialled again. Empty until the first attempt ends. The top-level fields " +
        'describe the last attempt.',
    ),
  }),
  'A call as returned by list, get and delete. Keys without a value (e.g. `callStartedAt` before an answer) ' +
    'are left out.',
);

component('PhoneCallCreatedResponse', envelope(phoneCallCreateViewSchema));
component(
  'PhoneCallBatchResponse',
  z.strictObject({
    data: described(z.array(phoneCallCreateViewSchema), 'The calls, in request order.'),
    batchId: hexId(
      'Id of this batch, for the batch controls (`POST /v1/phoneCalls/batch/{batchId}/pause`, `/resume`, `/cancel`).',
    ),
  }),
);

export const batchControlResultSchema = component(
  'BatchControlResult',
  z.strictObject({
    action: described(z.enum(BATCH_ACTIONS), 'What was asked.'),
    batchId: hexId('The batch, when addressed by `batchId`.').optional(),
    fileId: text('The file, when addressed by `fileId`.').optional(),
    calls: count(
      0,
      'Calls of the batch (or of every batch with that `fileId`; 0 for a file whose calls were all cancelled since).',
    ),
    changed: count(0, 'Queued calls this request paused, resumed or cancelled (a cancelled call is deleted).'),
    unchanged: count(0, 'Queued calls already in the state asked for (already paused; not paused, for resume).'),
    notQueued: count(
      0,
      'Calls that had begun dialling (their attempt goes on; a pause or cancel holds or stops their redials) or had ended.',
    ),
  }),
  'Counts of what a batch control did: calls = changed + unchanged + notQueued.',
);
component('BatchControlResponse', envelope(batchControlResultSchema));
component('PhoneCallResponse', envelope(phoneCallReadViewSchema));
component('PhoneCallList', page(phoneCallReadViewSchema));

// ---------------------------------------------------------------------------------------------
// Webhooks, voices, transcripts

const webhookFields = {
  _id: hexId('Unique ID of the webhook.'),
  teamId: hexId('Team the webhook belongs to.'),
  url: described(z.url(), 'Address notified.'),
  subscribedEvents: described(z.array(eventNameSchema), 'Event names subscribed to; `*` means every event.'),
  method: described(z.enum(['GET', 'POST']), 'HTTP method of the notification.'),
  createAt: timestamp('Creation time; the field is spelled `createAt` on webhooks.'),
  updatedAt: timestamp('Last change.'),
};

export const webhookViewSchema = component(
  'Webhook',
  z.strictObject(webhookFields),
  'A webhook; its secret is only shown in the create answer.',
);

export const webhookCreatedViewSchema = component(
  'WebhookCreated',
  z.strictObject({
    ...webhookFields,
    secret: described(
      z.string().regex(new RegExp('^whsec_(?:[A-Za-z0-9+/]{4}){8,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$')),
      'Signing secret: `whsec_` and standard padded base64 of at least 24 random bytes. Shown only here; store it.',
    ),
  }),
  'A new webhook, with its signing secret.',
);
component('WebhookCreatedResponse', envelope(webhookCreatedViewSchema));
component('WebhookResponse', envelope(webhookViewSchema));

export const voiceViewSchema = component(
  'Voice',
  z.strictObject({
    id: described(z.int(), 'Unique ID of the voice.'),
    voiceSampleUrl: described(
      z.url(),
      'Absolute URL with an unguessable token, fetchable without the API key, serving a WAV sample of the voice.',
    ),
    voiceName: text('Name of the voice.'),
    gender: text('Gender as given by the source; its letter case varies between records.'),
    isRecommended: described(z.boolean(), 'Whether the voice is recommended.'),
  }),
  'A synthetic voice of the catalogue.',
);
component('VoiceList', envelope(z.array(voiceViewSchema)));

export const transcriptViewSchema = component(
  'Transcript',
  z.strictObject({
    _id: hexId('Unique ID of the utterance.'),
    teamId: hexId('Team of the call.'),
    phoneCallId: hexId('Call the utterance belongs to.'),
    text: text('What was said.'),
    speaker: described(z.enum(['agent', 'human']), 'Who said it: the AI `agent` or the `human` called.'),
    createdAt: timestamp('When it was said; spoken order.'),
    updatedAt: timestamp('Last change.'),
  }),
  'One utterance of a call.',
);
component('TranscriptList', page(transcriptViewSchema));

// ---------------------------------------------------------------------------------------------
// Do-not-call list

export const doNotCallEntryViewSchema = component(
  'DoNotCallEntry',
  z.strictObject({
    _id: hexId('Unique ID of the entry.'),
    teamId: hexId('Team whose list it is on.'),
    phoneNumber: e164('The number never to be called, in E.164.'),
    reason: text('Why it was listed, as given (empty when none was).'),
    source: described(
      z.enum(DNC_SOURCES),
      'Who listed it: `api` (an API key, `keyId`), `cli` (an operator) or `callee` (the person asked on call ' +
        '`callId` not to be called again).',
    ),
    keyId: hexId('The API key that listed it (source `api`), else `null`.').nullable(),
    callId: hexId('The call on which the callee asked (source `callee`), else `null`.').nullable(),
    createdAt: timestamp('When it was listed.'),
  }),
  "A number on the team's do-not-call list: never dialled, and refused on create.",
);
export const doNotCallAddResultSchema = component(
  'DoNotCallAddResponse',
  z.strictObject({
    data: described(
      z.array(doNotCallEntryViewSchema),
      "Each number's entry, in request order, duplicates once: new, or the one it already had.",
    ),
    added: count(0, 'How many numbers were not listed before this request.'),
  }),
);
component('DoNotCallEntryResponse', envelope(doNotCallEntryViewSchema));
component('DoNotCallList', page(doNotCallEntryViewSchema));

export const webhookDeliveryViewSchema = component(
  'WebhookDelivery',
  z.strictObject({
    _id: hexId('Unique ID of the delivery: one event to one endpoint. Redeliver it by this id.'),
    teamId: hexId('Team of the call.'),
    phoneCallId: hexId('The call the event is about.'),
    webhookId: hexId("The team webhook it went to; `null` for one of the call's own `phoneCallWebhooks`.").nullable(),
    eventId: text("The event's `webhook-id` header: the same on every attempt and on a redelivery."),
    eventType: described(z.enum(CALL_EVENT_NAMES), 'The event.'),
    method: described(z.enum(['GET', 'POST']), 'How it was sent.'),
    url: text("Where it was sent (the endpoint's URL at the time)."),
    state: described(
      z.enum(['pending', 'delivered', 'failed', 'gone']),
      '`pending` while attempts (or a redelivery) go on, `delivered` on a 2xx, `failed` once the retry schedule ' +
        'ran out, `gone` when the receiver answered 410.',
    ),
    attempts: described(
      z.array(
        z.strictObject({
          attempt: count(1, 'Its number, counted across redeliveries.'),
          attemptedAt: timestamp('When it was sent.'),
          statusCode: described(z.int(), "The receiver's HTTP status; `null` when none came.").nullable(),
          durationMs: count(0, 'How long the receiver took to answer.'),
          error: text('What went wrong, when the attempt failed without a status or with one.').nullable(),
        }),
      ),
      'Every attempt, oldest first.',
    ),
    redeliveries: count(0, 'How many times an operator had it redelivered.'),
    createdAt: timestamp('When it was first attempted.'),
    updatedAt: timestamp('Last change.'),
  }),
  "One event sent to one of the call's webhook endpoints, with every attempt.",
);
component('WebhookDeliveryResponse', envelope(webhookDeliveryViewSchema));
component('WebhookDeliveryList', envelope(z.array(webhookDeliveryViewSchema)));

component(
  'WebhookEvent',
  z.discriminatedUnion('type', [
    described(
      z.strictObject({
        type: z.enum(CALL_EVENT_NAMES.filter((name) => name.startsWith('phoneCall.'))),
        timestamp: timestamp('When the event happened.'),
        data: describedRef(phoneCallReadViewSchema, 'The call in read form, as it is after the event.'),
      }),
      'A call event.',
    ),
    described(
      z.strictObject({
        type: z.literal('transcript.created'),
        timestamp: timestamp('When the call ended.'),
        data: z.strictObject({
          phoneCallId: hexId('The call.'),
          teamId: hexId('Its team.'),
          transcripts: described(z.array(transcriptViewSchema), 'Every utterance, in spoken order.'),
        }),
      }),
      "A call's transcript was stored.",
    ),
  ]),
  'The body of a POST delivery.',
);

// ---------------------------------------------------------------------------------------------
// Operations

export const healthSchema = component('Health', z.strictObject({ status: z.literal('ok') }));
export const readinessSchema = component(
  'Readiness',
  z.strictObject({
    status: z.enum(['ready', 'unavailable']),
    checks: described(
      z.record(z.string(), z.string()),
      "Each dependency (`mongodb`, `temporal`): `ok`, or `unreachable` (the reason is in the service's log, not here: this endpoint needs no key).",
    ),
  }),
);

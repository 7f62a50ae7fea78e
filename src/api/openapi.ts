// The OpenAPI 3.1 description of everything the service serves. Request bodies and the list query
// are generated from the zod schemas that validate them, answers from the zod schemas the views are
// typed by (src/schemas/responses.ts), so names, limits and required fields cannot drift from the code.
import { z } from 'zod';
import { CALL_STATUSES, STATUS_CODES, STATUS_MEANINGS } from '../contracts/call-status';
import { CALL_EVENT_NAMES } from '../contracts/events';
import { OBJECT_ID_HEX, OBJECT_ID_HEX_ANY_CASE } from '../contracts/ids';
import { PROVIDERS } from '../contracts/providers';
import { TIME_ZONE_NAME_PATTERN } from '../calling-hours/calling-window';
import { MAX_BATCH } from '../contracts/batches';
import { SCOPES, type Scope } from '../contracts/scopes';
import { API_KEY_HEADER } from './auth';
import { errorBody } from './errors';
import { CURSOR_PATTERN } from './pagination';
import { DATE_TIME_PATTERN, e164, httpUrl, isoDateTime, objectId } from '../schemas/common';
import { phoneCallBatchSchema, phoneCallCreateSchema, phoneCallListQuerySchema } from '../schemas/phone-calls';
import { eventNameSchema, responseRegistry } from '../schemas/responses';
import { webhookCreateSchema, webhookUpdateSchema } from '../schemas/webhooks';
import { doNotCallAddSchema, doNotCallListQuerySchema, MAX_DNC_ADD } from '../schemas/do-not-call';
import { MAX_DELIVERIES_PER_CALL } from '../data/models/webhook-delivery';
import { examples } from './openapi-examples';

export type JsonSchema = { [keyword: string]: unknown };
export type OpenApiDocument = { openapi: '3.1.0'; [field: string]: unknown };

const SECURITY_SCHEME = 'service-api-key';
const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});
const schemaRef = (name: string) => ref('schemas', name);

// ---------------------------------------------------------------------------------------------
// Request schemas, generated from zod

// The shared field validators are recognised by identity. For the piped ones (a string check, then
// a transform) it is their string stage that is matched, because `.refine()` and `.optional()` make
// new outer schemas but keep that stage. zod cannot express the case-insensitive id pattern, the
// phone number normalisation or the URL check, so those are written here.
/** A plus, then digits with the separators people write (the number's validity is checked beyond this). */
const PHONE_INPUT_PATTERN = '^\\s*\\+[0-9][0-9 ().-]{5,40}\\s*$';
const CURSOR_SCHEMA: JsonSchema = {
  type: 'string',
  pattern: CURSOR_PATTERN,
  description: 'Opaque: pass back the `nextCursor` of the previous page as it is.',
};

const FIELD_VALIDATORS = new Map<unknown, JsonSchema>([
  [
    objectId.in,
    { pattern: `^${OBJECT_ID_HEX_ANY_CASE}$`, description: 'A 24-character hex ObjectId (letter case is ignored).' },
  ],
  [
    e164.in,
    {
      pattern: PHONE_INPUT_PATTERN,
      description:
        'A phone number in E.164 form (`+14155552671`); spaces, dashes, dots and brackets are tolerated and ' +
        'removed. It must be a number that can exist (libphonenumber rules), which no pattern can say exactly. ' +
        'Stored and returned in E.164.',
      examples: ['+14155552671'],
    },
  ],
  [httpUrl, { format: 'uri', description: 'An absolute http or https URL.' }],
  [
    isoDateTime.in,
    {
      pattern: DATE_TIME_PATTERN,
      description:
        'An ISO 8601 date-time with an explicit offset or `Z`, e.g. `2026-11-22T10:00:00Z`; the day must exist ' +
        'in its month.',
    },
  ],
]);

function fromZod(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    override: (ctx) => {
      const extra = FIELD_VALIDATORS.get(ctx.zodSchema);
      if (extra) Object.assign(ctx.jsonSchema, extra);
    },
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/**
 * Merges documentation into the generated schema at `path` (`a.b` for nested properties, `a[]` for
 * array items). A path the schema does not have throws, so a renamed field cannot leave stale docs.
 */
function annotate(schema: JsonSchema, docs: Record<string, JsonSchema>): JsonSchema {
  for (const [path, extra] of Object.entries(docs)) {
    let node: JsonSchema | undefined = schema;
    for (const segment of path === '' ? [] : path.split('.')) {
      node = (node?.properties as Record<string, JsonSchema> | undefined)?.[segment.replace(/\[\]$/, '')];
      if (node && segment.endsWith('[]')) node = node.items as JsonSchema | undefined;
    }
    if (!node) throw new Error(`OpenAPI: the generated schema has no ${path}`);
    Object.assign(node, extra);
  }
  return schema;
}

const EVENT_NAMES_OR_ALL = eventNameSchema.options;

function phoneCallCreateRequest(): JsonSchema {
  return annotate(fromZod(phoneCallCreateSchema), {
    '': {
      description:
        'One call to place. Unknown fields are rejected with 400. `callTemplateId` and `phoneNumberId` must ' +
        'exist and belong to the team (else 400 naming the field).',
    },
    teamId: { description: 'ID of the team the call belongs to; must be the team of the API key (else 403).' },
    callTemplateId: {
      description:
        'ID of the call template used; it holds the prompt, the required prompt variables, the custom tags and ' +
        'the result columns.',
    },
    nameOfHuman: { description: 'Name of the person being called.' },
    toPhoneNumber: {
      description: 'Number the call is made to. Normalised to E.164 (spaces, dashes and brackets are removed).',
      examples: ['+14155552671'],
    },
    promptVariableValues: {
      uniqueItems: true,
      description:
        'Values for the prompt variables of the template (`{{name}}` in its prompt). Every variable the template ' +
        'declares as required must be given, with a value that is not empty; a variable it does not require may be ' +
        'given empty (it is left out of the prompt). Unknown or duplicate keys are 400.',
    },
    'promptVariableValues[].key': { description: 'Name of a prompt variable of the template.' },
    'promptVariableValues[].value': { description: 'Its value for this call.' },
    phoneNumberId: {
      description:
        "ID of one of the team's phone numbers. The call is made from it when it belongs to the call's provider " +
        "(`telephonyProvider`, else the team's default provider), which it does not choose.",
    },
    fromPhoneNumber: {
      description:
        "Number to call from. Default: the number behind `phoneNumberId` when it belongs to the call's provider, " +
        "else a number from the team's settings for that provider.",
    },
    toEmailAddress: { description: 'E-mail address of the person called.' },
    status: { description: 'Only `queued` is accepted; it is the default.' },
    telephonyProvider: {
      description:
        "Provider that carries the call. Default: the team's provider setting (not the provider of `phoneNumberId`).",
    },
    record: {
      description: 'Whether the call is recorded. Default `false`. A recorded, answered call gets a `recordingUrl`.',
      default: false,
    },
    callDelayedUntil: {
      description:
        'Places the call at this time (stored in UTC). A time in the past, or now, places the call at once; more ' +
        'than 365 days ahead is 400.',
      examples: ['2026-11-22T10:00:00.000Z'],
    },
    phoneCallWebhooks: {
      description:
        "Addresses notified of this call's events, in addition to the team's webhooks. Each is delivered with " +
        'POST and signed with its own `secret`.',
    },
    calleeTimeZone: {
      description:
        "The callee's IANA time zone (e.g. `America/Chicago`), for the call template's calling hours. " +
        "Default: the zones of `toPhoneNumber` (libphonenumber's geographic data; where a number maps to " +
        "several zones, only hours open in all of them count), else the template's zone. " +
        'A template whose hours can never be open in all of those zones at once within a year is 400 naming ' +
        '`toPhoneNumber` (or `calleeTimeZone`). A meeting time the callee names is read in this zone too ' +
        "(default: the number's zone when it has exactly one, else the template's). Any name of the IANA " +
        'database is taken, links and `Etc/GMT+5` included (not an offset such as `+05:00`); an unknown one is 400.',
      examples: ['America/Chicago'],
      pattern: TIME_ZONE_NAME_PATTERN,
    },
    'phoneCallWebhooks[].url': {
      description:
        'Address to notify (absolute http or https URL). Loopback, private, link-local and metadata addresses ' +
        'are refused (400) unless the operator allows them.',
    },
    'phoneCallWebhooks[].subscribedEvent': {
      enum: EVENT_NAMES_OR_ALL,
      description: 'One event name, or `*` for every event of the call.',
    },
    'phoneCallWebhooks[].secret': {
      description:
        'Signing secret of this entry. A `whsec_`-prefixed secret must continue with padded standard base64 and ' +
        'is decoded as Standard Webhooks says; any other string is used as its UTF-8 bytes. Never returned.',
    },
  });
}

function phoneCallBatchRequest(): JsonSchema {
  return annotate(fromZod(phoneCallBatchSchema), {
    '': { description: 'Up to 10,000 calls, validated all together: if any element is invalid nothing is created.' },
    phoneCalls: { description: `1 to ${MAX_BATCH.toLocaleString('en-US')} calls, each as in \`POST /v1/phoneCalls\`.` },
    'phoneCalls[]': schemaRef('PhoneCallCreateRequest'),
    fileId: {
      description:
        'ID of the file the calls were triggered from; recorded on every call, whose `callOrigin` is then `file`.',
    },
    fileName: { description: 'Name of that file; recorded on every call, whose `callOrigin` is then `file`.' },
  });
}

function webhookCreateRequest(): JsonSchema {
  return annotate(fromZod(webhookCreateSchema), {
    teamId: { description: 'Team the webhook belongs to; must be the team of the API key (else 403).' },
    url: {
      description:
        'Address to notify. Addresses resolving to loopback, private, link-local or metadata ranges are refused ' +
        '(400) unless the operator allows them.',
    },
    subscribedEvents: {
      description: 'Event names to be notified of (duplicates are dropped); `*` subscribes to every event.',
    },
    'subscribedEvents[]': { enum: EVENT_NAMES_OR_ALL },
    method: {
      description:
        'HTTP method of the notification. POST sends the event as a JSON body; GET sends its main fields as ' +
        'query parameters.',
    },
  });
}

function webhookUpdateRequest(): JsonSchema {
  return annotate(fromZod(webhookUpdateSchema), {
    '': {
      minProperties: 1,
      description:
        'Any non-empty subset of `url`, `subscribedEvents`, `method`. An empty body or any other field is 400.',
    },
    url: { description: 'New address to notify (same rules as on create).' },
    subscribedEvents: { description: 'New list of event names (replaces the old one).' },
    'subscribedEvents[]': { enum: EVENT_NAMES_OR_ALL },
    method: { description: 'New HTTP method of the notification.' },
  });
}

type ParameterDocs = Record<string, { description: string; schema?: JsonSchema }>;

/** The phone call list's query parameters. */
function phoneCallListParameters(): JsonSchema[] {
  return queryParameters('the phone call list', phoneCallListQuerySchema, {
    callTemplateId: { description: 'Only calls made with this call template.' },
    phoneNumberId: { description: 'Only calls made from this phone number of the team.' },
    createdAfter: {
      description: 'Only calls created strictly after this ISO 8601 date-time (offset or `Z` required).',
    },
    createdBefore: {
      description: 'Only calls created strictly before this ISO 8601 date-time (offset or `Z` required).',
    },
    toPhoneNumber: {
      description: 'Only calls made to this number, normalised like on create. Encode the leading `+` as `%2B`.',
    },
    status: {
      description: 'Only calls in this status. `canceled` is accepted as another spelling of `cancelled`.',
      schema: { type: 'string', enum: [...CALL_STATUSES, 'canceled'] },
    },
    fileId: { description: 'Only calls of a batch triggered from this file.' },
    limit: { description: 'Page size, 1 to 1000.' },
    cursor: PAGE_CURSOR_DOCS,
  });
}

/** The do-not-call list's query parameters. */
function doNotCallListParameters(): JsonSchema[] {
  return queryParameters('the do-not-call list', doNotCallListQuerySchema, {
    phoneNumber: {
      description: 'Only the entry of this number (normalised like on create). Encode the leading `+` as `%2B`.',
    },
    limit: { description: 'Page size, 1 to 1000.' },
    cursor: PAGE_CURSOR_DOCS,
  });
}

function doNotCallAddRequest(): JsonSchema {
  return annotate(fromZod(doNotCallAddSchema), {
    '': { description: "Numbers to put on the team's do-not-call list." },
    teamId: { description: 'Team whose list it is; must be the team of the API key (else 403).' },
    entries: {
      description: `1 to ${MAX_DNC_ADD.toLocaleString('en-US')} numbers; a number given twice is listed once.`,
    },
    'entries[].reason': { description: 'Why the number is listed (who asked, where); shown on the entry.' },
  });
}

const PAGE_CURSOR_DOCS = {
  description: 'The `nextCursor` of the previous page; leave out for the first page.',
  schema: CURSOR_SCHEMA,
};

/** One query parameter per field of the zod schema that validates the query; each must be documented. */
function queryParameters(what: string, schema: z.ZodType, docs: ParameterDocs): JsonSchema[] {
  const query = fromZod(schema);
  const properties = query.properties as Record<string, JsonSchema>;
  const required = new Set((query.required as string[] | undefined) ?? []);
  for (const name of Object.keys(docs)) {
    if (!(name in properties)) throw new Error(`OpenAPI: the query of ${what} has no ${name}`);
  }
  return Object.entries(properties).map(([name, schema]) => {
    const doc = docs[name];
    if (!doc) throw new Error(`OpenAPI: the query parameter ${name} of ${what} is not documented`);
    return {
      name,
      in: 'query',
      required: required.has(name),
      description: doc.description,
      schema: doc.schema ?? schema,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Answer schemas, generated from zod

/**
 * Every component of `responseRegistry` (src/schemas/responses.ts), with `$ref`s between them. zod
 * writes its own regular expression beside a string `format` and the safe-integer range on every
 * integer; the document states the format and the type alone.
 */
export function responseComponents(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(responseRegistry, {
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
    metadata: responseRegistry,
    override: ({ jsonSchema }) => {
      if (jsonSchema.format) delete jsonSchema.pattern;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  });
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return schemas as Record<string, JsonSchema>;
}

// ---------------------------------------------------------------------------------------------
// Responses, parameters, headers

const JSON_TYPE = 'application/json';
const requestIdHeader = { 'X-Request-Id': ref('headers', 'X-Request-Id') };

const jsonResponse = (
  description: string,
  schema: JsonSchema,
  { headers = {}, example }: { headers?: Record<string, unknown>; example?: unknown } = {},
) => ({
  description,
  headers: { ...requestIdHeader, ...headers },
  content: { [JSON_TYPE]: { schema, ...(example === undefined ? {} : { example }) } },
});

const ERROR_RESPONSES: Record<number, { name: string; description: string; example: string }> = {
  400: {
    name: 'BadRequest',
    description:
      'Invalid input: a body or query field fails validation (each `message` entry names the field), an unknown ' +
      'field, malformed JSON, or a rule of the operation (see its description).',
    example: 'toPhoneNumber must be a valid E.164 phone number',
  },
  401: {
    name: 'Unauthorized',
    description: 'The `service-api-key` header is missing, or the key is unknown, revoked or expired.',
    example: 'the service-api-key header is missing',
  },
  403: {
    name: 'Forbidden',
    description: 'The key lacks the scope of the operation, or a body `teamId` is not the team of the key.',
    example: 'the API key lacks the calls:write scope',
  },
  404: {
    name: 'NotFound',
    description:
      'No such resource for the team of the key (resources of other teams are not revealed), or a malformed id ' +
      'in the path.',
    example: 'resource not found',
  },
  408: {
    name: 'RequestTimeout',
    description: 'The request did not arrive in time: its headers within 20 s, the whole of it within 5 minutes.',
    example: 'the request took too long to arrive',
  },
  409: {
    name: 'Conflict',
    description:
      'A retry with the `Idempotency-Key` of a create whose request ended before answering, when the call it ' +
      'created has been deleted since: nothing is created again, and later retries get the same answer.',
    example: 'the call created with this Idempotency-Key was deleted since; nothing was created again',
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'The request body is larger than the configured limit.',
    example: 'request body is too large',
  },
  415: {
    name: 'UnsupportedMediaType',
    description: 'A request body that is not `application/json`.',
    example: 'content-type must be application/json',
  },
  431: {
    name: 'RequestHeaderFieldsTooLarge',
    description: "The request's headers are larger than the server takes (16 KiB in all).",
    example: 'request headers are too large',
  },
  429: {
    name: 'TooManyRequests',
    description:
      'Retry after `Retry-After` seconds: the API key went over its rate limit (see "Limits" in the ' +
      'description), or a request with the same `Idempotency-Key` was still being processed after a 10 s wait, ' +
      'or a retry with its `Idempotency-Key` took a stalled create over (retried with that key, it gets the answer).',
    example: 'rate limit exceeded: this API key may send 600 requests per second; retry after 1 s',
  },
  500: {
    name: 'InternalServerError',
    description: 'Server failure; no details are exposed. Safe to retry with the same `Idempotency-Key`.',
    example: 'internal error',
  },
};

function errorResponses(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([status, { name, description, example }]) => [
      name,
      {
        description,
        headers: { ...requestIdHeader, ...(status === '429' ? { 'Retry-After': ref('headers', 'Retry-After') } : {}) },
        content: { [JSON_TYPE]: { schema: schemaRef('Error'), example: errorBody(Number(status), [example]) } },
      },
    ]),
  );
}

const errorRefs = (statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [String(status), ref('responses', ERROR_RESPONSES[status]!.name)]));

const V1_ERRORS = [400, 401, 403, 404, 408, 429, 431, 500];
/** Every POST and PATCH: the body is read (and must be JSON if any is sent) even where none is needed. */
const V1_BODY_ERRORS = [...V1_ERRORS, 413, 415];

const securityFor = (scope: Scope) => [{ [SECURITY_SCHEME]: [scope] }];

function jsonBody(schemaName: string, example: unknown) {
  return { required: true, content: { [JSON_TYPE]: { schema: schemaRef(schemaName), example } } };
}

// ---------------------------------------------------------------------------------------------
// The document

const API_TITLE = 'Outbound AI Phone Call Service';
const API_VERSION = '1.0.0';

/** Inline code spans, comma-separated: `a`, `b`. */
const codeList = (values: readonly string[]) => values.map((value) => `\`${value}\``).join(', ');

const DESCRIPTION = [
  'Places automated AI phone calls for a team, stores their results and transcripts, ' +
    'and notifies webhooks of call events.',
  '',
  '## Authentication',
  `Every \`/v1\` request carries the header \`${API_KEY_HEADER}\`. ` +
    `A key belongs to one team and has scopes (${codeList(SCOPES)}); each operation names the scope it needs. ` +
    'A missing, unknown, revoked or expired key is 401; a key without the scope is 403; ' +
    'a body `teamId` of another team is 403; a resource of another team is 404.',
  '',
  '## Conventions',
  '- JSON in and out (`application/json; charset=utf-8`); success bodies are `{"data": ...}`; ' +
    'lists add `nextCursor`.',
  '- Unknown body fields are 400 (an operation that takes no body names any field sent), and so are unknown ' +
    'query parameters of the operations that take query parameters (the lists), so typos never pass silently; ' +
    'an operation without query parameters ignores a query string (a cache-busting `?_=` stays harmless).',
  '- Timestamps are ISO 8601 UTC with milliseconds (`2026-11-22T10:00:00.000Z`); ' +
    'ids are 24-hex ObjectIds and a malformed id in a path is 404.',
  '- Every answer carries `X-Request-Id` (the one sent, if well formed, else a new one).',
  '- Every error of the API has the shape of the `Error` schema (`payload` is always empty); ' +
    'a method a path does not serve is 405 in that shape, with `Allow` naming the ones it does ' +
    '(and `OPTIONS` answers 204 with `Allow`). Only the provider callbacks answer some errors as plain text.',
  '- No string, in a body or a query, may contain the NUL character (U+0000): ' +
    'such a request is 400 naming the field.',
  '',
  '## Pagination',
  'Lists are pages of `limit` items (1-1000, default 100). ' +
    "Pass the answer's `nextCursor` as `cursor` to read the next page; `nextCursor` is `null` on the last one. " +
    'Cursors are opaque, and pages stay consistent while new records are written. One exception: the ' +
    "transcripts of a whole team are listed by when each utterance was spoken, and a call's are written when " +
    'it ends, so a walk through all of them can miss those of a call that ended after the walk passed their ' +
    "time; a walk by `phoneCallId` is consistent (a call's transcript is written whole as its attempt ends).",
  '',
  '## Call statuses',
  ...CALL_STATUSES.map((s) => `- \`${s}\`: ${STATUS_MEANINGS[s]}`),
  '',
  'Transitions: queued → ringing → inProgress → completed; ringing → busy | noAnswer | failed; ' +
    "ringing → queued (or queued → queued after a refused dial) when the template's redial policy dials an " +
    'unanswered call again (status code `waiting-to-redial`; every attempt is in `attempts`); ' +
    'inProgress → failed; inProgress → noAnswer when machine detection hung up on an answering machine ' +
    '(status code `answering-machine`), or → queued when the redial policy dials it again; queued → failed; ' +
    'queued | ringing | inProgress → cancelled. ' +
    'A terminal status never changes. The service spells `cancelled`; the list filter also accepts `canceled`. ' +
    `\`statusExtraInfo.statusCode\` tells why a status was reached: ${codeList(Object.values(STATUS_CODES))}.`,
  '',
  '## Answering machines',
  "A call template's `machineDetection` setting (made with the admin CLI: `template create " +
    "--machine-detection off|hangUp|leaveMessage [--voicemail-message TEXT]`) asks the call's provider to tell " +
    'a person from a machine. `off` (the default): a greeting is taken for a person. `hangUp`: a machine or fax ' +
    'is hung up on; the call ends `noAnswer` with `answering-machine` (a redial policy on `noAnswer` dials it ' +
    "again). `leaveMessage`: after the machine's greeting the template's voicemail message (its prompt variables " +
    'filled) is spoken and the call ends `completed` with `voicemail-left`; a fax is hung up on. `answeredBy` ' +
    'says who answered (`human`, `machine`, `fax`, `unknown`); a call the detector is unsure of is treated as a ' +
    "person's. A machine's greeting is never stored as the callee's words: a call answered by a machine keeps " +
    'only the message left (if any) as its transcript, and has no results, tags or meeting time.',
  '',
  '## Idempotency',
  '`POST /v1/phoneCalls` and `POST /v1/phoneCalls/batch` accept an `Idempotency-Key` header (1-255 characters). ' +
    'A retry with the same key and the same body within 24 hours gets the first answer ' +
    '(with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is 400; ' +
    'while the first request is still running, the retry waits up to 10 s for its answer, ' +
    'then gets 429 with `Retry-After`. If the first request ended without an answer (its API process stopped), ' +
    'a retry 15 s or more after it gets the calls it created as they were created (`status` `queued`), even ' +
    'if they were dialled since; a batch leaves out calls deleted since, and a single create whose call was ' +
    'deleted since gets 409. A first request that stalled past its 15 s lease while a retry took its key ' +
    'over starts nothing and gets 429; the retry answers for the key. Nothing is created twice.',
  '',
  '## Limits',
  'Each API key may send a burst of `RATE_LIMIT_BURST` requests within any one second (600 by default) and ' +
    '`RATE_LIMIT_PER_SECOND` requests per second sustained over each minute (300 by default, 18,000 a minute), ' +
    'counted across all API processes; past either, `/v1` answers 429 with `Retry-After` (seconds until the ' +
    'window ends) before reading the body. A client that polls, or sends batches one after another, never ' +
    'meets these defaults. Request bodies are limited to `REQUEST_BODY_LIMIT` (20 MB by default; 413), a batch ' +
    `to ${MAX_BATCH} calls, strings and arrays to the lengths their schemas give (400 names the field); a ` +
    'request has 5 minutes in all (a batch of 10,000 takes well under that).',
  '',
  '## Webhooks',
  "A team's webhooks and a call's `phoneCallWebhooks` are notified of call events: " +
    `${codeList(CALL_EVENT_NAMES)}; \`*\` subscribes to all. ` +
    '`phoneCall.<status>` is sent when a call reaches that status, ' +
    "`phoneCall.deleted` when a queued call is deleted, `transcript.created` once a call's transcript is stored. " +
    'Deliveries follow Standard Webhooks (https://www.standardwebhooks.com): ' +
    'headers `webhook-id` (unique per event, the same on every retry), `webhook-timestamp` (unix seconds) ' +
    'and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{content}`, ' +
    'keyed with the base64-decoded part of the secret after `whsec_`). ' +
    '`content` is the raw POST body, or for GET the query string as sent without the leading `?`. ' +
    'Any 2xx within 15 s is success; otherwise the delivery is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h ' +
    'and 10 h, then given up; 410 Gone stops the retries. Delivery is at least once: deduplicate on `webhook-id`. ' +
    'See the `webhooks` section for the payloads.',
].join('\n');

export function buildOpenApiDocument(publicBaseUrl: string): OpenApiDocument {
  const baseUrl = publicBaseUrl.replace(/\/+$/, '');
  const ex = examples(baseUrl, { title: API_TITLE, version: API_VERSION });
  const idempotencyKey = ref('parameters', 'Idempotency-Key');
  const created = (schema: string, example: unknown) =>
    jsonResponse('Created.', schemaRef(schema), {
      headers: { 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') },
      example,
    });
  const ok = (schema: string, example: unknown, description = 'OK.') =>
    jsonResponse(description, schemaRef(schema), { example });
  const publicOperation = { security: [] as unknown[] };

  const wavResponse = (description: string, cacheControl: string) => ({
    description,
    headers: { ...requestIdHeader, 'Cache-Control': { schema: { type: 'string', examples: [cacheControl] } } },
    content: { 'audio/wav': { schema: { type: 'string', contentMediaType: 'audio/wav' } } },
  });

  return {
    openapi: '3.1.0',
    info: {
      title: API_TITLE,
      version: API_VERSION,
      description: DESCRIPTION,
    },
    servers: [{ url: baseUrl }],
    security: [{ [SECURITY_SCHEME]: [] }],
    tags: [
      { name: 'Phone calls', description: 'Create, list, read and delete calls.' },
      {
        name: 'Campaigns',
        description:
          'A batch is a campaign: pause, resume or cancel its queued calls. Calls are also paced per team (a ' +
          'live-call cap and dials per second per provider account, set by operators) and placed only within ' +
          "their template's calling hours in the callee's time zone; a call waiting for either stays `queued` " +
          'with status code `waiting-for-slot` or `waiting-for-calling-window`.',
      },
      {
        name: 'Do-not-call list',
        description:
          'Numbers a team must never call. A listed number is refused on create (400 naming `toPhoneNumber`) ' +
          'and checked again right before every dial: a call whose number was listed after create ends ' +
          '`failed` with status code `do-not-call`, never rung. A callee who asks on a call not to be called ' +
          "again is listed automatically (source `callee`) and the call's `customTagsHitOnCall` gains `optOut`.",
      },
      { name: 'Webhooks', description: "A team's event notifications." },
      { name: 'Voices', description: 'The catalogue of synthetic voices.' },
      { name: 'Transcripts', description: 'What was said on calls, one record per utterance.' },
      { name: 'Media', description: 'Audio files linked from calls and voices; no API key, the URL is the secret.' },
      { name: 'Operations', description: 'Health checks and this document; no API key.' },
      {
        name: 'Provider callbacks',
        description:
          "For telephony providers only, not for API clients: status callbacks authenticated by the provider's " +
          'own signature.',
      },
    ],
    paths: {
      '/v1/phoneCalls': {
        post: {
          tags: ['Phone calls'],
          operationId: 'createPhoneCall',
          summary: 'Create a call',
          description:
            'Queues one call, at once or for `callDelayedUntil`. Needs `calls:write`. 400 for invalid fields, an ' +
            'unknown or foreign `callTemplateId`/`phoneNumberId`, missing required or unknown prompt variables, ' +
            "a `toPhoneNumber` on the team's do-not-call list, an opening line or voicemail message (the template " +
            "filled with the values) past its provider's limit (Twilio: 4,000 characters of TwiML; Vonage: 1,500 " +
            'characters per `talk`; Telnyx: 3,000 per `speak`), a provider the team has no credentials for, a team ' +
            'with no number to call from, or an `Idempotency-Key` reused with another body.',
          security: securityFor('calls:write'),
          parameters: [idempotencyKey],
          requestBody: jsonBody('PhoneCallCreateRequest', ex.createCall),
          responses: {
            '201': created('PhoneCallCreatedResponse', ex.callCreated),
            ...errorRefs([...V1_BODY_ERRORS, 409]),
          },
        },
        get: {
          tags: ['Phone calls'],
          operationId: 'listPhoneCalls',
          summary: 'List calls',
          description:
            "The calls of the key's team, newest first (`createdAt` descending, then `_id` descending), filtered " +
            'by the query. Needs `calls:read`. Unknown parameters or bad values are 400.',
          security: securityFor('calls:read'),
          parameters: phoneCallListParameters(),
          responses: { '200': ok('PhoneCallList', ex.callList), ...errorRefs(V1_ERRORS) },
        },
      },
      '/v1/phoneCalls/batch': {
        post: {
          tags: ['Phone calls'],
          operationId: 'createPhoneCallBatch',
          summary: 'Create calls in bulk',
          description:
            'Creates 1 to 10,000 calls, all or nothing: if any element is invalid nothing is created and the 400 ' +
            'lists every problem prefixed by its index (`phoneCalls.3.toPhoneNumber ...`), and any problem of ' +
            'the envelope; an element of another team is 403 when that is the only problem (beside others, the ' +
            '400 lists it too). The answer lists the calls in request order. `callOrigin` is `batch`, or `file` when ' +
            '`fileId` or `fileName` is given. A `fileId` whose file was paused starts its calls paused; one ' +
            'whose file was cancelled is 400, nothing created, until the file is resumed. Needs `calls:write`.',
          security: securityFor('calls:write'),
          parameters: [idempotencyKey],
          requestBody: jsonBody('PhoneCallBatchRequest', ex.createBatch),
          responses: { '201': created('PhoneCallBatchResponse', ex.batchCreated), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/phoneCalls/{id}': {
        parameters: [ref('parameters', 'PhoneCallId')],
        get: {
          tags: ['Phone calls'],
          operationId: 'getPhoneCall',
          summary: 'Get a call',
          description: 'Needs `calls:read`.',
          security: securityFor('calls:read'),
          responses: { '200': ok('PhoneCallResponse', ex.call), ...errorRefs(V1_ERRORS) },
        },
        delete: {
          tags: ['Phone calls'],
          operationId: 'deletePhoneCall',
          summary: 'Delete a queued call',
          description:
            'Only while the call is `queued`: stops its workflow and removes it, so it never rings and a later ' +
            'GET is 404. Answers the call as it was (status `queued`) and sends `phoneCall.deleted`. ' +
            'A call no longer queued (including one being dialled at that moment) is 400, ' +
            '`only queued calls can be deleted; status is <status>`. A call whose creating request is still ' +
            'writing its batch is 400 too, saying to try again in a moment; one whose creating request died ' +
            'before writing its whole batch is 400, as that call is dialled only if the request is retried. ' +
            'Needs `calls:write`.',
          security: securityFor('calls:write'),
          responses: {
            '200': ok('PhoneCallResponse', ex.callDeleted, 'Deleted; the call as it was.'),
            ...errorRefs(V1_ERRORS),
          },
        },
      },
      '/v1/phoneCalls/batch/{batchId}/pause': {
        parameters: [ref('parameters', 'BatchId')],
        post: {
          tags: ['Campaigns'],
          operationId: 'pausePhoneCallBatch',
          summary: 'Pause a batch',
          description:
            'Pauses a batch. Its queued calls wait (status `queued`, status code `paused`) until resumed; calls ' +
            'already dialling go on, and a redial their policy makes waits until resumed. A paused call past its ' +
            '`callDelayedUntil` is dialled only after resume. ' +
            "Answers counts. No body. Needs `calls:write`; a batch or file with no call of the key's team is 404.",
          security: securityFor('calls:write'),
          responses: { '200': ok('BatchControlResponse', ex.batchControl('pause')), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/phoneCalls/batch/{batchId}/resume': {
        parameters: [ref('parameters', 'BatchId')],
        post: {
          tags: ['Campaigns'],
          operationId: 'resumePhoneCallBatch',
          summary: 'Resume a batch',
          description:
            'Resumes a batch. Its paused calls queue for a dial slot again, at the back of the queue (in ' +
            'creation order among themselves). Answers counts. No body. Needs `calls:write`; a batch or file ' +
            "with no call of the key's team is 404.",
          security: securityFor('calls:write'),
          responses: { '200': ok('BatchControlResponse', ex.batchControl('resume')), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/phoneCalls/batch/{batchId}/cancel': {
        parameters: [ref('parameters', 'BatchId')],
        post: {
          tags: ['Campaigns'],
          operationId: 'cancelPhoneCallBatch',
          summary: 'Cancel a batch',
          description:
            'Cancels a batch. Every call of it that has not begun dialling is deleted, ' +
            'exactly as `DELETE /v1/phoneCalls/{id}` deletes one (each sends `phoneCall.deleted` and reads 404 ' +
            'afterwards); calls already dialling go on and are never dialled again by their redial policy, ended ' +
            'ones are left alone. Answers counts. No body. Needs `calls:write`; a batch or file with no call of the ' +
            "key's team is 404.",
          security: securityFor('calls:write'),
          responses: { '200': ok('BatchControlResponse', ex.batchControl('cancel')), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/phoneCalls/file/{fileId}/pause': {
        parameters: [ref('parameters', 'FileId')],
        post: {
          tags: ['Campaigns'],
          operationId: 'pausePhoneCallFile',
          summary: 'Pause every batch created with a fileId',
          description:
            'Pauses every batch created with a `fileId`. Its queued calls wait (status `queued`, status code ' +
            '`paused`) until resumed; calls already dialling go on, and a redial their policy makes waits until resumed. A ' +
            'paused call past its `callDelayedUntil` is ' +
            'dialled only after resume. The pause is kept with the file: the calls of batches created with ' +
            'this `fileId` afterwards (an import still sending its chunks) start paused too, until resumed. ' +
            'Answers counts. No body. Needs `calls:write`; a batch or file with no ' +
            "call of the key's team is 404.",
          security: securityFor('calls:write'),
          responses: { '200': ok('BatchControlResponse', ex.fileControl('pause')), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/phoneCalls/file/{fileId}/resume': {
        parameters: [ref('parameters', 'FileId')],
        post: {
          tags: ['Campaigns'],
          operationId: 'resumePhoneCallFile',
          summary: 'Resume every batch created with a fileId',
          description:
            'Resumes every batch created with a `fileId`. Its paused calls queue for a dial slot again, at the ' +
            'back of the queue (in creation order among themselves). Batches created with this `fileId` ' +
            'afterwards are dialled as usual again (after a cancel too). Answers counts. No body. Needs ' +
            "`calls:write`; a file with no call of the key's team is 404, unless it was paused or cancelled.",
          security: securityFor('calls:write'),
          responses: { '200': ok('BatchControlResponse', ex.fileControl('resume')), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/phoneCalls/file/{fileId}/cancel': {
        parameters: [ref('parameters', 'FileId')],
        post: {
          tags: ['Campaigns'],
          operationId: 'cancelPhoneCallFile',
          summary: 'Cancel every batch created with a fileId',
          description:
            'Cancels every batch created with a `fileId`. Every call of it that has not begun dialling is ' +
            'deleted, exactly as `DELETE /v1/phoneCalls/{id}` deletes one (each sends `phoneCall.deleted` and ' +
            'reads 404 afterwards); calls already dialling go on and are never dialled again by their redial ' +
            'policy, ended ones are left alone. The cancel is kept with the file: a batch created with this ' +
            '`fileId` afterwards (an import still sending its chunks) is refused with 400, none of its calls ' +
            'made, until the file is resumed. Answers counts. No body. Needs `calls:write`; a batch or file with ' +
            "no call of the key's team is 404.",
          security: securityFor('calls:write'),
          responses: { '200': ok('BatchControlResponse', ex.fileControl('cancel')), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/doNotCall': {
        get: {
          tags: ['Do-not-call list'],
          operationId: 'listDoNotCall',
          summary: 'List the do-not-call list',
          description:
            "The numbers on the key's team's list, newest first (`createdAt` descending, then `_id` descending). " +
            'Needs `dnc:read`.',
          security: securityFor('dnc:read'),
          parameters: doNotCallListParameters(),
          responses: { '200': ok('DoNotCallList', ex.doNotCallList), ...errorRefs(V1_ERRORS) },
        },
        post: {
          tags: ['Do-not-call list'],
          operationId: 'addToDoNotCall',
          summary: 'Add numbers to the do-not-call list',
          description:
            'Lists one or many numbers. A number already listed keeps its first entry (who, why, when) and is ' +
            'answered with it; `added` counts the new ones, so a retry is harmless. Queued calls to a listed ' +
            'number are not dialled. 400 for an invalid number (each problem names its element). Needs ' +
            '`dnc:write`.',
          security: securityFor('dnc:write'),
          requestBody: jsonBody('DoNotCallAddRequest', ex.addToDoNotCall),
          responses: { '200': ok('DoNotCallAddResponse', ex.doNotCallAdded), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/doNotCall/{phoneNumber}': {
        parameters: [ref('parameters', 'DoNotCallNumber')],
        delete: {
          tags: ['Do-not-call list'],
          operationId: 'removeFromDoNotCall',
          summary: 'Remove a number from the do-not-call list',
          description:
            'The number may be called again (new calls only: a call that already failed with `do-not-call` ' +
            'stays failed). Answers the removed entry; a number not on the list is 404, one that is not a ' +
            'valid phone number is 400. Needs `dnc:write`.',
          security: securityFor('dnc:write'),
          responses: {
            '200': ok('DoNotCallEntryResponse', ex.doNotCallRemoved, 'Removed; the entry as it was.'),
            ...errorRefs(V1_ERRORS),
          },
        },
      },
      '/v1/webhooks': {
        post: {
          tags: ['Webhooks'],
          operationId: 'createWebhook',
          summary: 'Create a webhook',
          description:
            "Registers an address notified of the team's call events. The answer (200) is the only one that " +
            "shows the signing `secret`. Where the operator caps a team's webhooks (`MAX_WEBHOOKS_PER_TEAM`), " +
            'one more than the cap is 400, and an existing one can be changed with PATCH instead. Needs ' +
            '`webhooks:write`.',
          security: securityFor('webhooks:write'),
          requestBody: jsonBody('WebhookCreateRequest', ex.createWebhook),
          responses: {
            '200': ok('WebhookCreatedResponse', ex.webhookCreated, 'Created; the only answer with the secret.'),
            ...errorRefs(V1_BODY_ERRORS),
          },
        },
      },
      '/v1/webhooks/{_id}': {
        parameters: [ref('parameters', 'WebhookId')],
        get: {
          tags: ['Webhooks'],
          operationId: 'getWebhook',
          summary: 'Get a webhook',
          description: 'Needs `webhooks:read`. The secret is not shown.',
          security: securityFor('webhooks:read'),
          responses: { '200': ok('WebhookResponse', ex.webhook), ...errorRefs(V1_ERRORS) },
        },
        patch: {
          tags: ['Webhooks'],
          operationId: 'updateWebhook',
          summary: 'Update a webhook',
          description:
            'Changes any of `url`, `subscribedEvents`, `method`; the secret stays and is not shown. Needs ' +
            '`webhooks:write`.',
          security: securityFor('webhooks:write'),
          requestBody: jsonBody('WebhookUpdateRequest', ex.updateWebhook),
          responses: { '200': ok('WebhookResponse', ex.webhookUpdated), ...errorRefs(V1_BODY_ERRORS) },
        },
      },
      '/v1/phoneCalls/{id}/webhookDeliveries': {
        parameters: [ref('parameters', 'PhoneCallId')],
        get: {
          tags: ['Webhooks'],
          operationId: 'listWebhookDeliveries',
          summary: "List a call's webhook deliveries",
          description:
            "Every event sent (or being sent) to the call's webhook endpoints, team webhooks and the call's own " +
            '`phoneCallWebhooks`: one entry per event and endpoint, oldest first, each with every attempt and ' +
            `its answer (at most ${MAX_DELIVERIES_PER_CALL}). An entry appears once its first attempt has ` +
            'ended (up to 15 s for a receiver that does not answer). A deleted call still lists its deliveries (its ' +
            '`phoneCall.deleted` among them), so that a failed one can be found and redelivered. ' +
            'A call of another team, or an id with neither a call nor deliveries of the team, is 404. Needs ' +
            '`webhooks:read`.',
          security: securityFor('webhooks:read'),
          responses: { '200': ok('WebhookDeliveryList', ex.webhookDeliveries), ...errorRefs(V1_ERRORS) },
        },
      },
      '/v1/webhookDeliveries/{id}/redeliver': {
        parameters: [ref('parameters', 'WebhookDeliveryId')],
        post: {
          tags: ['Webhooks'],
          operationId: 'redeliverWebhook',
          summary: 'Redeliver an event',
          description:
            'Sends the event of one delivery again: the same `webhook-id`, type, timestamp and data (receivers that ' +
            'deduplicate on `webhook-id` see it once), signed afresh, to the endpoint as it is configured now ' +
            '(its current URL, method and secret), with the whole retry schedule. Its attempts are added to the ' +
            "delivery's, numbered on. Answers at once (202) with the delivery in state `pending`; read its outcome " +
            'from the list. 400 while the delivery is still `pending` (one delivery at a time), when its endpoint ' +
            'no longer exists, or for a delivery recorded before events were kept for redelivery. No body. Needs ' +
            '`webhooks:write`.',
          security: securityFor('webhooks:write'),
          responses: {
            '202': jsonResponse('Accepted; the redelivery has started.', schemaRef('WebhookDeliveryResponse'), {
              example: ex.redelivering,
            }),
            ...errorRefs(V1_BODY_ERRORS),
          },
        },
      },
      '/v1/voices': {
        get: {
          tags: ['Voices'],
          operationId: 'listVoices',
          summary: 'List voices',
          description: 'The whole catalogue of synthetic voices, by `id`, in one answer. Needs `voices:read`.',
          security: securityFor('voices:read'),
          responses: { '200': ok('VoiceList', ex.voices), ...errorRefs(V1_ERRORS) },
        },
      },
      '/v1/transcripts': {
        get: {
          tags: ['Transcripts'],
          operationId: 'listTranscripts',
          summary: 'List transcripts',
          description:
            "Utterances of the team's calls in spoken order (`createdAt` ascending, then `_id` ascending); " +
            "usually filtered by `phoneCallId`. A call's transcript is stored when it ends. Needs " +
            '`transcripts:read`.',
          security: securityFor('transcripts:read'),
          parameters: [
            {
              name: 'phoneCallId',
              in: 'query',
              required: false,
              description: 'Only the utterances of this call.',
              schema: { type: 'string', pattern: `^${OBJECT_ID_HEX_ANY_CASE}$` },
            },
            ref('parameters', 'Limit'),
            ref('parameters', 'Cursor'),
          ],
          responses: { '200': ok('TranscriptList', ex.transcripts), ...errorRefs(V1_ERRORS) },
        },
      },
      '/v1/openapi.json': {
        get: {
          ...publicOperation,
          tags: ['Operations'],
          operationId: 'getOpenApiDocument',
          summary: 'This document',
          description: 'The OpenAPI 3.1 description of the service. No API key.',
          responses: {
            '200': jsonResponse(
              'The document (the example shows its start).',
              { type: 'object' },
              { example: ex.openApiDocument },
            ),
            ...errorRefs([500]),
          },
        },
      },
      '/healthz': {
        get: {
          ...publicOperation,
          tags: ['Operations'],
          operationId: 'getHealth',
          summary: 'Liveness',
          description: 'Answers 200 while the process lives. No API key.',
          responses: { '200': jsonResponse('Alive.', schemaRef('Health'), { example: ex.health }) },
        },
      },
      '/metrics': {
        get: {
          ...publicOperation,
          tags: ['Operations'],
          operationId: 'getMetrics',
          summary: 'Prometheus metrics',
          description:
            "The API process's metrics in the Prometheus text format: `http_requests_total` and " +
            '`http_request_duration_seconds` by method, route template and status, and the process metrics ' +
            '(the worker serves its own on `WORKER_METRICS_PORT`; the README lists them). No API key; with ' +
            '`METRICS_BEARER_TOKEN` set, `Authorization: Bearer <token>` is required.',
          responses: {
            '200': {
              description: 'The metrics.',
              content: {
                'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' }, example: ex.metrics },
              },
            },
            '401': jsonResponse(
              'METRICS_BEARER_TOKEN is set and the bearer token is missing or wrong.',
              schemaRef('Error'),
            ),
          },
        },
      },
      '/readyz': {
        get: {
          ...publicOperation,
          tags: ['Operations'],
          operationId: 'getReadiness',
          summary: 'Readiness',
          description:
            'Answers 200 once MongoDB and Temporal are reachable, 503 naming the unreachable ones before. No API key.',
          responses: {
            '200': jsonResponse('Ready.', schemaRef('Readiness'), { example: ex.ready }),
            '503': jsonResponse('A dependency is unreachable.', schemaRef('Readiness'), { example: ex.unavailable }),
          },
        },
      },
      '/recordings/{file}': {
        get: {
          ...publicOperation,
          tags: ['Media'],
          operationId: 'getRecording',
          summary: 'A call recording',
          description: "The URL given as a call's `recordingUrl`. No API key: the token in the name is the secret.",
          parameters: [
            {
              name: 'file',
              in: 'path',
              required: true,
              description: "The recording's token followed by `.wav`.",
              schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{32}\\.wav$' },
            },
          ],
          responses: { '200': wavResponse('The recording.', 'private, max-age=3600'), ...errorRefs([404, 500]) },
        },
      },
      '/voices/{token}/sample.wav': {
        get: {
          ...publicOperation,
          tags: ['Media'],
          operationId: 'getVoiceSample',
          summary: 'A voice sample',
          description:
            "The URL given as a voice's `voiceSampleUrl`. No API key: the token is the secret (a voice's `id` is not one).",
          parameters: [
            {
              name: 'token',
              in: 'path',
              required: true,
              description: "The voice sample's token, as in its `voiceSampleUrl`.",
              schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{32}$' },
            },
          ],
          responses: { '200': wavResponse('The sample.', 'public, max-age=86400'), ...errorRefs([404, 500]) },
        },
      },
      '/telephony/{provider}/events': {
        post: {
          ...publicOperation,
          tags: ['Provider callbacks'],
          operationId: 'receiveProviderCallback',
          summary: 'Provider status callback (for providers only)',
          description:
            'Where telephony providers report the progress of a call. Not for API clients. No API key: the ' +
            "request must carry the provider's own signature (Twilio `X-Twilio-Signature`, Vonage a signed " +
            '`Authorization: Bearer` JWT, Telnyx `telnyx-signature-ed25519` with `telnyx-timestamp`), verified ' +
            'with the credentials of the team owning the call.',
          'x-audience': 'telephony-providers',
          parameters: [
            { name: 'provider', in: 'path', required: true, schema: { type: 'string', enum: [...PROVIDERS] } },
            {
              name: 'callId',
              in: 'query',
              required: true,
              description: 'The call the callback is about, as put in the callback URL given to the provider.',
              schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
            },
          ],
          requestBody: {
            required: true,
            description:
              "The provider's own callback format, at most 1 MiB: form fields for Twilio, JSON for Vonage and Telnyx.",
            content: {
              'application/x-www-form-urlencoded': { schema: { type: 'object' } },
              [JSON_TYPE]: { schema: { type: 'object' } },
            },
          },
          responses: {
            '204': { description: 'Accepted.' },
            '400': jsonResponse(
              'Malformed callback: no usable `callId` (the message names it), or a body naming another call.',
              schemaRef('Error'),
            ),
            '401': jsonResponse(
              'Missing or wrong provider signature, or no such call: both are answered alike, so that the ' +
                'answer never tells whether a call exists.',
              schemaRef('Error'),
            ),
            '404': jsonResponse('Unknown provider.', schemaRef('Error')),
            '413': jsonResponse('Body larger than 1 MiB.', schemaRef('Error')),
            '500': ref('responses', 'InternalServerError'),
          },
        },
      },
    },
    webhooks: {
      callEvent: {
        post: {
          summary: 'Event delivery to a POST webhook',
          description:
            'Sent to a webhook whose `method` is POST, and to every `phoneCallWebhooks` entry of a call. ' +
            '`webhook-signature` signs the raw body. Answer with any 2xx within 15 s; 410 stops retries; ' +
            'anything else is retried.',
          security: [],
          parameters: [
            ref('parameters', 'webhook-id'),
            ref('parameters', 'webhook-timestamp'),
            ref('parameters', 'webhook-signature'),
          ],
          requestBody: {
            required: true,
            content: { [JSON_TYPE]: { schema: schemaRef('WebhookEvent'), example: ex.callCompletedEvent } },
          },
          responses: {
            '2XX': { description: 'Delivered.' },
            '410': { description: 'Gone: no more retries of this delivery.' },
            default: { description: 'Not delivered: retried on the schedule.' },
          },
        },
        get: {
          summary: 'Event delivery to a GET webhook',
          description:
            "Sent to a webhook whose `method` is GET: the event's main fields as query parameters, added to the " +
            "webhook's URL. `webhook-signature` signs the query string exactly as sent, without the leading `?`.",
          security: [],
          parameters: [
            { name: 'type', in: 'query', required: true, description: 'Event name.', schema: schemaRef('EventName') },
            {
              name: 'timestamp',
              in: 'query',
              required: true,
              description: 'When the event happened.',
              schema: { type: 'string', format: 'date-time' },
            },
            {
              name: 'phoneCallId',
              in: 'query',
              required: true,
              description: 'The call the event is about.',
              schema: { type: 'string', pattern: `^${OBJECT_ID_HEX}$` },
            },
            {
              name: 'status',
              in: 'query',
              required: false,
              description: "The call's status (call events only).",
              schema: schemaRef('CallStatus'),
            },
            ref('parameters', 'webhook-id'),
            ref('parameters', 'webhook-timestamp'),
            ref('parameters', 'webhook-signature'),
          ],
          responses: {
            '2XX': { description: 'Delivered.' },
            '410': { description: 'Gone: no more retries of this delivery.' },
            default: { description: 'Not delivered: retried on the schedule.' },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: API_KEY_HEADER,
          description:
            `An API key of the team. Scopes: ${codeList(SCOPES)}; ` +
            'an operation lists the one it needs in its security requirement.',
        },
      },
      schemas: {
        PhoneCallCreateRequest: phoneCallCreateRequest(),
        PhoneCallBatchRequest: phoneCallBatchRequest(),
        WebhookCreateRequest: webhookCreateRequest(),
        WebhookUpdateRequest: webhookUpdateRequest(),
        DoNotCallAddRequest: doNotCallAddRequest(),
        ...responseComponents(),
      },
      responses: errorResponses(),
      parameters: {
        BatchId: {
          name: 'batchId',
          in: 'path',
          required: true,
          description:
            'The `batchId` of a batch create answer (24 hex characters, either letter case; anything else is 404).',
          schema: { type: 'string' },
        },
        DoNotCallNumber: {
          name: 'phoneNumber',
          in: 'path',
          required: true,
          description:
            'The listed number, in E.164 (`+14155550123`, the `+` may be sent as is or as `%2B`); it is ' +
            'normalised like on create, so spaces and dashes (URL-encoded) are tolerated.',
          schema: { type: 'string', pattern: PHONE_INPUT_PATTERN },
        },
        FileId: {
          name: 'fileId',
          in: 'path',
          required: true,
          description:
            'The `fileId` given on batch create (URL-encoded); every batch of the team with it is addressed.',
          schema: { type: 'string', minLength: 1, maxLength: 200 },
        },
        PhoneCallId: {
          name: 'id',
          in: 'path',
          required: true,
          description: "The call's `_id` (24 hex characters, either letter case; anything else is 404).",
          schema: { type: 'string' },
        },
        WebhookDeliveryId: {
          name: 'id',
          in: 'path',
          required: true,
          description: "A delivery's `_id`, as `GET /v1/phoneCalls/{id}/webhookDeliveries` lists them.",
          schema: { type: 'string' },
        },
        WebhookId: {
          name: '_id',
          in: 'path',
          required: true,
          description: "The webhook's `_id` (24 hex characters, either letter case; anything else is 404).",
          schema: { type: 'string' },
        },
        'Idempotency-Key': {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes the create safe to retry: the same key with the same body within 24 h answers the first ' +
            'response again and creates nothing; with a different body, 400; while the first is still running, ' +
            'the retry waits up to 10 s for its answer, then gets 429. Keys are per team and per endpoint.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
        Limit: {
          name: 'limit',
          in: 'query',
          required: false,
          description: 'Page size.',
          schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
        },
        Cursor: {
          name: 'cursor',
          in: 'query',
          required: false,
          description: 'The `nextCursor` of the previous page; leave out for the first page.',
          schema: CURSOR_SCHEMA,
        },
        'webhook-id': {
          name: 'webhook-id',
          in: 'header',
          required: true,
          description: 'Unique per event, the same on every retry: deduplicate on it.',
          schema: { type: 'string' },
        },
        'webhook-timestamp': {
          name: 'webhook-timestamp',
          in: 'header',
          required: true,
          description: 'Unix seconds of this attempt.',
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
        'webhook-signature': {
          name: 'webhook-signature',
          in: 'header',
          required: true,
          description: '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{content}`.',
          schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}$' },
        },
      },
      headers: {
        'X-Request-Id': { description: "ID of the request in the service's logs.", schema: { type: 'string' } },
        'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
        'Idempotent-Replayed': {
          description: '`true` when the answer is a replay of an earlier request with the same `Idempotency-Key`.',
          schema: { type: 'string', const: 'true' },
        },
      },
    },
  };
}

// GET /v1/openapi.json against the real stack: the document is a structurally sound OpenAPI 3.1
// document, and real answers of every endpoint (successes and errors) match the schema the
// document declares for their path, method and status. An undeclared status fails the test.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/admin/commands';
import { apiClient, errorMessages, eventually, rawRequest, type ApiResponse } from '../helpers/http';
import { documentReader, escapePointer, type Json } from '../helpers/openapi-document';
import { startReceiver } from '../helpers/receiver';
import { startTestStack, type TestStack } from '../helpers/stack';

type RequestOptions = {
  path?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  key?: string | null;
  headers?: Record<string, string>;
};

const DOC_ID = 'https://openapi.test/openapi.json';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
// A small body limit, so that 413 is cheap to provoke.
const BODY_LIMIT_BYTES = 64 * 1024;

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let api: ReturnType<typeof apiClient>;
let doc: Json;
let ajv: Ajv2020;
const validators = new Map<string, ValidateFunction>();
/** `METHOD template status` of every checked answer, for the coverage check at the end. */
const covered = new Set<string>();

beforeAll(async () => {
  stack = await startTestStack({ env: { REQUEST_BODY_LIMIT: `${BODY_LIMIT_BYTES / 1024}kb` } });
  receiver = await startReceiver();
  api = apiClient(stack.baseUrl, stack.team.key);
  const res = await api.get('/v1/openapi.json', { key: null });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = res.body as Json;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // The whole document as one schema resource, so that its internal $refs resolve by pointer.
  ajv.addSchema(doc, DOC_ID, undefined, false);
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

function atPointer(pointer: string): unknown {
  return documentReader(doc).atPointer(pointer);
}

/** Follows `$ref` (within the document) to the object, and gives the pointer it lives at. */
function deref(value: Json, pointer: string): { value: Json; pointer: string } {
  return documentReader(doc).deref(value, pointer);
}

function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

function operationPointer(method: string, template: string) {
  const pointer = `/paths/${escapePointer(template)}/${method.toLowerCase()}`;
  const operation = atPointer(pointer) as Json | undefined;
  if (!operation) throw new Error(`${method} ${template} is not in the document`);
  return { operation, pointer };
}

/** The answer's status must be declared for the operation, and its body must match the schema. */
function assertDocumented(method: string, template: string, res: ApiResponse): void {
  const { operation, pointer } = operationPointer(method, template);
  const declared = operation.responses[String(res.status)] as Json | undefined;
  if (!declared) {
    throw new Error(
      `${method} ${template} answered ${res.status}, which the document does not declare: ${JSON.stringify(res.body)}`,
    );
  }
  const response = deref(declared, `${pointer}/responses/${res.status}`);
  const mediaType = res.headers.get('content-type')?.split(';')[0]?.trim();
  if (!response.value.content) {
    expect(res.body, `${method} ${template} ${res.status} declares no body`).toBeUndefined();
  } else {
    expect(Object.keys(response.value.content), `${method} ${template} ${res.status} answered ${mediaType}`).toContain(
      mediaType,
    );
    if (mediaType === 'application/json') {
      const validate = validatorAt(`${response.pointer}/content/${escapePointer(mediaType)}/schema`);
      if (!validate(res.body)) {
        throw new Error(
          `${method} ${template} ${res.status} does not match its schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body, null, 2)}`,
        );
      }
    }
  }
  covered.add(`${method} ${template} ${res.status}`);
}

/** A body the API accepted must also be valid under the request schema the document declares. */
function assertRequestValid(method: string, template: string, body: unknown): void {
  const { pointer } = operationPointer(method, template);
  const validate = validatorAt(`${pointer}/requestBody/content/application~1json/schema`);
  if (!validate(body))
    throw new Error(
      `the ${method} ${template} body the API accepted fails its documented schema: ${ajv.errorsText(validate.errors)}`,
    );
}

async function call(method: string, template: string, options: RequestOptions = {}): Promise<ApiResponse> {
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = options.path?.[name];
    if (value === undefined) throw new Error(`no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  const res = await api.request(method, path + query, {
    body: options.body,
    rawBody: options.rawBody,
    key: options.key,
    headers: options.headers,
  });
  assertDocumented(method, template, res);
  return res;
}

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

function callBody(overrides: Record<string, unknown> = {}) {
  return {
    teamId: stack.team.teamId,
    callTemplateId: stack.team.templateId,
    toPhoneNumber: '+1 (415) 555-2671',
    nameOfHuman: 'Grace',
    promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
    callDelayedUntil: inAnHour(),
    ...overrides,
  };
}

describe('the document', () => {
  it('is an OpenAPI 3.1.0 document whose operations all declare responses', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info?.title).toBe('string');
    expect(typeof doc.info?.version).toBe('string');
    expect(doc.servers?.[0]?.url).toBe(stack.config.PUBLIC_BASE_URL);
    expect(doc.components.securitySchemes['service-api-key']).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'service-api-key',
    });

    const operationIds = new Set<string>();
    const pathItems: Array<[string, Json]> = [
      ...Object.entries(doc.paths as Json),
      ...Object.entries((doc.webhooks ?? {}) as Json).map(
        ([name, item]) => [`webhook:${name}`, item] as [string, Json],
      ),
    ];
    for (const [template, item] of pathItems) {
      const operations = HTTP_METHODS.filter((m) => m in item);
      expect(operations.length, `${template} has no operation`).toBeGreaterThan(0);
      for (const method of operations) {
        const operation = item[method] as Json;
        const statuses = Object.keys(operation.responses ?? {});
        expect(statuses.length, `${method} ${template} declares no responses`).toBeGreaterThan(0);
        for (const status of statuses) expect(status).toMatch(/^([1-5](\d\d|XX)|default)$/);
        if (operation.operationId) {
          expect(operationIds.has(operation.operationId), `duplicate operationId ${operation.operationId}`).toBe(false);
          operationIds.add(operation.operationId);
        }
        for (const scopes of [...(operation.security ?? []), ...(doc.security ?? [])] as Json[]) {
          for (const scheme of Object.keys(scopes)) expect(doc.components.securitySchemes).toHaveProperty(scheme);
        }
        if (!template.startsWith('/')) continue;
        // Every {name} of the template has a path parameter, and every path parameter a {name}.
        const declared = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
          .map((p: Json) => deref(p, '').value)
          .filter((p) => p.in === 'path')
          .map((p) => p.name as string);
        const inTemplate = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        expect(declared.sort(), `${method} ${template} path parameters`).toEqual(inTemplate.sort());
      }
    }
  });

  it('documents every route the service serves', () => {
    const expected: Record<string, string[]> = {
      '/v1/phoneCalls': ['get', 'post'],
      '/v1/phoneCalls/batch': ['post'],
      '/v1/phoneCalls/{id}': ['delete', 'get'],
      '/v1/phoneCalls/batch/{batchId}/pause': ['post'],
      '/v1/phoneCalls/batch/{batchId}/resume': ['post'],
      '/v1/phoneCalls/batch/{batchId}/cancel': ['post'],
      '/v1/phoneCalls/file/{fileId}/pause': ['post'],
      '/v1/phoneCalls/file/{fileId}/resume': ['post'],
      '/v1/phoneCalls/file/{fileId}/cancel': ['post'],
      '/v1/doNotCall': ['get', 'post'],
      '/v1/doNotCall/{phoneNumber}': ['delete'],
      '/v1/webhooks': ['post'],
      '/v1/webhooks/{_id}': ['get', 'patch'],
      '/v1/phoneCalls/{id}/webhookDeliveries': ['get'],
      '/v1/webhookDeliveries/{id}/redeliver': ['post'],
      '/v1/voices': ['get'],
      '/v1/transcripts': ['get'],
      '/v1/openapi.json': ['get'],
      '/healthz': ['get'],
      '/metrics': ['get'],
      '/readyz': ['get'],
      '/recordings/{file}': ['get'],
      '/voices/{token}/sample.wav': ['get'],
      '/telephony/{provider}/events': ['post'],
    };
    const actual = Object.fromEntries(
      Object.entries(doc.paths as Json).map(([path, item]) => [path, HTTP_METHODS.filter((m) => m in item).sort()]),
    );
    expect(actual).toEqual(expected);
  });

  it('resolves every $ref', () => {
    const refs: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value);
          else walk(value);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(20);
    for (const target of new Set(refs)) {
      expect(target, 'only internal references').toMatch(/^#\//);
      expect(atPointer(target), `unresolved $ref ${target}`).toBeDefined();
    }
  });

  it('holds valid JSON Schemas, with closed request bodies and the one Error shape', () => {
    for (const name of Object.keys(doc.components.schemas)) validatorAt(`/components/schemas/${escapePointer(name)}`);
    for (const name of [
      'PhoneCallCreateRequest',
      'PhoneCallBatchRequest',
      'WebhookCreateRequest',
      'WebhookUpdateRequest',
    ]) {
      expect(doc.components.schemas[name].additionalProperties, name).toBe(false);
    }
    expect(doc.components.schemas.Error).toMatchObject({
      required: ['error', 'payload'],
      additionalProperties: false,
      properties: { error: { required: ['statusCode', 'message', 'error'], additionalProperties: false } },
    });
    // The examples the document shows must be valid themselves.
    for (const [name, response] of Object.entries(doc.components.responses as Json)) {
      const validate = validatorAt(`/components/responses/${escapePointer(name)}/content/application~1json/schema`);
      expect(validate(response.content['application/json'].example), `example of ${name}`).toBe(true);
    }
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      for (const method of HTTP_METHODS.filter((m) => item[m]?.requestBody?.content?.['application/json']?.example)) {
        assertRequestValid(
          method.toUpperCase(),
          template,
          item[method].requestBody.content['application/json'].example,
        );
      }
      // Every success with a JSON body shows an example of it (the shared error answers are checked above).
      for (const method of HTTP_METHODS.filter((m) => m in item)) {
        for (const [status, response] of Object.entries(item[method].responses as Json)) {
          const json = response.content?.['application/json'];
          if (!json) continue;
          const label = `${method.toUpperCase()} ${template} ${status} example`;
          if (status.startsWith('2')) expect(json.example, label).toBeDefined();
          if (json.example === undefined) continue;
          const pointer = `/paths/${escapePointer(template)}/${method}/responses/${status}/content/application~1json/schema`;
          const validate = validatorAt(pointer);
          expect(validate(json.example), `${label}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        }
      }
    }
    const validateError = validatorAt('/components/schemas/Error');
    expect(
      validateError({ error: { statusCode: 400, message: ['x is required'], error: 'Bad Request' }, payload: {} }),
    ).toBe(true);
    expect(validateError({ error: { statusCode: 400, message: ['x'], error: 'Bad Request' }, payload: { x: 1 } })).toBe(
      false,
    );
  });

  it('is served without an API key and answers as it declares', async () => {
    const res = await call('GET', '/v1/openapi.json', { key: null });
    expect(res.body.openapi).toBe('3.1.0');
  });
});

describe('phone calls', () => {
  let scheduledId: string;

  it('POST /v1/phoneCalls: 201 create form, idempotent replay, and the errors', async () => {
    const body = callBody({
      toEmailAddress: 'grace@example.com',
      phoneCallWebhooks: [{ url: 'http://127.0.0.1:9/hook', subscribedEvent: '*', secret: 'a-long-secret' }],
    });
    assertRequestValid('POST', '/v1/phoneCalls', body);
    const created = await call('POST', '/v1/phoneCalls', { body });
    expect(created.status).toBe(201);
    scheduledId = created.body.data._id;

    const idempotent = callBody();
    const headers = { 'Idempotency-Key': `key-${Date.now()}` };
    const first = await call('POST', '/v1/phoneCalls', { body: idempotent, headers });
    const replay = await call('POST', '/v1/phoneCalls', { body: idempotent, headers });
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await call('POST', '/v1/phoneCalls', { body: callBody({ nameOfHuman: 'Other' }), headers })).status).toBe(
      400,
    );

    expect(
      (await call('POST', '/v1/phoneCalls', { body: callBody({ toPhoneNumber: 'not a number', extra: true }) })).status,
    ).toBe(400);
    expect((await call('POST', '/v1/phoneCalls', { body: callBody(), key: null })).status).toBe(401);
    expect((await call('POST', '/v1/phoneCalls', { body: callBody(), key: 'not-a-key' })).status).toBe(401);
    expect((await call('POST', '/v1/phoneCalls', { body: callBody({ teamId: 'a'.repeat(24) }) })).status).toBe(403);
    expect(
      (await call('POST', '/v1/phoneCalls', { rawBody: 'teamId=x', headers: { 'content-type': 'text/plain' } })).status,
    ).toBe(415);
    expect(
      (await call('POST', '/v1/phoneCalls', { rawBody: '{"teamId":', headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(400);
  });

  it('POST /v1/phoneCalls/batch: 201 in request order, 400, 413', async () => {
    const body = {
      phoneCalls: [
        callBody({ toPhoneNumber: '+14155550001' }),
        callBody({ toPhoneNumber: '+14155550002', record: true, telephonyProvider: 'telnyx' }),
      ],
      fileId: 'file-openapi',
      fileName: 'openapi.csv',
    };
    assertRequestValid('POST', '/v1/phoneCalls/batch', body);
    const created = await call('POST', '/v1/phoneCalls/batch', { body });
    expect(created.status).toBe(201);
    expect(created.body.data.map((c: Json) => c.toPhoneNumber)).toEqual(['+14155550001', '+14155550002']);

    expect(
      (await call('POST', '/v1/phoneCalls/batch', { body: { phoneCalls: [callBody({ toPhoneNumber: 'x' })] } })).status,
    ).toBe(400);
    const tooLarge = {
      phoneCalls: [callBody({ nameOfHuman: 'x'.repeat(200) })],
      fileName: 'y'.repeat(BODY_LIMIT_BYTES),
    };
    expect((await call('POST', '/v1/phoneCalls/batch', { body: tooLarge })).status).toBe(413);
  });

  it('GET /v1/phoneCalls: pages with nextCursor, filters (canceled too), 400 for bad parameters', async () => {
    const firstPage = await call('GET', '/v1/phoneCalls', { query: { limit: '2' } });
    expect(firstPage.status).toBe(200);
    expect(firstPage.body.data).toHaveLength(2);
    expect(typeof firstPage.body.nextCursor).toBe('string');
    const secondPage = await call('GET', '/v1/phoneCalls', {
      query: { limit: '2', cursor: firstPage.body.nextCursor },
    });
    expect(secondPage.status).toBe(200);
    const filtered = await call('GET', '/v1/phoneCalls', {
      query: { fileId: 'file-openapi', status: 'queued', toPhoneNumber: '+14155550002' },
    });
    expect(filtered.body.data).toHaveLength(1);
    expect(filtered.body.nextCursor).toBeNull();
    expect((await call('GET', '/v1/phoneCalls', { query: { status: 'canceled' } })).body.data).toEqual([]);
    expect((await call('GET', '/v1/phoneCalls', { query: { status: 'nope', color: 'red' } })).status).toBe(400);
    expect((await call('GET', '/v1/phoneCalls', { key: null })).status).toBe(401);
  });

  it('GET /v1/phoneCalls/{id}: 200 read form, 404 for unknown and malformed ids', async () => {
    const got = await call('GET', '/v1/phoneCalls/{id}', { path: { id: scheduledId } });
    expect(got.status).toBe(200);
    expect(got.body.data.callOrigin).toBe('api');
    expect((await call('GET', '/v1/phoneCalls/{id}', { path: { id: 'f'.repeat(24) } })).status).toBe(404);
    expect((await call('GET', '/v1/phoneCalls/{id}', { path: { id: 'not-an-id' } })).status).toBe(404);
  });

  it('DELETE /v1/phoneCalls/{id}: 200 with the call as it was, then 404', async () => {
    const deleted = await call('DELETE', '/v1/phoneCalls/{id}', { path: { id: scheduledId } });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ _id: scheduledId, status: 'queued' });
    expect((await call('GET', '/v1/phoneCalls/{id}', { path: { id: scheduledId } })).status).toBe(404);
    expect((await call('DELETE', '/v1/phoneCalls/{id}', { path: { id: scheduledId } })).status).toBe(404);
  });

  it('calls that ran: read forms of every outcome, a 400 delete, transcripts and the recording', async () => {
    const outcomes: Record<string, string> = {
      '+14155552671': 'completed',
      '+14155551486': 'busy',
      '+14155551404': 'failed',
    };
    const ids = new Map<string, string>();
    for (const to of Object.keys(outcomes)) {
      // The completed one also tells a receiver, for its webhook deliveries.
      const hooks =
        outcomes[to] === 'completed'
          ? {
              phoneCallWebhooks: [
                { url: `${receiver.url}/hook`, subscribedEvent: 'phoneCall.completed', secret: 'hook secret' },
              ],
            }
          : {};
      const created = await call('POST', '/v1/phoneCalls', {
        body: callBody({ toPhoneNumber: to, callDelayedUntil: undefined, record: true, ...hooks }),
      });
      expect(created.status).toBe(201);
      ids.set(to, created.body.data._id);
    }
    const ended = new Map<string, Json>();
    for (const [to, id] of ids) {
      // Every answer on the way (queued, ringing, inProgress, ...) is checked against the schema too.
      const final = await eventually(
        async () => {
          const res = await call('GET', '/v1/phoneCalls/{id}', { path: { id } });
          return res.body.data.status === outcomes[to] && res.body.data.callEndedAt
            ? (res.body.data as Json)
            : undefined;
        },
        60_000,
        `${to} to reach ${outcomes[to]}`,
      );
      ended.set(to, final);
    }
    const completed = ended.get('+14155552671')!;
    expect(completed.statusExtraInfo.statusCode).toBe('completed');
    expect(typeof completed.callDuration).toBe('number');
    expect(ended.get('+14155551404')!.statusExtraInfo.statusCode).toBe('invalid-number');

    const refused = await call('DELETE', '/v1/phoneCalls/{id}', { path: { id: completed._id } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toEqual(['only queued calls can be deleted; status is completed']);

    // A provider callback for a real call without the provider's signature.
    const unsigned = await call('POST', '/telephony/{provider}/events', {
      path: { provider: 'twilio' },
      query: { callId: completed._id },
      rawBody: 'CallStatus=completed',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      key: null,
    });
    expect(unsigned.status).toBe(401);

    const transcripts = await eventually(
      async () => {
        const res = await call('GET', '/v1/transcripts', { query: { phoneCallId: completed._id } });
        return res.body.data.length > 0 ? res : undefined;
      },
      30_000,
      'the transcript',
    );
    expect(transcripts.body.data.every((t: Json) => t.phoneCallId === completed._id)).toBe(true);
    const onePerPage = await call('GET', '/v1/transcripts', { query: { phoneCallId: completed._id, limit: '1' } });
    expect(onePerPage.body.nextCursor === null || typeof onePerPage.body.nextCursor === 'string').toBe(true);
    expect((await call('GET', '/v1/transcripts', { query: { limit: '0' } })).status).toBe(400);

    // Recorded and answered, so it has a recording, served without a key.
    const recordingUrl = new URL(completed.recordingUrl);
    expect(recordingUrl.origin).toBe(stack.config.PUBLIC_BASE_URL);
    const file = recordingUrl.pathname.replace(/^\/recordings\//, '');
    expect((await call('GET', '/recordings/{file}', { path: { file }, key: null })).status).toBe(200);
    expect(
      (await call('GET', '/recordings/{file}', { path: { file: `${'A'.repeat(32)}.wav` }, key: null })).status,
    ).toBe(404);

    const deliveries = await eventually(async () => {
      const res = await call('GET', '/v1/phoneCalls/{id}/webhookDeliveries', { path: { id: completed._id } });
      return res.body.data.some((d: Json) => d.state === 'delivered') ? res : undefined;
    });
    const deliveryId = deliveries.body.data[0]._id as string;
    expect((await call('POST', '/v1/webhookDeliveries/{id}/redeliver', { path: { id: deliveryId } })).status).toBe(202);
    const unknown = 'f'.repeat(24);
    expect((await call('GET', '/v1/phoneCalls/{id}/webhookDeliveries', { path: { id: unknown } })).status).toBe(404);
    expect((await call('POST', '/v1/webhookDeliveries/{id}/redeliver', { path: { id: unknown } })).status).toBe(404);
  });
});

describe('campaigns', () => {
  it('pause, resume and cancel by batchId and by fileId: 200 with the counts, 400, 404', async () => {
    const fileId = `campaign-${Date.now()}`;
    const createBatch = async (extra: Json) => {
      const phoneCalls = [callBody({ toPhoneNumber: '+14155550011' }), callBody({ toPhoneNumber: '+14155550012' })];
      const created = await call('POST', '/v1/phoneCalls/batch', { body: { phoneCalls, ...extra } });
      expect(created.status).toBe(201);
      return created.body.batchId as string;
    };
    const batchId = await createBatch({});
    await createBatch({ fileId });
    const control = async (by: 'batch' | 'file', action: string, id: string) =>
      call('POST', `/v1/phoneCalls/${by}/{${by}Id}/${action}`, { path: { [`${by}Id`]: id } });
    const expectCounts = (res: ApiResponse, action: string, selector: Json) => {
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ action, ...selector, calls: 2 });
      const { changed, unchanged, notQueued } = res.body.data as Record<string, number>;
      expect(changed + unchanged + notQueued).toBe(2);
    };

    for (const action of ['pause', 'resume', 'cancel']) {
      expectCounts(await control('batch', action, batchId), action, { batchId });
      expectCounts(await control('file', action, fileId), action, { fileId });
    }
    // The cancels deleted the queued calls: neither selector finds a call any more.
    expect((await control('batch', 'cancel', batchId)).status).toBe(404);
    expect((await control('file', 'cancel', fileId)).status).toBe(404);
    expect((await control('batch', 'pause', 'not-an-id')).status).toBe(404);
    expect((await control('batch', 'resume', 'f'.repeat(24))).status).toBe(404);
    expect((await control('file', 'pause', 'x'.repeat(201))).status).toBe(400);
    expect((await control('file', 'resume', `${fileId}-unknown`)).status).toBe(404);
  });
});

describe('webhooks', () => {
  it('create (200, with the secret), get and patch (200, without), and their errors', async () => {
    const body = {
      teamId: stack.team.teamId,
      url: 'http://127.0.0.1:9/hook',
      subscribedEvents: ['phoneCall.completed', 'transcript.created'],
      method: 'POST',
    };
    assertRequestValid('POST', '/v1/webhooks', body);
    const created = await call('POST', '/v1/webhooks', { body });
    expect(created.status).toBe(200);
    expect(created.body.data.secret).toMatch(/^whsec_/);
    const id = created.body.data._id as string;

    const got = await call('GET', '/v1/webhooks/{_id}', { path: { _id: id } });
    expect(got.status).toBe(200);
    expect(got.body.data.secret).toBeUndefined();

    const changes = { subscribedEvents: ['*'], method: 'GET' };
    assertRequestValid('PATCH', '/v1/webhooks/{_id}', changes);
    const patched = await call('PATCH', '/v1/webhooks/{_id}', { path: { _id: id }, body: changes });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ subscribedEvents: ['*'], method: 'GET' });

    expect(
      (await call('POST', '/v1/webhooks', { body: { ...body, subscribedEvents: ['phoneCall.exploded'] } })).status,
    ).toBe(400);
    expect((await call('POST', '/v1/webhooks', { body: { ...body, teamId: 'b'.repeat(24) } })).status).toBe(403);
    expect((await call('PATCH', '/v1/webhooks/{_id}', { path: { _id: id }, body: {} })).status).toBe(400);
    expect(
      (
        await call('PATCH', '/v1/webhooks/{_id}', {
          path: { _id: id },
          rawBody: 'url',
          headers: { 'content-type': 'text/plain' },
        })
      ).status,
    ).toBe(415);
    expect((await call('GET', '/v1/webhooks/{_id}', { path: { _id: 'c'.repeat(24) } })).status).toBe(404);
    expect((await call('PATCH', '/v1/webhooks/{_id}', { path: { _id: 'c'.repeat(24) }, body: changes })).status).toBe(
      404,
    );
    expect((await call('GET', '/v1/webhooks/{_id}', { path: { _id: id }, key: null })).status).toBe(401);
  });
});

describe('do-not-call list', () => {
  it('add (200, each number once), list with cursor and filter, remove, and their errors', async () => {
    const body = {
      teamId: stack.team.teamId,
      entries: [{ phoneNumber: '+14155550171', reason: 'asked by e-mail' }, { phoneNumber: '+14155550172' }],
    };
    assertRequestValid('POST', '/v1/doNotCall', body);
    const added = await call('POST', '/v1/doNotCall', { body });
    expect(added.status).toBe(200);
    expect(added.body.added).toBe(2);
    const page = await call('GET', '/v1/doNotCall', { query: { limit: '1' } });
    expect(page.status).toBe(200);
    expect(page.body.nextCursor).not.toBeNull();
    const filtered = await call('GET', '/v1/doNotCall', { query: { phoneNumber: '+14155550171' } });
    expect(filtered.body.data).toHaveLength(1);
    const removed = await call('DELETE', '/v1/doNotCall/{phoneNumber}', { path: { phoneNumber: '+14155550172' } });
    expect(removed.status).toBe(200);
    expect(removed.body.data.phoneNumber).toBe('+14155550172');

    expect((await call('POST', '/v1/doNotCall', { body: { ...body, entries: [{ phoneNumber: '12' }] } })).status).toBe(
      400,
    );
    expect((await call('POST', '/v1/doNotCall', { body: { ...body, teamId: 'b'.repeat(24) } })).status).toBe(403);
    expect((await call('GET', '/v1/doNotCall', { query: { limit: '0' } })).status).toBe(400);
    expect(
      (await call('DELETE', '/v1/doNotCall/{phoneNumber}', { path: { phoneNumber: '+14155550172' } })).status,
    ).toBe(404);
    expect((await call('DELETE', '/v1/doNotCall/{phoneNumber}', { path: { phoneNumber: '+1' } })).status).toBe(400);
    // The number goes back to being callable: the calls test of this file does not use it.
    expect(
      (await call('DELETE', '/v1/doNotCall/{phoneNumber}', { path: { phoneNumber: '+14155550171' } })).status,
    ).toBe(200);
  });
});

describe('voices, scopes and the routes outside /v1', () => {
  it('GET /v1/voices: 200, and each sample is served as audio by an unguessable token', async () => {
    const voices = await call('GET', '/v1/voices');
    expect(voices.status).toBe(200);
    expect(voices.body.data.length).toBeGreaterThanOrEqual(12);
    const tokens = voices.body.data.map((voice: { voiceSampleUrl: string }) => {
      const url = new URL(voice.voiceSampleUrl);
      expect(url.origin).toBe(stack.config.PUBLIC_BASE_URL);
      const token = /^\/voices\/([^/]+)\/sample\.wav$/.exec(url.pathname)?.[1] ?? '';
      // At least 128 random-looking bits: no id, no counter.
      expect(token).toMatch(/^[A-Za-z0-9_-]{22,}$/);
      expect(Buffer.from(token, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
      expect(new Set(token).size).toBeGreaterThanOrEqual(12);
      return token;
    });
    expect(new Set(tokens).size).toBe(tokens.length);
    const sample = await call('GET', '/voices/{token}/sample.wav', { path: { token: tokens[0] }, key: null });
    expect(sample.status).toBe(200);
    expect(sample.headers.get('content-type')).toBe('audio/wav');
    // The old guessable path (a voice's id), another voice's token changed by a character, a token of
    // no voice: all 404.
    const id = String(voices.body.data[0].id);
    const altered = `${tokens[1].slice(0, -1)}${tokens[1].endsWith('A') ? 'B' : 'A'}`;
    for (const token of [id, '999999', altered, 'A'.repeat(32)])
      expect((await call('GET', '/voices/{token}/sample.wav', { path: { token }, key: null })).status, token).toBe(404);
    expect((await call('GET', '/v1/voices', { key: null })).status).toBe(401);
  });

  it('a key without the scope gets 403 everywhere but where its scope applies', async () => {
    const { key } = await createKey({ team: stack.team.teamId, scopes: 'voices:read' });
    expect((await call('GET', '/v1/voices', { key })).status).toBe(200);
    expect((await call('GET', '/v1/phoneCalls', { key })).status).toBe(403);
    expect((await call('POST', '/v1/phoneCalls', { key, body: callBody() })).status).toBe(403);
    expect((await call('POST', '/v1/phoneCalls/batch', { key, body: { phoneCalls: [callBody()] } })).status).toBe(403);
    expect((await call('GET', '/v1/phoneCalls/{id}', { key, path: { id: 'f'.repeat(24) } })).status).toBe(403);
    expect((await call('DELETE', '/v1/phoneCalls/{id}', { key, path: { id: 'f'.repeat(24) } })).status).toBe(403);
    expect(
      (
        await call('POST', '/v1/webhooks', {
          key,
          body: { teamId: stack.team.teamId, url: 'http://127.0.0.1:9/x', subscribedEvents: ['*'], method: 'GET' },
        })
      ).status,
    ).toBe(403);
    expect((await call('GET', '/v1/webhooks/{_id}', { key, path: { _id: 'f'.repeat(24) } })).status).toBe(403);
    expect(
      (await call('PATCH', '/v1/webhooks/{_id}', { key, path: { _id: 'f'.repeat(24) }, body: { method: 'GET' } }))
        .status,
    ).toBe(403);
    expect((await call('GET', '/v1/transcripts', { key })).status).toBe(403);
    expect((await call('GET', '/v1/doNotCall', { key })).status).toBe(403);

    const { key: transcriptsOnly } = await createKey({ team: stack.team.teamId, scopes: 'transcripts:read' });
    expect((await call('GET', '/v1/voices', { key: transcriptsOnly })).status).toBe(403);
    const all = await call('GET', '/v1/transcripts', { key: transcriptsOnly });
    expect(all.status).toBe(200);
    expect((await call('GET', '/v1/transcripts', { key: null })).status).toBe(401);
  });

  it('health, readiness and provider callbacks answer as declared', async () => {
    expect((await call('GET', '/healthz', { key: null })).status).toBe(200);
    expect((await call('GET', '/readyz', { key: null })).status).toBe(200);
    const unknownCall = await call('POST', '/telephony/{provider}/events', {
      path: { provider: 'twilio' },
      query: { callId: 'f'.repeat(24) },
      rawBody: 'CallStatus=ringing',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      key: null,
    });
    // Answered as an unsigned callback for a real call is: whether the call exists is not told.
    expect(unknownCall.status).toBe(401);
  });
});

describe('methods the document does not declare', () => {
  it('are 405 with Allow naming exactly the declared ones (TRACE too), in the error shape; OPTIONS is 204', async () => {
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      const path = template.replace('{provider}', 'twilio').replace(/\{[^}]+\}/g, 'f'.repeat(24));
      const declared = HTTP_METHODS.filter((m) => m in item).map((m) => m.toUpperCase());
      const expected = new Set([...declared, ...(declared.includes('GET') ? ['HEAD'] : [])]);
      for (const method of ['TRACE', 'PUT', 'PATCH', 'DELETE', 'POST'].filter((m) => !expected.has(m))) {
        // A TRACE request may not carry a body (Node's server refuses one before any route runs).
        const body = method === 'TRACE' ? undefined : '{}';
        const res = await rawRequest(
          `${stack.baseUrl}${path}`,
          method,
          { 'service-api-key': stack.team.key, 'content-type': 'application/json' },
          body,
        );
        expect(res.status, `${method} ${template}: ${JSON.stringify(res.body)}`).toBe(405);
        expect(errorMessages(res, 405), `${method} ${template}`).toEqual([
          expect.stringContaining(`${method} is not allowed on`),
        ]);
        expect(new Set(res.headers.get('allow')?.split(', ')), `${method} ${template}`).toEqual(expected);
      }
      const options = await api.request('OPTIONS', path);
      expect(options.status, `OPTIONS ${template}`).toBe(204);
      expect(new Set(options.headers.get('allow')?.split(', '))).toEqual(expected);
    }
  });
});

describe('coverage', () => {
  it('exercised a success and an error of every /v1 operation', () => {
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      if (!template.startsWith('/v1/') || template === '/v1/openapi.json') continue;
      for (const method of HTTP_METHODS.filter((m) => m in item)) {
        const seen = [...covered]
          .filter((c) => c.startsWith(`${method.toUpperCase()} ${template} `))
          .map((c) => Number(c.split(' ').pop()));
        expect(
          seen.some((s) => s >= 200 && s < 300),
          `${method} ${template}: no success checked`,
        ).toBe(true);
        expect(
          seen.some((s) => s >= 400),
          `${method} ${template}: no error checked`,
        ).toBe(true);
      }
    }
  });
});

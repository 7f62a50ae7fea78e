// Tenant isolation over every /v1 operation of the OpenAPI document, and every kind of bad key.
//
// Team A owns a resource of every kind: a call scheduled months ahead (nobody is rung), a batch with
// a fileId, a call that ran to completion with a per-call webhook (so it has transcripts and webhook
// deliveries), a team webhook and do-not-call entries. Team B's key (every scope) then finds none of
// them by id (404, word for word the answer for an id that never existed), may not name A's teamId in
// a body (403, as for a team that does not exist), and sees nothing of A in any list or filter.
// The operations are read from GET /v1/openapi.json: OPERATIONS says how to exercise each one, and
// the first test fails when the document has an operation, a path parameter, a query parameter or a
// body teamId that the table does not exercise. Then every bad key on every operation gets the
// documented 401 / 403 in the documented error shape with nothing of the team in it; and at the end
// A's data, read back with A's key, is exactly as it was.
import { randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/admin/commands';
import { authenticateApiKey } from '../../src/auth/api-keys';
import { SCOPES, type Scope } from '../../src/contracts/scopes';
import { Team } from '../../src/data/models/team';
import { apiClient, callReaching, errorMessages, eventually, type ApiResponse } from '../helpers/http';
import { documentReader, type Json } from '../helpers/openapi-document';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type SeededTeam, type TestStack } from '../helpers/stack';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
/** Months ahead (within the 365-day limit): created calls wait on a timer, nobody is rung. */
const FAR_AHEAD = new Date(Date.now() + 120 * 86_400_000).toISOString();
const newId = () => new Types.ObjectId().toHexString();

/** What a team owns; A has everything, the deleted team C what the bad-key checks need. */
interface Resources {
  team: SeededTeam;
  scheduledCallId: string;
  scheduledTo: string;
  idempotencyKey: string;
  batchId: string;
  fileId: string;
  batchCallIds: string[];
  completedCallId: string;
  completedTo: string;
  deliveryIds: string[];
  webhookId: string;
  dncNumbers: string[];
  cursors: { phoneCalls: string; transcripts: string; doNotCall: string };
  /** Strings of this team that must never appear in an answer to anyone else. */
  markers: string[];
}

/** One request of an operation: values for the template's path parameters, a query, a body. */
interface Req {
  path?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * B's request that names something of A. `notFound` / `forbidden` / `refused` must be answered
 * exactly as the twin request is, the twin naming an unknown `swap[1]` where the probe names A's
 * `swap[0]`; `invisible` is a success whose answer holds nothing of A.
 */
type Probe =
  | { kind: 'notFound' | 'forbidden' | 'refused'; what: string; req: Req; swap: [string, string] }
  | { kind: 'invisible'; what: string; req: Req };

interface Plan {
  /** A well-formed request of the operation on team `r`'s own resources (the bad-key checks). */
  sample(r: Resources): Req;
  /** Team B's requests against A. */
  probes(a: Resources, b: SeededTeam): Probe[];
}

const EXPECTED_STATUS = { notFound: 404, forbidden: 403, refused: 400 } as const;

const callBody = (team: SeededTeam, to: string, extra: Record<string, unknown> = {}) =>
  seededCallBody(team, to, { callDelayedUntil: FAR_AHEAD, ...extra });
const notFound = (what: string, req: Req, swap: [string, string]): Probe => ({ kind: 'notFound', what, req, swap });
const forbidden = (what: string, req: Req, swap: [string, string]): Probe => ({ kind: 'forbidden', what, req, swap });
const refused = (what: string, req: Req, swap: [string, string]): Probe => ({ kind: 'refused', what, req, swap });
const invisible = (what: string, req: Req): Probe => ({ kind: 'invisible', what, req });
/** B's reads of a list, each query setting parameters to A's values: nothing of A may come back. */
const listProbes = (queries: Array<Record<string, string>>): Probe[] =>
  queries.map((query) => invisible(`?${new URLSearchParams(query).toString()}`, { query }));
/** A 404 probe for each of A's ids in the path parameter `name`, and one in upper case. */
const byIds = (name: string, ids: string[], extra: Req = {}): Probe[] => [
  ...ids.map((id) => notFound(`A's ${name} ${id}`, { ...extra, path: { [name]: id } }, [id, newId()])),
  notFound(`A's ${name} in upper case`, { ...extra, path: { [name]: ids[0]!.toUpperCase() } }, [
    ids[0]!.toUpperCase(),
    newId().toUpperCase(),
  ]),
];
const batchControl = (): Plan => ({
  sample: (r) => ({ path: { batchId: r.batchId } }),
  probes: (a) => byIds('batchId', [a.batchId]),
});
// The document: "a batch or file with no call of the key's team is 404", so A's batchId and fileId
// are as unknown to B as ones that never were ("batch ... not found", "no call with fileId ... found").
const fileControl = (): Plan => ({
  sample: (r) => ({ path: { fileId: r.fileId } }),
  probes: (a) => [notFound("A's fileId", { path: { fileId: a.fileId } }, [a.fileId, `unknown-${newId()}`])],
});

/** How to exercise every /v1 operation; the first test holds it to the document. */
const OPERATIONS: Record<string, Plan> = {
  'POST /v1/phoneCalls': {
    sample: (r) => ({ body: callBody(r.team, '+14155550160') }),
    probes: (a, b) => [
      forbidden("A's teamId", { body: callBody(a.team, '+14155550161') }, [a.team.teamId, newId()]),
      forbidden("A's teamId with B's template", { body: { ...callBody(b, '+14155550161'), teamId: a.team.teamId } }, [
        a.team.teamId,
        newId(),
      ]),
      refused("A's callTemplateId", { body: callBody(b, '+14155550161', { callTemplateId: a.team.templateId }) }, [
        a.team.templateId,
        newId(),
      ]),
      refused(
        "A's phoneNumberId",
        { body: callBody(b, '+14155550161', { phoneNumberId: a.team.phoneNumberIds.vonage }) },
        [a.team.phoneNumberIds.vonage, newId()],
      ),
    ],
  },
  'POST /v1/phoneCalls/batch': {
    sample: (r) => ({ body: { phoneCalls: [callBody(r.team, '+14155550162')], fileId: r.fileId } }),
    probes: (a, b) => [
      forbidden("A's teamId", { body: { phoneCalls: [callBody(a.team, '+14155550163')] } }, [a.team.teamId, newId()]),
      forbidden(
        "A's teamId in the second element",
        { body: { phoneCalls: [callBody(b, '+14155550163'), callBody(a.team, '+14155550164')], fileId: 'b-file' } },
        [a.team.teamId, newId()],
      ),
      refused(
        "A's callTemplateId",
        { body: { phoneCalls: [callBody(b, '+14155550163', { callTemplateId: a.team.templateId })] } },
        [a.team.templateId, newId()],
      ),
      refused(
        "A's phoneNumberId",
        { body: { phoneCalls: [callBody(b, '+14155550163', { phoneNumberId: a.team.phoneNumberIds.telnyx })] } },
        [a.team.phoneNumberIds.telnyx, newId()],
      ),
    ],
  },
  'GET /v1/phoneCalls': {
    sample: (r) => ({ query: { toPhoneNumber: r.scheduledTo } }),
    // Every filter set to A's values, one at a time (each parameter of the document must appear).
    probes: (a) =>
      listProbes([
        {},
        { callTemplateId: a.team.templateId },
        { phoneNumberId: a.team.phoneNumberIds.twilio },
        { createdAfter: new Date(Date.now() - 3_600_000).toISOString() },
        { createdBefore: new Date(Date.now() + 3_600_000).toISOString() },
        { toPhoneNumber: a.scheduledTo },
        { toPhoneNumber: a.completedTo },
        { status: 'queued' },
        { status: 'completed' },
        { fileId: a.fileId },
        { limit: '1000' },
        { cursor: a.cursors.phoneCalls },
      ]),
  },
  'GET /v1/phoneCalls/{id}': {
    sample: (r) => ({ path: { id: r.scheduledCallId } }),
    probes: (a) => byIds('id', [a.scheduledCallId, a.completedCallId, ...a.batchCallIds]),
  },
  'DELETE /v1/phoneCalls/{id}': {
    sample: (r) => ({ path: { id: r.scheduledCallId } }),
    // The completed one too: a 400 "only queued calls can be deleted" would reveal it.
    probes: (a) => byIds('id', [a.scheduledCallId, a.completedCallId, ...a.batchCallIds]),
  },
  'POST /v1/phoneCalls/batch/{batchId}/pause': batchControl(),
  'POST /v1/phoneCalls/batch/{batchId}/resume': batchControl(),
  'POST /v1/phoneCalls/batch/{batchId}/cancel': batchControl(),
  'POST /v1/phoneCalls/file/{fileId}/pause': fileControl(),
  'POST /v1/phoneCalls/file/{fileId}/resume': fileControl(),
  'POST /v1/phoneCalls/file/{fileId}/cancel': fileControl(),
  'GET /v1/doNotCall': {
    sample: (r) => ({ query: { phoneNumber: r.dncNumbers[0]! } }),
    probes: (a) =>
      listProbes([{}, { phoneNumber: a.dncNumbers[0]! }, { limit: '1000' }, { cursor: a.cursors.doNotCall }]),
  },
  'POST /v1/doNotCall': {
    sample: (r) => ({ body: { teamId: r.team.teamId, entries: [{ phoneNumber: '+14155550165' }] } }),
    probes: (a) => [
      forbidden(
        "A's teamId, A's listed number",
        { body: { teamId: a.team.teamId, entries: [{ phoneNumber: a.dncNumbers[0]! }] } },
        [a.team.teamId, newId()],
      ),
      forbidden(
        "A's teamId, a new number",
        { body: { teamId: a.team.teamId, entries: [{ phoneNumber: '+14155550166', reason: 'B says so' }] } },
        [a.team.teamId, newId()],
      ),
    ],
  },
  'DELETE /v1/doNotCall/{phoneNumber}': {
    sample: (r) => ({ path: { phoneNumber: r.dncNumbers[0]! } }),
    probes: (a) =>
      a.dncNumbers.map((number, i) =>
        notFound(`A's listed ${number}`, { path: { phoneNumber: number } }, [number, `+1415555018${i}`]),
      ),
  },
  'POST /v1/webhooks': {
    sample: (r) => ({
      body: { teamId: r.team.teamId, url: 'http://127.0.0.1:9/sample', subscribedEvents: ['*'], method: 'POST' },
    }),
    probes: (a) => [
      forbidden(
        "A's teamId",
        { body: { teamId: a.team.teamId, url: 'http://127.0.0.1:9/b', subscribedEvents: ['*'], method: 'POST' } },
        [a.team.teamId, newId()],
      ),
    ],
  },
  'GET /v1/webhooks/{_id}': {
    sample: (r) => ({ path: { _id: r.webhookId } }),
    probes: (a) => byIds('_id', [a.webhookId]),
  },
  'PATCH /v1/webhooks/{_id}': {
    sample: (r) => ({ path: { _id: r.webhookId }, body: { method: 'GET' } }),
    probes: (a) => [
      ...byIds('_id', [a.webhookId], { body: { url: 'http://127.0.0.1:9/b-steals-a' } }),
      ...byIds('_id', [a.webhookId], { body: { subscribedEvents: ['*'], method: 'GET' } }),
    ],
  },
  'GET /v1/phoneCalls/{id}/webhookDeliveries': {
    sample: (r) => ({ path: { id: r.completedCallId } }),
    probes: (a) => byIds('id', [a.completedCallId, a.scheduledCallId]),
  },
  'POST /v1/webhookDeliveries/{id}/redeliver': {
    sample: (r) => ({ path: { id: r.deliveryIds[0]! } }),
    probes: (a) => byIds('id', a.deliveryIds),
  },
  // The service's shared catalogue: nothing of any team in it.
  'GET /v1/voices': {
    sample: () => ({}),
    probes: () => [invisible('the catalogue', {})],
  },
  'GET /v1/transcripts': {
    sample: (r) => ({ query: { phoneCallId: r.completedCallId } }),
    probes: (a) =>
      listProbes([
        {},
        { phoneCallId: a.completedCallId },
        { phoneCallId: a.scheduledCallId },
        { limit: '1000' },
        { cursor: a.cursors.transcripts },
      ]),
  },
};

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let doc: Json;
/** `METHOD template` of every /v1 operation of the document but the document itself. */
let operations: Array<{ op: string; method: string; template: string; operation: Json }>;
let a: Resources;
let b: SeededTeam;
/** The deleted team's resources and key. */
let c: Resources;
/** An A key made to expire 1 s after it was made, between `before` and `after`. */
let expired: { key: string; keyId: string; before: number; after: number };
let revoked: { key: string; keyId: string };
const withoutScope = new Map<Scope, string>();
let before: unknown;

function urlOf(template: string, req: Req): string {
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = req.path?.[name];
    if (value === undefined) throw new Error(`no value for {${name}} of ${template}`);
    return encodeURIComponent(value);
  });
  return req.query ? `${path}?${new URLSearchParams(req.query).toString()}` : path;
}

function send(key: string | null, method: string, template: string, req: Req): Promise<ApiResponse> {
  return apiClient(stack.baseUrl).request(method, urlOf(template, req), {
    key,
    body: req.body,
    headers: req.headers,
  });
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]!);
      }
    }),
  );
  return results;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The answer's messages with `value` (any letter case) written as <x>. */
const messagesWithout = (res: ApiResponse, status: number, value: string) =>
  errorMessages(res, status).map((m) => m.replace(new RegExp(escapeRegExp(value), 'gi'), '<x>'));

/** The markers of `owner` that the answer carries and the request did not. */
function leaked(owner: Resources, req: unknown, res: ApiResponse): string[] {
  const sent = JSON.stringify(req).toLowerCase();
  const answered = `${JSON.stringify(res.body)} ${JSON.stringify([...res.headers])}`.toLowerCase();
  return owner.markers.filter((m) => !sent.includes(m.toLowerCase()) && answered.includes(m.toLowerCase()));
}

function operationsOfDocument() {
  const found: typeof operations = [];
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    if (!template.startsWith('/v1/') || template === '/v1/openapi.json') continue;
    for (const method of HTTP_METHODS.filter((m) => m in item)) {
      found.push({
        op: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        operation: item[method],
      });
    }
  }
  return found;
}

function parametersOf(template: string, operation: Json, where: 'path' | 'query'): string[] {
  const reader = documentReader(doc);
  const item = (doc.paths as Json)[template] as Json;
  return [...(item.parameters ?? []), ...(operation.parameters ?? [])]
    .map((p: Json) => reader.deref(p, '').value)
    .filter((p) => p.in === where)
    .map((p) => p.name as string);
}

/** Whether the request body schema has a `teamId` property anywhere (batch elements included). */
function bodyNamesTeamId(operation: Json): boolean {
  const reader = documentReader(doc);
  const seen = new Set<string>();
  const walk = (node: unknown): boolean => {
    if (Array.isArray(node)) return node.some(walk);
    if (!node || typeof node !== 'object') return false;
    const object = node as Json;
    if (typeof object.$ref === 'string') {
      if (seen.has(object.$ref)) return false;
      seen.add(object.$ref);
      return walk(reader.deref(object, '').value);
    }
    if (object.properties && typeof object.properties === 'object' && 'teamId' in object.properties) return true;
    return Object.values(object).some(walk);
  };
  return walk(operation.requestBody?.content?.['application/json']?.schema);
}

function scopeOf(operation: Json): Scope {
  const scopes = (operation.security ?? []).flatMap((s: Json) => Object.values(s).flat()) as string[];
  expect(scopes, 'one scope per operation').toHaveLength(1);
  expect(SCOPES).toContain(scopes[0]);
  return scopes[0] as Scope;
}

/** Everything of A, read back with A's key. */
async function snapshotOfA() {
  const client = apiClient(stack.baseUrl, a.team.key);
  const reads = [
    '/v1/phoneCalls?limit=1000',
    ...[a.scheduledCallId, a.completedCallId, ...a.batchCallIds].map((id) => `/v1/phoneCalls/${id}`),
    `/v1/phoneCalls?fileId=${encodeURIComponent(a.fileId)}`,
    `/v1/webhooks/${a.webhookId}`,
    '/v1/doNotCall?limit=1000',
    `/v1/transcripts?phoneCallId=${a.completedCallId}&limit=1000`,
    `/v1/phoneCalls/${a.completedCallId}/webhookDeliveries`,
  ];
  const answers = await Promise.all(reads.map((path) => client.get(path)));
  return Object.fromEntries(reads.map((path, i) => [path, { status: answers[i]!.status, body: answers[i]!.body }]));
}

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await startReceiver();
  const anonymous = apiClient(stack.baseUrl);
  doc = (await anonymous.get('/v1/openapi.json', { key: null })).body as Json;
  operations = operationsOfDocument();
  const teamA = stack.team;
  // Made first, so that it has long expired once the fixtures are built.
  const madeAt = Date.now();
  expired = { ...(await createKey({ team: teamA.teamId, expiresIn: '1s' })), before: madeAt, after: Date.now() };

  const apiA = apiClient(stack.baseUrl, teamA.key);
  const created = async (res: Promise<ApiResponse>, status: number) => {
    const answer = await res;
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    return answer.body;
  };
  const completedTo = '+14155550143';
  const scheduledTo = '+14155550142';
  const idempotencyKey = `tenant-a-${randomBytes(6).toString('hex')}`;
  const fileId = `tenant-a-file-${randomBytes(4).toString('hex')}`;
  const dncNumbers = ['+14155550191', '+14155550192'];
  const webhook = (
    await created(
      apiA.post('/v1/webhooks', {
        teamId: teamA.teamId,
        url: `${receiver.url}/tenant-a/team`,
        subscribedEvents: ['phoneCall.completed'],
        method: 'POST',
      }),
      200,
    )
  ).data;
  const [completed, scheduled, batch, , teamB, teamC] = await Promise.all([
    // Rings the emulator at once and ends completed: transcripts, and a delivery per endpoint.
    created(
      apiA.post(
        '/v1/phoneCalls',
        seededCallBody(teamA, completedTo, {
          nameOfHuman: 'Ada Tenant-A',
          toEmailAddress: 'ada@tenant-a.example',
          phoneCallWebhooks: [
            { url: `${receiver.url}/tenant-a/call`, subscribedEvent: 'phoneCall.completed', secret: 'tenant A secret' },
          ],
        }),
      ),
      201,
    ),
    created(
      apiA.post(
        '/v1/phoneCalls',
        callBody(teamA, scheduledTo, {
          nameOfHuman: 'Grace Tenant-A',
          phoneNumberId: teamA.phoneNumberIds.twilio,
          toEmailAddress: 'grace@tenant-a.example',
        }),
        { headers: { 'Idempotency-Key': idempotencyKey } },
      ),
      201,
    ),
    created(
      apiA.post('/v1/phoneCalls/batch', {
        phoneCalls: [callBody(teamA, '+14155550144'), callBody(teamA, '+14155550145', { telephonyProvider: 'telnyx' })],
        fileId,
        fileName: 'tenant-a.csv',
      }),
      201,
    ),
    created(
      apiA.post('/v1/doNotCall', {
        teamId: teamA.teamId,
        entries: dncNumbers.map((phoneNumber) => ({ phoneNumber, reason: 'tenant A' })),
      }),
      200,
    ),
    stack.seedTeam('Tenant B'),
    stack.seedTeam('Tenant C, deleted'),
  ]);
  b = teamB;

  // A key that worked until it was revoked.
  revoked = await createKey({ team: teamA.teamId });
  expect((await apiA.get(`/v1/phoneCalls/${scheduled.data._id}`, { key: revoked.key })).status).toBe(200);
  await revokeKey({ keyId: revoked.keyId });
  // A key with every scope but one, for each scope.
  await Promise.all(
    SCOPES.map(async (scope) =>
      withoutScope.set(
        scope,
        (await createKey({ team: teamA.teamId, scopes: SCOPES.filter((s) => s !== scope).join(',') })).key,
      ),
    ),
  );

  // The deleted team's own data, made while it existed.
  const apiC = apiClient(stack.baseUrl, teamC.key);
  const fileC = `tenant-c-file-${randomBytes(4).toString('hex')}`;
  const [batchC, webhookC] = await Promise.all([
    created(apiC.post('/v1/phoneCalls/batch', { phoneCalls: [callBody(teamC, '+14155550146')], fileId: fileC }), 201),
    created(
      apiC.post('/v1/webhooks', {
        teamId: teamC.teamId,
        url: 'http://127.0.0.1:9/tenant-c',
        subscribedEvents: ['*'],
        method: 'GET',
      }),
      200,
    ),
    created(apiC.post('/v1/doNotCall', { teamId: teamC.teamId, entries: [{ phoneNumber: '+14155550193' }] }), 200),
  ]);
  const cCallId = batchC.data[0]._id as string;
  expect((await apiC.get(`/v1/phoneCalls/${cCallId}`)).status).toBe(200);
  c = {
    team: teamC,
    scheduledCallId: cCallId,
    scheduledTo: '+14155550146',
    idempotencyKey: '',
    batchId: batchC.batchId,
    fileId: fileC,
    batchCallIds: [cCallId],
    completedCallId: cCallId,
    completedTo: '+14155550146',
    deliveryIds: [newId()],
    webhookId: webhookC.data._id,
    dncNumbers: ['+14155550193'],
    cursors: { phoneCalls: '', transcripts: '', doNotCall: '' },
    markers: [teamC.teamId, cCallId, batchC.batchId, fileC, webhookC.data._id, '+14155550146', '+14155550193'],
  };
  // There is no team-delete command (nor endpoint): an operator removing a team deletes its Team
  // document, which is what this does. Its keys, calls and lists stay behind.
  expect((await Team.deleteOne({ _id: teamC.teamId })).deletedCount).toBe(1);

  // A's completed call: ended, transcribed, and both endpoints' deliveries delivered.
  const completedCallId = completed.data._id as string;
  await callReaching(apiA, completedCallId, 'completed', 60_000, "A's call to complete");
  const deliveries = await eventually(
    async () => {
      const list = (await apiA.get(`/v1/phoneCalls/${completedCallId}/webhookDeliveries`)).body.data as Json[];
      return list.length === 2 && list.every((d) => d.state === 'delivered') ? list : undefined;
    },
    30_000,
    "A's webhook deliveries",
  );
  const transcripts = (await apiA.get(`/v1/transcripts?phoneCallId=${completedCallId}`)).body.data as Json[];
  expect(transcripts.length).toBeGreaterThan(1);
  const cursorOf = async (path: string) => {
    const page = await apiA.get(path);
    expect(typeof page.body.nextCursor, path).toBe('string');
    return page.body.nextCursor as string;
  };
  a = {
    team: teamA,
    scheduledCallId: scheduled.data._id,
    scheduledTo,
    idempotencyKey,
    batchId: batch.batchId,
    fileId,
    batchCallIds: batch.data.map((call: Json) => call._id as string),
    completedCallId,
    completedTo,
    deliveryIds: deliveries.map((d) => d._id as string),
    webhookId: webhook._id,
    dncNumbers,
    cursors: {
      phoneCalls: await cursorOf('/v1/phoneCalls?limit=1'),
      transcripts: await cursorOf(`/v1/transcripts?phoneCallId=${completedCallId}&limit=1`),
      doNotCall: await cursorOf('/v1/doNotCall?limit=1'),
    },
    markers: [],
  };
  a.markers = [
    teamA.teamId,
    teamA.templateId,
    ...Object.values(teamA.phoneNumberIds),
    a.scheduledCallId,
    a.completedCallId,
    ...a.batchCallIds,
    a.batchId,
    a.fileId,
    'tenant-a.csv',
    a.webhookId,
    ...a.deliveryIds,
    ...transcripts.map((t) => t._id as string),
    `${receiver.url}/tenant-a`,
    'tenant-a.example',
    'Tenant-A',
    'tenant A',
    scheduledTo,
    completedTo,
    '+14155550144',
    '+14155550145',
    ...dncNumbers,
    webhook.secret,
  ];
  before = await snapshotOfA();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

describe('tenant isolation: team B against team A, on every /v1 operation of the document', () => {
  it('has a plan for every operation, exercising every path parameter, query parameter and body teamId', () => {
    expect(operations.length).toBeGreaterThanOrEqual(21);
    // An operation added to the document fails here until OPERATIONS says how to exercise it.
    expect(Object.keys(OPERATIONS).sort()).toEqual(operations.map((o) => o.op).sort());
    for (const { op, template, operation } of operations) {
      const probes = OPERATIONS[op]!.probes(a, b);
      expect(probes.length, op).toBeGreaterThan(0);
      const kinds = new Set(probes.map((p) => p.kind));
      const pathParameters = parametersOf(template, operation, 'path');
      // An id in the path: B names A's ids there and is told 404.
      for (const name of pathParameters)
        expect(
          probes.some((p) => p.kind === 'notFound' && p.req.path?.[name] !== undefined),
          `${op}: no 404 probe with A's {${name}}`,
        ).toBe(true);
      // A teamId in the body (batch elements too): B names A's team and is told 403, and only there.
      expect(kinds.has('forbidden'), `${op}: a forbidden probe exactly when the body has a teamId`).toBe(
        bodyNamesTeamId(operation),
      );
      // Every query parameter is set to A's value by some probe.
      for (const name of parametersOf(template, operation, 'query'))
        expect(
          probes.some((p) => p.kind === 'invisible' && p.req.query?.[name] !== undefined),
          `${op}: no probe sets ?${name} to A's value`,
        ).toBe(true);
      // The sample request names only documented parameters.
      const sample = OPERATIONS[op]!.sample(a);
      expect(Object.keys(sample.path ?? {}).sort(), op).toEqual([...pathParameters].sort());
      for (const name of Object.keys(sample.query ?? {}))
        expect(parametersOf(template, operation, 'query'), op).toContain(name);
    }
  });

  it("B is told 404 for A's ids, 403 for A's teamId, 400 for A's templates and numbers, as for ids that never were; lists show nothing of A", async () => {
    const cases = operations.flatMap(({ op, method, template }) =>
      OPERATIONS[op]!.probes(a, b).map((probe) => ({ op, method, template, probe })),
    );
    const problems = await mapLimit(cases, 12, async ({ op, method, template, probe }) => {
      const label = `${op} (${probe.what})`;
      try {
        const res = await send(b.key, method, template, probe.req);
        if (probe.kind === 'invisible') {
          if (res.status !== 200) return `${label}: ${res.status} ${JSON.stringify(res.body)}`;
          const items = res.body.data as Json[];
          if (!Array.isArray(items)) return `${label}: no data array`;
          const foreign = items.filter((item) => item.teamId !== undefined && item.teamId !== b.teamId);
          if (foreign.length) return `${label}: items of another team ${JSON.stringify(foreign)}`;
        } else {
          const status = EXPECTED_STATUS[probe.kind];
          const [foreignValue, unknownValue] = probe.swap;
          const twinReq = JSON.parse(JSON.stringify(probe.req).split(foreignValue).join(unknownValue)) as Req;
          const twin = await send(b.key, method, template, twinReq);
          // Same status, same words: A's thing is as unknown to B as one that never existed.
          expect(messagesWithout(res, status, foreignValue), label).toEqual(
            messagesWithout(twin, status, unknownValue),
          );
        }
        const leaks = leaked(a, probe.req, res);
        if (leaks.length) return `${label}: the answer carries ${leaks.join(', ')}: ${JSON.stringify(res.body)}`;
        return null;
      } catch (err) {
        return `${label}: ${(err as Error).message}`;
      }
    });
    expect(problems.filter(Boolean)).toEqual([]);
    expect(cases.length).toBeGreaterThan(60);
    // None of the refused requests made anything for B either.
    const apiB = apiClient(stack.baseUrl, b.key);
    expect((await apiB.get('/v1/phoneCalls')).body.data).toEqual([]);
    expect((await apiB.get('/v1/doNotCall')).body.data).toEqual([]);
  });

  it('names a team picks itself (fileId, Idempotency-Key, a listed number) stay its own', async () => {
    const apiA = apiClient(stack.baseUrl, a.team.key);
    const apiB = apiClient(stack.baseUrl, b.key);
    // B's own call with the Idempotency-Key A used: a new call of B's, not A's answer replayed.
    const single = await apiB.post('/v1/phoneCalls', callBody(b, '+14155550170'), {
      headers: { 'Idempotency-Key': a.idempotencyKey },
    });
    expect(single.status).toBe(201);
    expect(single.headers.get('idempotent-replayed')).toBeNull();
    expect(single.body.data).toMatchObject({ teamId: b.teamId, toPhoneNumber: '+14155550170' });
    expect(single.body.data._id).not.toBe(a.scheduledCallId);
    // A's very body under A's key name, from B: refused (403), not replayed.
    const replayOfA = await apiB.post(
      '/v1/phoneCalls',
      callBody(a.team, a.scheduledTo, {
        nameOfHuman: 'Grace Tenant-A',
        phoneNumberId: a.team.phoneNumberIds.twilio,
        toEmailAddress: 'grace@tenant-a.example',
      }),
      { headers: { 'Idempotency-Key': a.idempotencyKey } },
    );
    errorMessages(replayOfA, 403);
    expect(JSON.stringify(replayOfA.body)).not.toContain(a.scheduledCallId);

    // B's batch with A's fileId: B's file controls act on B's call only.
    const batch = await apiB.post('/v1/phoneCalls/batch', {
      phoneCalls: [callBody(b, '+14155550171')],
      fileId: a.fileId,
    });
    expect(batch.status).toBe(201);
    const listed = await apiB.get(`/v1/phoneCalls?fileId=${encodeURIComponent(a.fileId)}`);
    expect(listed.body.data.map((call: Json) => call._id)).toEqual([batch.body.data[0]._id]);
    const paused = await apiB.post(`/v1/phoneCalls/file/${encodeURIComponent(a.fileId)}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ action: 'pause', fileId: a.fileId, calls: 1, changed: 1 });
    for (const id of a.batchCallIds) {
      const mine = await apiA.get(`/v1/phoneCalls/${id}`);
      expect(mine.body.data.statusExtraInfo.statusCode).toBe('scheduled');
    }
    const cancelled = await apiB.post(`/v1/phoneCalls/file/${encodeURIComponent(a.fileId)}/cancel`);
    expect(cancelled.body.data).toMatchObject({ action: 'cancel', calls: 1, changed: 1 });
    expect(leaked(a, a.fileId, cancelled)).toEqual([]);
    expect((await apiB.delete(`/v1/phoneCalls/${single.body.data._id}`)).status).toBe(200);

    // B lists a number A listed: B's own entry; B removing it removes B's, not A's.
    const number = a.dncNumbers[0]!;
    const added = await apiB.post('/v1/doNotCall', { teamId: b.teamId, entries: [{ phoneNumber: number }] });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ added: 1, data: [{ teamId: b.teamId, phoneNumber: number }] });
    expect(leaked(a, number, added)).toEqual([]);
    const removed = await apiB.delete(`/v1/doNotCall/${encodeURIComponent(number)}`);
    expect(removed.body.data).toMatchObject({ teamId: b.teamId, phoneNumber: number });
    errorMessages(await apiB.delete(`/v1/doNotCall/${encodeURIComponent(number)}`), 404);
    expect((await apiA.get(`/v1/doNotCall?phoneNumber=${encodeURIComponent(number)}`)).body.data).toMatchObject([
      { teamId: a.team.teamId, phoneNumber: number, reason: 'tenant A' },
    ]);
  });
});

describe('keys: every bad key on every /v1 operation', () => {
  it('expired, revoked, unknown, forged, malformed, missing or lacking the scope: 401 / 403 in the error shape, nothing of the team in it', async () => {
    // The expired key was good until it expired: only its expiry stands between it and team A.
    expect(await authenticateApiKey(expired.key, new Date(expired.before))).toMatchObject({ teamId: a.team.teamId });
    const wait = expired.after + 1_100 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const [keyId, secret] = a.team.key.replace(/^oco_/, '').split('_') as [string, string];
    const invalid = 'the API key is invalid, revoked or expired';
    const keys: Array<{ name: string; key: (scope: Scope) => string | null; status: 401 | 403; message?: string }> = [
      { name: 'missing', key: () => null, status: 401, message: 'the service-api-key header is missing' },
      { name: 'expired', key: () => expired.key, status: 401, message: invalid },
      { name: 'revoked', key: () => revoked.key, status: 401, message: invalid },
      {
        name: 'unknown',
        key: () => `oco_${newId()}_${randomBytes(32).toString('base64url')}`,
        status: 401,
        message: invalid,
      },
      { name: 'forged', key: () => `oco_${keyId}_${secret.slice(0, -4)}AAAA`, status: 401, message: invalid },
      { name: 'garbage', key: () => 'garbage', status: 401, message: invalid },
      { name: 'oco_', key: () => 'oco_', status: 401, message: invalid },
      { name: 'very long', key: () => `oco_${keyId}_${'A'.repeat(8_000)}`, status: 401, message: invalid },
      // UTF-8 bytes on the wire (a header value is bytes; fetch takes them as Latin-1 characters).
      {
        name: 'non-ASCII',
        key: () => Buffer.from(`oco_${keyId}_ключ🔑${secret.slice(10)}`, 'utf8').toString('latin1'),
        status: 401,
        message: invalid,
      },
      { name: 'lacking the scope', key: (scope) => withoutScope.get(scope)!, status: 403 },
    ];
    const cases = operations.flatMap(({ op, method, template, operation }) =>
      keys.map((variant) => ({ op, method, template, scope: scopeOf(operation), variant })),
    );
    const problems = await mapLimit(cases, 16, async ({ op, method, template, scope, variant }) => {
      const label = `${op} with a ${variant.name} key`;
      const req = OPERATIONS[op]!.sample(a);
      try {
        const res = await send(variant.key(scope), method, template, req);
        const messages = errorMessages(res, variant.status);
        const expected = variant.message ?? `the API key lacks the ${scope} scope`;
        if (JSON.stringify(messages) !== JSON.stringify([expected])) return `${label}: ${JSON.stringify(messages)}`;
        const leaks = leaked(a, req, res);
        return leaks.length ? `${label}: the answer carries ${leaks.join(', ')}` : null;
      } catch (err) {
        return `${label}: ${(err as Error).message}`;
      }
    });
    expect(problems.filter(Boolean)).toEqual([]);
  });

  // There is no team-delete command: the Team document is removed directly, as an operator might.
  it("a key of a deleted team is 401 everywhere, and nothing of the team's leftovers comes back", async () => {
    // One at a time, in the document's order, so that a failure reads the same on every run.
    const problems = await mapLimit(operations, 1, async ({ op, method, template }) => {
      const req = OPERATIONS[op]!.sample(c);
      const res = await send(c.team.key, method, template, req);
      try {
        expect(errorMessages(res, 401)).toEqual(['the API key is invalid, revoked or expired']);
        expect(leaked(c, req, res)).toEqual([]);
        return null;
      } catch (err) {
        return `${op}: ${(err as Error).message.slice(0, 300)}`;
      }
    });
    expect(problems.filter(Boolean)).toEqual([]);
  });

  // Refused by Node's HTTP parser before the app runs; answered in the error shape all the same.
  it('a key longer than the header limit is refused in the documented error shape', async () => {
    const res = await send(`oco_${'A'.repeat(20_000)}`, 'GET', '/v1/voices', {});
    expect(errorMessages(res, 431)).toEqual(['request headers are too large']);
  });
});

describe('afterwards', () => {
  it("A's data, read back with A's key, is exactly as it was", async () => {
    expect(await snapshotOfA()).toEqual(before);
  });
});

// Endpoints 4-8 through HTTP against the real servers: create, get, list basics, delete, auth,
// validation and the error shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Types } from 'mongoose';
import { createKey, revokeKey } from '../../src/admin/commands';
import { prepareCalls } from '../../src/calls/prepare-calls';
import { createConversationStore } from '../../src/data/conversation-store';
import { createSecretBox } from '../../src/crypto/secret-box';
import { phoneCallCreateSchema } from '../../src/schemas/phone-calls';
import { SA_PROVIDER, SA_STATUS, SA_TEAM_ID, SA_TO_NUMBER } from '../../src/contracts/search-attributes';
import { callStateQuery } from '../../workflows/messages';
import { apiClient, callReaching, errorMessages, eventually } from '../helpers/http';
import { startApiWith, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  stack = await startTestStack();
  api = apiClient(stack.baseUrl, stack.team.key);
});
afterAll(async () => {
  await stack?.stop();
});

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

describe('POST /v1/phoneCalls', () => {
  it('creates a call: 201, the create form, normalised number, defaults', async () => {
    const res = await api.post('/v1/phoneCalls', callBody({ toEmailAddress: 'grace@example.com' }));
    expect(res.status).toBe(201);
    const call = res.body.data;
    expect(call._id).toMatch(/^[0-9a-f]{24}$/);
    expect(call).toMatchObject({
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: '+14155552671',
      status: 'queued',
      telephonyProvider: 'twilio',
      record: false,
      fromPhoneNumber: '+14155550100',
      toEmailAddress: 'grace@example.com',
      promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
    });
    expect(call.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(call.updatedAt).toBeTypeOf('string');
    expect(call.dispatchBatchId).toBeUndefined();
    expect(call.providerCallId).toBeUndefined();

    const got = await api.get(`/v1/phoneCalls/${call._id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      _id: call._id,
      status: 'queued',
      callOrigin: 'api',
      resultValues: [],
      customTagsHitOnCall: [],
    });
    expect(got.body.data.statusExtraInfo.statusCode).toBe('scheduled');

    const described = await stack.temporal.workflow.getHandle(`phoneCall-${call._id}`).describe();
    expect(described.status.name).toBe('RUNNING');
    expect(described.typedSearchAttributes.get(SA_TEAM_ID)).toBe(stack.team.teamId);
    expect(described.typedSearchAttributes.get(SA_STATUS)).toBe('queued');
    expect(described.typedSearchAttributes.get(SA_TO_NUMBER)).toBe('+14155552671');
    expect(described.typedSearchAttributes.get(SA_PROVIDER)).toBe('twilio');
    expect(described.memo?.summary).toMatch(/^queued · \+14155552671 via twilio at /);
    // Held by the server until due (a start delay, see start-delay.test.ts): no task has run, so it
    // answers no query yet; one that has run answers with its state there.
    const query = stack.temporal.workflow.getHandle(`phoneCall-${call._id}`).query(callStateQuery);
    await expect(query).rejects.toMatchObject({ cause: { message: /Workflow task is not scheduled yet/ } });
  });

  it('uses the phone number and provider given, and never returns webhook secrets', async () => {
    const res = await api.post(
      '/v1/phoneCalls',
      callBody({
        phoneNumberId: stack.team.phoneNumberIds.vonage,
        telephonyProvider: 'vonage',
        record: true,
        phoneCallWebhooks: [
          { url: 'http://127.0.0.1:9/hook', subscribedEvent: 'phoneCall.completed', secret: 'a-long-secret' },
        ],
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      telephonyProvider: 'vonage',
      fromPhoneNumber: '+14155550101',
      record: true,
      phoneNumberId: stack.team.phoneNumberIds.vonage,
    });
    expect(res.body.data.phoneCallWebhooks).toEqual([
      { url: 'http://127.0.0.1:9/hook', subscribedEvent: 'phoneCall.completed' },
    ]);
    const got = await api.get(`/v1/phoneCalls/${res.body.data._id}`);
    expect(JSON.stringify(got.body)).not.toContain('a-long-secret');
  });

  it('refuses a number with an extension rather than dialling it without', async () => {
    const res = await api.post('/v1/phoneCalls', callBody({ toPhoneNumber: '+1 415 555 2671 ext. 12' }));
    expect(errorMessages(res, 400)).toEqual(['toPhoneNumber must be a valid E.164 phone number, without an extension']);
  });

  it("refuses a call whose opening line its provider would refuse to speak (Twilio's TwiML over 4,000 characters, Vonage's talk over 1,500)", async () => {
    const long = callBody({ promptVariableValues: [{ key: 'firstName', value: 'a'.repeat(4000) }] });
    expect(errorMessages(await api.post('/v1/phoneCalls', { ...long, telephonyProvider: 'twilio' }), 400)).toEqual([
      expect.stringMatching(
        /^promptVariableValues with the call template's prompt makes \d+ characters of TwiML, and twilio takes at most 4000/,
      ),
    ]);
    // Before, Vonage took it at create and refused the dial.
    expect(errorMessages(await api.post('/v1/phoneCalls', { ...long, telephonyProvider: 'vonage' }), 400)).toEqual([
      expect.stringMatching(
        /^promptVariableValues with the call template's prompt is \d+ characters, and vonage speaks at most 1500 in one talk action$/,
      ),
    ]);
    // Telnyx speaks no opening line (README, "Known limits"); a line Vonage speaks is taken by all.
    expect((await api.post('/v1/phoneCalls', { ...long, telephonyProvider: 'telnyx' })).status).toBe(201);
    const spoken = callBody({ promptVariableValues: [{ key: 'firstName', value: 'a'.repeat(1400) }] });
    for (const provider of ['twilio', 'vonage'])
      expect((await api.post('/v1/phoneCalls', { ...spoken, telephonyProvider: provider })).status).toBe(201);
  });

  it('records a call due in the past as queued, not scheduled: it is placed at once', async () => {
    const schema = phoneCallCreateSchema.parse(callBody({ callDelayedUntil: '2020-01-01T00:00:00Z' }));
    const prepare = (input: typeof schema) =>
      prepareCalls([{ input, prefix: '' }], {
        teamId: stack.team.teamId,
        origin: 'api',
        secretBox: createSecretBox(stack.config.ENCRYPTION_KEY),
        dispatchBatchId: new Types.ObjectId(),
      });
    const past = await prepare(schema);
    expect(past.problems).toEqual([]);
    expect(past.calls[0]!.doc.statusExtraInfo).toMatchObject({ statusCode: 'queued' });
    const ahead = phoneCallCreateSchema.parse(
      callBody({ callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() }),
    );
    expect((await prepare(ahead)).calls[0]!.doc.statusExtraInfo).toMatchObject({ statusCode: 'scheduled' });
  });

  it('names every invalid field, one message per problem', async () => {
    const res = await api.post('/v1/phoneCalls', {
      teamId: stack.team.teamId,
      toPhoneNumber: '12345',
      fromPhoneNumber: 'not a number',
      status: 'completed',
      telephonyProvider: 'skype',
      record: 'yes',
      callDelayedUntil: '2026-01-01 10:00',
      toEmailAddress: 'nope',
      colour: 'blue',
    });
    const messages = errorMessages(res, 400);
    expect(messages).toEqual(
      expect.arrayContaining([
        'callTemplateId is required',
        'toPhoneNumber must be a valid E.164 phone number',
        'fromPhoneNumber must be a valid E.164 phone number',
        'status must be queued (the only status a call can be created in)',
        'telephonyProvider must be one of twilio, vonage, telnyx',
        'record must be a boolean',
        'callDelayedUntil must be an ISO 8601 date-time with Z or an offset',
        'toEmailAddress must be a valid e-mail address',
        'colour is not allowed',
      ]),
    );
    expect(res.body.error.error).toBe('Bad Request');
  });

  it('checks template, phone number and prompt variables against the team', async () => {
    const other = await stack.seedTeam('Other team');
    const res = await api.post(
      '/v1/phoneCalls',
      callBody({
        callTemplateId: other.templateId,
        phoneNumberId: other.phoneNumberIds.twilio,
      }),
    );
    expect(errorMessages(res, 400)).toEqual(
      expect.arrayContaining([
        'callTemplateId does not name a call template of this team',
        'phoneNumberId does not name a phone number of this team',
      ]),
    );
    const vars = await api.post(
      '/v1/phoneCalls',
      callBody({
        promptVariableValues: [
          { key: 'when', value: 'soon' },
          { key: 'shoeSize', value: '9' },
        ],
      }),
    );
    expect(errorMessages(vars, 400)).toEqual([
      'promptVariableValues must include firstName (required by the call template)',
      'promptVariableValues has unknown key shoeSize (the call template has no such variable)',
    ]);
    const duplicates = await api.post(
      '/v1/phoneCalls',
      callBody({
        promptVariableValues: [
          { key: 'firstName', value: 'A' },
          { key: 'firstName', value: 'B' },
        ],
      }),
    );
    expect(errorMessages(duplicates, 400)).toEqual(['promptVariableValues has a duplicate key firstName']);
    // Every problem at once: a repeated key does not hide the template's verdict on the others.
    const both = [
      { key: 'firstName', value: 'A' },
      { key: 'firstName', value: 'B' },
      { key: 'shoeSize', value: '9' },
    ];
    expect(errorMessages(await api.post('/v1/phoneCalls', callBody({ promptVariableValues: both })), 400)).toEqual([
      'promptVariableValues has a duplicate key firstName',
      'promptVariableValues has unknown key shoeSize (the call template has no such variable)',
    ]);
    const batch = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: [callBody(), callBody({ promptVariableValues: both })],
    });
    expect(errorMessages(batch, 400)).toEqual([
      'phoneCalls.1.promptVariableValues has a duplicate key firstName',
      'phoneCalls.1.promptVariableValues has unknown key shoeSize (the call template has no such variable)',
    ]);
  });

  it('takes a variable the template does not require given empty, alone or in a batch; a required one must not be empty', async () => {
    const values = [
      { key: 'firstName', value: 'Grace' },
      { key: 'when', value: '' },
    ];
    const single = await api.post('/v1/phoneCalls', callBody({ promptVariableValues: values }));
    expect(single.status).toBe(201);
    expect(single.body.data.promptVariableValues).toEqual(values);
    const read = await api.get(`/v1/phoneCalls/${single.body.data._id}`);
    expect(read.body.data.promptVariableValues).toEqual(values);
    const batch = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: [callBody({ promptVariableValues: values }), callBody({ toPhoneNumber: '+14155552672' })],
    });
    expect(batch.status).toBe(201);
    expect(batch.body.data[0].promptVariableValues).toEqual(values);

    const empty = await api.post(
      '/v1/phoneCalls',
      callBody({ promptVariableValues: [{ key: 'firstName', value: '' }] }),
    );
    expect(errorMessages(empty, 400)).toEqual([
      'promptVariableValues must give firstName a value (required by the call template)',
    ]);
    // Spaces alone were taken before, and still are (dropped from the prompt as an empty optional one).
    const spaces = await api.post(
      '/v1/phoneCalls',
      callBody({ promptVariableValues: [{ key: 'firstName', value: '  ' }] }),
    );
    expect(spaces.status).toBe(201);
  });

  it('refuses a schedule more than 365 days ahead, and dates that do not exist', async () => {
    const res = await api.post(
      '/v1/phoneCalls',
      callBody({ callDelayedUntil: new Date(Date.now() + 366 * 86_400_000).toISOString() }),
    );
    expect(errorMessages(res, 400)).toContain('callDelayedUntil must be at most 365 days ahead');
    const year = new Date().getUTCFullYear() + 1;
    expect(
      errorMessages(await api.post('/v1/phoneCalls', callBody({ callDelayedUntil: `${year}-02-30T10:00:00Z` })), 400),
    ).toEqual(['callDelayedUntil must be a real date-time']);
  });

  it('answers malformed JSON, wrong content type and unknown routes in the error shape', async () => {
    expect(
      errorMessages(
        await api.request('POST', '/v1/phoneCalls', {
          rawBody: '{"teamId": ',
          headers: { 'content-type': 'application/json' },
        }),
        400,
      ),
    ).toEqual(['request body is not valid JSON']);
    expect(
      errorMessages(
        await api.request('POST', '/v1/phoneCalls', { rawBody: 'teamId=1', headers: { 'content-type': 'text/plain' } }),
        415,
      ),
    ).toEqual(['content-type must be application/json']);
    // An encoding the body parser cannot undo: named, with those it takes (before, "invalid request").
    expect(
      errorMessages(
        await api.request('POST', '/v1/phoneCalls', {
          rawBody: '{}',
          headers: { 'content-type': 'application/json', 'content-encoding': 'xyz' },
        }),
        415,
      ),
    ).toEqual(['content-encoding "xyz" is not supported: send the body as is (identity), or gzip, deflate or br']);
    errorMessages(await api.get('/v1/nothing-here'), 404);
    errorMessages(await api.get('/v1/phoneCalls/not-an-id'), 404);
    errorMessages(await api.get('/v1/phoneCalls/0123456789abcdef01234567'), 404);
  });

  it('says what is wrong with a body that is JSON but not a call, naming a __proto__ key it refuses', async () => {
    const raw = (rawBody: string) =>
      api.request('POST', '/v1/phoneCalls', { rawBody, headers: { 'content-type': 'application/json' } });
    expect(errorMessages(await api.post('/v1/phoneCalls', [callBody()]), 400)).toEqual(['body must be an object']);
    expect(errorMessages(await raw('null'), 400)).toEqual(['body must be an object']);
    expect(errorMessages(await raw('"a call"'), 400)).toEqual(['body must be an object']);
    const before = (await api.get('/v1/phoneCalls?limit=1000')).body.data.length;
    const valid = JSON.stringify(callBody());
    expect(errorMessages(await raw(`{"__proto__": {"polluted": true}, ${valid.slice(1)}`), 400)).toEqual([
      '__proto__ is not allowed',
    ]);
    const nested = valid.replace('"value":"Grace"', '"value":"Grace","__proto__":{"polluted":true}');
    expect(errorMessages(await raw(nested), 400)).toEqual(['promptVariableValues.0.__proto__ is not allowed']);
    expect((await api.get('/v1/phoneCalls?limit=1000')).body.data.length).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes the key of a request whose path is written in another letter case, as the routes match it', async () => {
    // The routes match paths case-insensitively; the key check once matched `/v1/` only, so `/V1/...`
    // with a valid key was 401 while `/v1/phonecalls` was 200.
    expect((await api.get('/V1/phoneCalls?limit=1')).status).toBe(200);
    expect((await api.get('/v1/phonecalls?limit=1')).status).toBe(200);
    const anonymous = apiClient(stack.baseUrl, 'oco_not_a_key');
    expect((await anonymous.get('/V1/phoneCalls?limit=1')).status).toBe(401);
  });

  it('says what a query string did to a value: a + sent unencoded, a parameter given twice', async () => {
    expect(errorMessages(await api.get('/v1/phoneCalls?toPhoneNumber=+14155551486'), 400)).toEqual([
      'toPhoneNumber must be a valid E.164 phone number (a `+` in a query string must be sent as %2B)',
    ]);
    expect(errorMessages(await api.get('/v1/phoneCalls?createdAfter=2026-11-29T10:00:00+02:00'), 400)).toEqual([
      'createdAfter must be an ISO 8601 date-time with Z or an offset (a `+` in a query string must be sent as %2B)',
    ]);
    expect((await api.get('/v1/phoneCalls?createdAfter=2026-11-29T10:00:00%2B02:00')).status).toBe(200);
    expect(errorMessages(await api.get('/v1/phoneCalls?toPhoneNumber=415%20555%201486'), 400)).toEqual([
      'toPhoneNumber must be a valid E.164 phone number',
    ]);
    expect(errorMessages(await api.get('/v1/phoneCalls?toPhoneNumber=14155551486'), 400)).toEqual([
      'toPhoneNumber must be a valid E.164 phone number',
    ]);
    expect(errorMessages(await api.get('/v1/phoneCalls?status=queued&status=busy&limit=0'), 400)).toEqual([
      'status may be given only once',
      'limit must be between 1 and 1000',
    ]);
    expect((await api.get('/v1/phoneCalls?toPhoneNumber=%2B14155551486&status=queued')).status).toBe(200);
  });

  it('honours Idempotency-Key: same body replays, another body is refused', async () => {
    const body = callBody();
    const headers = { 'Idempotency-Key': `key-${Date.now()}` };
    const first = await api.post('/v1/phoneCalls', body, { headers });
    const second = await api.post('/v1/phoneCalls', body, { headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const list = await api.get(`/v1/phoneCalls?toPhoneNumber=%2B14155552671&limit=1000`);
    expect(list.body.data.filter((c: { _id: string }) => c._id === first.body.data._id)).toHaveLength(1);
    const different = await api.post('/v1/phoneCalls', { ...body, nameOfHuman: 'Ada' }, { headers });
    expect(errorMessages(different, 400)).toEqual(['Idempotency-Key was already used with a different request body']);
    expect(
      errorMessages(await api.post('/v1/phoneCalls', body, { headers: { 'Idempotency-Key': 'x'.repeat(256) } }), 400),
    ).toEqual(['Idempotency-Key must be 1 to 255 characters']);
    // Sent empty is a mistake, not "no key".
    expect(errorMessages(await api.post('/v1/phoneCalls', body, { headers: { 'Idempotency-Key': '' } }), 400)).toEqual([
      'Idempotency-Key must be 1 to 255 characters',
    ]);
  });

  it('refuses a body nested 100,000 deep with 400, also with an Idempotency-Key (its hash overflowed: 500)', async () => {
    const deep = `{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    for (const path of ['/v1/phoneCalls', '/v1/phoneCalls/batch']) {
      for (const headers of [{}, { 'Idempotency-Key': `deep-${Date.now()}` }] as Array<Record<string, string>>) {
        const res = await api.post(path, undefined, {
          rawBody: deep,
          headers: { ...headers, 'content-type': 'application/json' },
        });
        expect(errorMessages(res, 400), `${path} ${JSON.stringify(headers)}`).toContain('x is not allowed');
      }
    }
  });

  it('replays a finished request under its key though a check made before the key would now refuse it', async () => {
    // The webhook host's addresses are checked before the key is looked at; a name may resolve to a
    // private address by the time of a retry (here: the same API, but one that refuses private
    // addresses). Before, the retry got that 400, where its first try got 201.
    const body = callBody({
      phoneCallWebhooks: [
        { url: 'http://127.0.0.1:9/hook', subscribedEvent: 'phoneCall.completed', secret: 'hook secret' },
      ],
    });
    const headers = { 'Idempotency-Key': `checked-before-key-${Date.now()}` };
    const first = await api.post('/v1/phoneCalls', body, { headers });
    expect(first.status).toBe(201);
    const batchHeaders = { 'Idempotency-Key': `checked-before-key-batch-${Date.now()}` };
    const batch = await api.post('/v1/phoneCalls/batch', { phoneCalls: [body] }, { headers: batchHeaders });
    expect(batch.status).toBe(201);
    const strict = await startApiWith(stack, { ALLOW_PRIVATE_WEBHOOK_URLS: false });
    try {
      const strictApi = apiClient(strict.url, stack.team.key);
      const retry = await strictApi.post('/v1/phoneCalls', body, { headers });
      expect(retry.status).toBe(201);
      expect(retry.body).toEqual(first.body);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      const batchRetry = await strictApi.post(
        '/v1/phoneCalls/batch',
        { phoneCalls: [body] },
        { headers: batchHeaders },
      );
      expect(batchRetry.status).toBe(201);
      expect(batchRetry.body).toEqual(batch.body);
      // Without its key, or under another, the same body is refused there.
      expect(errorMessages(await strictApi.post('/v1/phoneCalls', body), 400)[0]).toMatch(
        /^phoneCallWebhooks\.0\.url /,
      );
      const otherKey = { 'Idempotency-Key': `checked-before-key-other-${Date.now()}` };
      expect((await strictApi.post('/v1/phoneCalls', body, { headers: otherKey })).status).toBe(400);
    } finally {
      strict.close();
    }
    for (const created of [first.body.data._id, batch.body.data[0]._id])
      expect((await api.delete(`/v1/phoneCalls/${created}`)).status).toBe(200);
  });

  it('refuses U+0000 in any string, body or query, naming the field, and stores nothing', async () => {
    const before = (await api.get('/v1/phoneCalls?limit=1000')).body.data.length;
    const single = await api.post(
      '/v1/phoneCalls',
      callBody({ nameOfHuman: 'Gr\u0000ace', promptVariableValues: [{ key: 'firstName', value: 'a\u0000' }] }),
    );
    expect(errorMessages(single, 400)).toEqual([
      'nameOfHuman must contain a visible character and no NUL character (U+0000)',
      'promptVariableValues.0.value must not contain the NUL character (U+0000)',
    ]);
    const batch = await api.post('/v1/phoneCalls/batch', { phoneCalls: [callBody()], fileName: 'x\u0000.csv' });
    expect(errorMessages(batch, 400)).toEqual(['fileName must not contain the NUL character (U+0000)']);
    expect(errorMessages(await api.get('/v1/phoneCalls?fileId=%00'), 400)).toEqual([
      'fileId must not contain the NUL character (U+0000)',
    ]);
    expect((await api.get('/v1/phoneCalls?limit=1000')).body.data.length).toBe(before);
  });

  it('refuses half of a surrogate pair alone in any string, naming the field, and stores nothing', async () => {
    // The store would keep U+FFFD in its place: the call read back would differ from the create's answer.
    const before = (await api.get('/v1/phoneCalls?limit=1000')).body.data.length;
    const res = await api.post(
      '/v1/phoneCalls',
      callBody({ nameOfHuman: 'x\ud800y', promptVariableValues: [{ key: 'firstName', value: '\udc00' }] }),
    );
    expect(errorMessages(res, 400)).toEqual([
      'nameOfHuman must be valid Unicode text (it holds half of a surrogate pair alone)',
      'promptVariableValues.0.value must be valid Unicode text (it holds half of a surrogate pair alone)',
    ]);
    // A whole pair (an emoji) is text like any other.
    const emoji = await api.post('/v1/phoneCalls', callBody({ nameOfHuman: 'Ada \ud83d\ude00' }));
    expect(emoji.status).toBe(201);
    expect((await api.get(`/v1/phoneCalls/${emoji.body.data._id}`)).body.data.nameOfHuman).toBe('Ada 😀');
    expect((await api.get('/v1/phoneCalls?limit=1000')).body.data.length).toBe(before + 1);
  });

  it('refuses names that trim to nothing, and hours past 23', async () => {
    expect(errorMessages(await api.post('/v1/phoneCalls', callBody({ nameOfHuman: ' \ufeff ' })), 400)).toEqual([
      'nameOfHuman must contain a visible character and no NUL character (U+0000)',
    ]);
    expect(errorMessages(await api.get('/v1/phoneCalls?createdAfter=2026-01-01T24:00Z'), 400)).toEqual([
      'createdAfter must be an ISO 8601 date-time with Z or an offset',
    ]);
  });
});

describe('authentication and tenancy', () => {
  it('401 without a key, with a bad key, an expired key or a revoked key', async () => {
    const path = `/v1/phoneCalls`;
    expect(errorMessages(await api.get(path, { key: null }), 401)).toEqual(['the service-api-key header is missing']);
    // Credentials come first: without them, nothing else about the request is judged.
    errorMessages(
      await api.request('POST', path, { key: null, rawBody: 'x', headers: { 'content-type': 'text/plain' } }),
      401,
    );
    expect(errorMessages(await api.get(path, { key: 'oco_nope' }), 401)[0]).toContain('invalid');
    const forged = stack.team.key.slice(0, -4) + 'AAAA';
    errorMessages(await api.get(path, { key: forged }), 401);

    const expiring = await createKey({ team: stack.team.teamId, expiresIn: '1s' });
    expect((await api.get(path, { key: expiring.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    errorMessages(await api.get(path, { key: expiring.key }), 401);

    const revoked = await createKey({ team: stack.team.teamId });
    expect((await api.get(path, { key: revoked.key })).status).toBe(200);
    await revokeKey({ keyId: revoked.keyId });
    errorMessages(await api.get(path, { key: revoked.key }), 401);
  });

  it("403 for a missing scope and for another team in the body; 404 for another team's call", async () => {
    const readOnly = await createKey({ team: stack.team.teamId, scopes: 'calls:read' });
    expect(errorMessages(await api.post('/v1/phoneCalls', callBody(), { key: readOnly.key }), 403)).toEqual([
      'the API key lacks the calls:write scope',
    ]);
    expect((await api.get('/v1/phoneCalls', { key: readOnly.key })).status).toBe(200);
    const noCalls = await createKey({ team: stack.team.teamId, scopes: 'webhooks:read' });
    errorMessages(await api.get('/v1/phoneCalls', { key: noCalls.key }), 403);

    const other = await stack.seedTeam('Tenant B');
    expect(errorMessages(await api.post('/v1/phoneCalls', callBody({ teamId: other.teamId })), 403)).toEqual([
      'teamId is not the team of this API key',
    ]);

    const theirs = await apiClient(stack.baseUrl, other.key).post('/v1/phoneCalls', {
      teamId: other.teamId,
      callTemplateId: other.templateId,
      toPhoneNumber: '+14155552671',
      promptVariableValues: [{ key: 'firstName', value: 'B' }],
      callDelayedUntil: inAnHour(),
    });
    expect(theirs.status).toBe(201);
    errorMessages(await api.get(`/v1/phoneCalls/${theirs.body.data._id}`), 404);
    errorMessages(await api.delete(`/v1/phoneCalls/${theirs.body.data._id}`), 404);
    const mine = await api.get('/v1/phoneCalls?limit=1000');
    expect(mine.body.data.some((c: { _id: string }) => c._id === theirs.body.data._id)).toBe(false);
  });
});

describe('scheduling and deletion', () => {
  it('does not dial before callDelayedUntil and dials after it', async () => {
    const to = '+14155553001';
    const at = new Date(Date.now() + 4_000);
    const res = await api.post('/v1/phoneCalls', callBody({ toPhoneNumber: to, callDelayedUntil: at.toISOString() }));
    expect(res.status).toBe(201);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(stack.emulator.callsTo(to)).toBe(0);
    expect((await api.get(`/v1/phoneCalls/${res.body.data._id}`)).body.data.status).toBe('queued');
    const completed = await callReaching(api, res.body.data._id, 'completed', 60_000);
    expect(Date.parse(completed.callTriggeredAt)).toBeGreaterThanOrEqual(at.getTime());
    expect(stack.emulator.callsTo(to)).toBe(1);
  });

  it('places a call scheduled in the past at once', async () => {
    const to = '+14155553002';
    const res = await api.post(
      '/v1/phoneCalls',
      callBody({ toPhoneNumber: to, callDelayedUntil: new Date(Date.now() - 60_000).toISOString() }),
    );
    expect(res.status).toBe(201);
    await eventually(async () => (stack.emulator.callsTo(to) === 1 ? true : undefined), 20_000, 'the dial');
  });

  it('keeps a scheduled call across a worker restart', async () => {
    const to = '+14155553003';
    const res = await api.post(
      '/v1/phoneCalls',
      callBody({ toPhoneNumber: to, callDelayedUntil: new Date(Date.now() + 3_000).toISOString() }),
    );
    expect(res.status).toBe(201);
    await stack.stopWorker();
    await new Promise((r) => setTimeout(r, 4_000));
    expect(stack.emulator.callsTo(to)).toBe(0);
    await stack.startWorker();
    await callReaching(api, res.body.data._id, 'completed', 60_000, 'the call to complete after the restart');
    expect(stack.emulator.callsTo(to)).toBe(1);
  });

  it('deletes a queued call: 200 with the call as it was, then 404, and it never rings', async () => {
    const to = '+14155553004';
    const res = await api.post(
      '/v1/phoneCalls',
      callBody({ toPhoneNumber: to, callDelayedUntil: new Date(Date.now() + 3_000).toISOString() }),
    );
    const id = res.body.data._id;
    const deleted = await api.delete(`/v1/phoneCalls/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ _id: id, status: 'queued', toPhoneNumber: to });
    errorMessages(await api.get(`/v1/phoneCalls/${id}`), 404);
    errorMessages(await api.delete(`/v1/phoneCalls/${id}`), 404);
    await new Promise((r) => setTimeout(r, 4_000));
    expect(stack.emulator.callsTo(to)).toBe(0);
    const handle = stack.temporal.workflow.getHandle(`phoneCall-${id}`);
    expect((await handle.result()).phase).toBe('deleted');
    // The Web UI's filter on CallStatus no longer counts it queued.
    expect((await handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('deleted');
  });

  it('deleting a call queued again for its redial removes what its earlier attempt left: recording, transcript', async () => {
    // What a capture of an earlier attempt (a voicemail message left, a machine answered) wrote for a
    // call now waiting to redial, and the same for a neighbour call that stays.
    const conversations = createConversationStore();
    const [id, neighbourId] = await Promise.all(
      ['+14155553006', '+14155553007'].map(
        async (to) => (await api.post('/v1/phoneCalls', callBody({ toPhoneNumber: to }))).body.data._id as string,
      ),
    );
    const ref = (callId: string) => ({
      _id: new Types.ObjectId(callId),
      teamId: new Types.ObjectId(stack.team.teamId),
    });
    const tokens = new Map<string, string>();
    for (const callId of [id!, neighbourId!]) {
      tokens.set(
        callId,
        await conversations.saveRecording(ref(callId), Buffer.from('RIFF-earlier-attempt'), 'audio/wav'),
      );
      await conversations.replaceTranscript(ref(callId), [
        { speaker: 'agent', text: 'Hi Grace, please call us back.', at: new Date(Date.now() - 2_000) },
        { speaker: 'human', text: '(the machine beeps)', at: new Date(Date.now() - 1_000) },
      ]);
    }
    const transcriptOf = async (callId: string) =>
      (await api.get(`/v1/transcripts?phoneCallId=${callId}`)).body.data as unknown[];
    const recording = (callId: string) => fetch(`${stack.baseUrl}/recordings/${tokens.get(callId)}.wav`);
    expect(await transcriptOf(id!)).toHaveLength(2);
    expect((await recording(id!)).status).toBe(200);

    expect((await api.delete(`/v1/phoneCalls/${id}`)).status).toBe(200);
    expect(await transcriptOf(id!)).toEqual([]);
    expect((await recording(id!)).status).toBe(404);
    expect(await transcriptOf(neighbourId!)).toHaveLength(2);
    expect((await recording(neighbourId!)).status).toBe(200);
    await api.delete(`/v1/phoneCalls/${neighbourId}`);
  });

  it('refuses to delete a call that is no longer queued', async () => {
    const to = '+14155553005';
    const res = await api.post('/v1/phoneCalls', callBody({ toPhoneNumber: to, callDelayedUntil: undefined }));
    const id = res.body.data._id;
    await callReaching(api, id, 'completed', 60_000);
    expect(errorMessages(await api.delete(`/v1/phoneCalls/${id}`), 400)).toEqual([
      'only queued calls can be deleted; status is completed',
    ]);
  });

  it('never both deletes and rings a call when the delete races the dial', async () => {
    const runs = 16;
    const outcomes = await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        const to = `+1415555${String(4000 + i).padStart(4, '0')}`;
        const dialAt = Date.now() + 1_500;
        const res = await api.post(
          '/v1/phoneCalls',
          callBody({ toPhoneNumber: to, callDelayedUntil: new Date(dialAt).toISOString() }),
        );
        const id = res.body.data._id;
        // Aim the delete at the moment the timer fires, spread a little either side.
        await new Promise((r) => setTimeout(r, Math.max(0, dialAt - Date.now() + (i % 8) * 40 - 160)));
        const deleted = await api.delete(`/v1/phoneCalls/${id}`);
        return { id, to, deleted };
      }),
    );
    await new Promise((r) => setTimeout(r, 3_000));
    let deletedCount = 0;
    for (const { id, to, deleted } of outcomes) {
      const rang = stack.emulator.callsTo(to);
      if (deleted.status === 200) {
        deletedCount += 1;
        expect(rang, `call ${id} was deleted and rung`).toBe(0);
        expect((await api.get(`/v1/phoneCalls/${id}`)).status).toBe(404);
      } else {
        expect(errorMessages(deleted, 400)[0]).toMatch(/^only queued calls can be deleted; status is /);
        expect(rang, `call ${id} was neither deleted nor rung`).toBe(1);
      }
    }
    expect(deletedCount + outcomes.filter((o) => o.deleted.status === 400).length).toBe(runs);
  });
});

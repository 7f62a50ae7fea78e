// Endpoints 1-3 and the delivery of every call event: signed per Standard Webhooks (verified with
// the independent `standardwebhooks` package), POST and GET, retries, 410, ordering, a worker
// restart while the receiver is down, and the SSRF guard.
import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/admin/commands';
import { callWorkflowId } from '../../src/contracts/ids';
import { Webhook } from '../../src/data/models/webhook';
import { WebhookDelivery } from '../../src/data/models/webhook-delivery';
import { apiClient, callReaching, errorMessages, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { startApiWith, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  stack = await startTestStack({ env: { WEBHOOK_RETRY_DELAYS: '300ms,600ms,1s,2s,3s,5s' } });
  api = apiClient(stack.baseUrl, stack.team.key);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const STATUS_ORDER = [
  'phoneCall.queued',
  'phoneCall.ringing',
  'phoneCall.inProgress',
  'transcript.created',
  'phoneCall.completed',
];

async function createWebhook(
  path: string,
  subscribedEvents: string[],
  method: 'GET' | 'POST' = 'POST',
  client = api,
  teamId = stack.team.teamId,
) {
  const res = await client.post('/v1/webhooks', { teamId, url: `${receiver.url}${path}`, subscribedEvents, method });
  expect(res.status).toBe(200);
  return res.body.data as { _id: string; secret: string };
}

async function placeCall(
  client: ReturnType<typeof apiClient>,
  teamId: string,
  templateId: string,
  to: string,
  extra: Record<string, unknown> = {},
) {
  const res = await client.post('/v1/phoneCalls', {
    teamId,
    callTemplateId: templateId,
    toPhoneNumber: to,
    promptVariableValues: [{ key: 'firstName', value: 'Lin' }],
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body.data._id as string;
}

function verifyPost(secret: string, request: { headers: Record<string, unknown>; body: string }) {
  return new StandardWebhook(secret).verify(request.body, request.headers as Record<string, string>) as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };
}

describe('webhook endpoints', () => {
  it('creates with a generated secret shown once, reads and updates without it', async () => {
    const created = await api.post('/v1/webhooks', {
      teamId: stack.team.teamId,
      url: 'https://hooks.example.com/calls',
      subscribedEvents: ['phoneCall.completed'],
      method: 'POST',
    });
    expect(created.status).toBe(200);
    const hook = created.body.data;
    expect(Object.keys(hook).sort()).toEqual([
      '_id',
      'createAt',
      'method',
      'secret',
      'subscribedEvents',
      'teamId',
      'updatedAt',
      'url',
    ]);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

    const got = await api.get(`/v1/webhooks/${hook._id}`);
    expect(got.status).toBe(200);
    expect(got.body.data.secret).toBeUndefined();
    expect(got.body.data).toMatchObject({
      _id: hook._id,
      url: 'https://hooks.example.com/calls',
      createAt: hook.createAt,
    });

    const patched = await api.patch(`/v1/webhooks/${hook._id}`, { subscribedEvents: ['*'], method: 'GET' });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      subscribedEvents: ['*'],
      method: 'GET',
      url: 'https://hooks.example.com/calls',
    });
    expect(patched.body.data.secret).toBeUndefined();
  });

  it('validates every field and names it', async () => {
    const res = await api.post('/v1/webhooks', {
      teamId: stack.team.teamId,
      url: 'ftp://x',
      subscribedEvents: ['phoneCall.exploded'],
      method: 'PUT',
      extra: true,
    });
    expect(errorMessages(res, 400)).toEqual(
      expect.arrayContaining([
        'url must be an absolute http or https URL',
        'subscribedEvents.0 must be a known event name or *',
        'method must be GET or POST',
        'extra is not allowed',
      ]),
    );
    expect(
      errorMessages(
        await api.post('/v1/webhooks', {
          teamId: stack.team.teamId,
          url: 'https://a.example',
          subscribedEvents: [],
          method: 'POST',
        }),
        400,
      ),
    ).toEqual(['subscribedEvents must not be empty']);
    expect(errorMessages(await api.post('/v1/webhooks', {}), 400)).toEqual(
      expect.arrayContaining([
        'teamId is required',
        'url is required',
        'subscribedEvents is required',
        'method is required',
      ]),
    );
    const hook = await createWebhook('/validation', ['phoneCall.completed']);
    expect(errorMessages(await api.patch(`/v1/webhooks/${hook._id}`, {}), 400)).toEqual([
      'body must contain at least one of url, subscribedEvents, method',
    ]);
    expect(errorMessages(await api.patch(`/v1/webhooks/${hook._id}`, { secret: 'mine' }), 400)).toEqual([
      'secret is not allowed',
      'body must contain at least one of url, subscribedEvents, method',
    ]);
  });

  it('takes a URL only as a URI, stored and answered as sent: what is shown is what is called', async () => {
    // `new URL` took these, rewriting them (the tab and newline dropped, the space encoded, the one
    // slash made two, the name made punycode): the hook shown was not the one called.
    const asUri =
      'url must be written as a URI: http:// or https://, with spaces and characters outside ASCII percent-encoded (a name in another script as punycode, xn--)';
    for (const url of [
      'https://hooks.example.com/a b',
      'https://hooks.example.com/a\n\tb',
      ' https://hooks.example.com/lead',
      'https:/hooks.example.com/one-slash',
      'https://bücher.example/x',
    ]) {
      const body = { teamId: stack.team.teamId, url, subscribedEvents: ['*'], method: 'POST' };
      expect(errorMessages(await api.post('/v1/webhooks', body), 400), url).toEqual([asUri]);
    }
    // No host where one belongs: `new URL` took the path's first part as the host (`http://hooks.example.com/x`).
    for (const url of ['http:///hooks.example.com/x', 'HTTPS:////hooks.example.com/x']) {
      const body = { teamId: stack.team.teamId, url, subscribedEvents: ['*'], method: 'POST' };
      expect(errorMessages(await api.post('/v1/webhooks', body), 400), url).toEqual([
        'url must name its host right after http:// or https://',
      ]);
    }
    const hook = await api.post('/v1/webhooks', {
      teamId: stack.team.teamId,
      url: 'https://xn--bcher-kva.example/a%20b?x=1&y=%C3%BC#f',
      subscribedEvents: ['*'],
      method: 'POST',
    });
    expect(hook.status).toBe(200);
    expect(hook.body.data.url).toBe('https://xn--bcher-kva.example/a%20b?x=1&y=%C3%BC#f');
    expect(
      errorMessages(await api.patch(`/v1/webhooks/${hook.body.data._id}`, { url: 'https://x.example/ a' }), 400),
    ).toEqual([asUri]);
    expect(errorMessages(await api.get('/v1/phoneCalls?cursor=' + 'c'.repeat(201)), 400)).toEqual([
      'cursor must be at most 200 characters',
    ]);
  });

  it('keeps teams apart and checks scopes', async () => {
    const other = await stack.seedTeam('Webhook tenant');
    const theirs = await createWebhook('/theirs', ['*'], 'POST', apiClient(stack.baseUrl, other.key), other.teamId);
    errorMessages(await api.get(`/v1/webhooks/${theirs._id}`), 404);
    errorMessages(await api.patch(`/v1/webhooks/${theirs._id}`, { method: 'GET' }), 404);
    errorMessages(
      await api.post('/v1/webhooks', {
        teamId: other.teamId,
        url: 'https://a.example',
        subscribedEvents: ['*'],
        method: 'POST',
      }),
      403,
    );
    const readOnly = await createKey({ team: stack.team.teamId, scopes: 'webhooks:read' });
    errorMessages(
      await api.post(
        '/v1/webhooks',
        { teamId: stack.team.teamId, url: 'https://a.example', subscribedEvents: ['*'], method: 'POST' },
        { key: readOnly.key },
      ),
      403,
    );
    errorMessages(await api.get('/v1/webhooks/not-an-id'), 404);
  });

  it('refuses loopback, private, link-local and metadata addresses unless allowed', async () => {
    const strict = await startApiWith(stack, { ALLOW_PRIVATE_WEBHOOK_URLS: false });
    try {
      const client = apiClient(strict.url, stack.team.key);
      for (const url of [
        'http://127.0.0.1/x',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/x',
        'http://10.0.0.8/x',
        'http://192.168.1.1/x',
        'http://172.16.5.4/x',
        'http://localhost:8080/x',
      ]) {
        const res = await client.post('/v1/webhooks', {
          teamId: stack.team.teamId,
          url,
          subscribedEvents: ['*'],
          method: 'POST',
        });
        expect(errorMessages(res, 400)[0], url).toMatch(/^url /);
      }
      const hook = await createWebhook('/ok-but-private', ['*']);
      errorMessages(await client.patch(`/v1/webhooks/${hook._id}`, { url: 'http://127.0.0.2/x' }), 400);
      // A call's own webhooks are held to the same rule.
      const call = await client.post('/v1/phoneCalls', {
        teamId: stack.team.teamId,
        callTemplateId: stack.team.templateId,
        toPhoneNumber: '+14155558009',
        promptVariableValues: [{ key: 'firstName', value: 'X' }],
        phoneCallWebhooks: [
          { url: 'http://169.254.169.254/latest', subscribedEvent: '*', secret: 'long-enough-secret' },
        ],
      });
      expect(errorMessages(call, 400)[0]).toMatch(/^phoneCallWebhooks\.0\.url /);
    } finally {
      strict.close();
    }
  });
});

describe('delivery', () => {
  it("delivers every event of a call, in order, signed, by POST and by GET, and to the call's own webhooks", async () => {
    const team = await stack.seedTeam('Delivery team');
    const client = apiClient(stack.baseUrl, team.key);
    const post = await createWebhook('/all', ['*'], 'POST', client, team.teamId);
    const get = await createWebhook(
      '/completed-get',
      ['phoneCall.completed', 'phoneCall.deleted'],
      'GET',
      client,
      team.teamId,
    );
    const callSecret = 'per-call-secret-42';
    const callId = await placeCall(client, team.teamId, team.templateId, '+14155558001', {
      phoneCallWebhooks: [
        { url: `${receiver.url}/per-call`, subscribedEvent: 'phoneCall.completed', secret: callSecret },
      ],
    });

    const events = await eventually(
      async () => {
        const mine = receiver.at('/all').filter((r) => r.body.includes(callId));
        return mine.length >= STATUS_ORDER.length ? mine : undefined;
      },
      60_000,
      'all events at /all',
    );
    const payloads = events.map((r) => verifyPost(post.secret, r));
    expect(payloads.map((p) => p.type)).toEqual(STATUS_ORDER);
    expect(new Set(events.map((r) => r.headers['webhook-id'])).size).toBe(STATUS_ORDER.length);
    const completed = payloads.at(-1)!;
    expect(completed.data).toMatchObject({ _id: callId, status: 'completed' });
    expect(completed.data.phoneCallWebhooks).toEqual([
      { url: `${receiver.url}/per-call`, subscribedEvent: 'phoneCall.completed' },
    ]);
    const transcript = payloads.find((p) => p.type === 'transcript.created')!;
    expect((transcript.data as { phoneCallId: string; transcripts: unknown[] }).phoneCallId).toBe(callId);
    expect((transcript.data as { transcripts: unknown[] }).transcripts.length).toBeGreaterThan(1);

    const getRequest = await eventually(
      async () => receiver.at('/completed-get').find((r) => r.query.includes(callId)),
      30_000,
      'the GET delivery',
    );
    expect(getRequest.method).toBe('GET');
    const params = new URLSearchParams(getRequest.query);
    expect(Object.fromEntries(params)).toMatchObject({
      type: 'phoneCall.completed',
      phoneCallId: callId,
      status: 'completed',
    });
    // The library's verify() also JSON-parses the content, so recompute the signature over the query.
    const expected = new StandardWebhook(get.secret).sign(
      String(getRequest.headers['webhook-id']),
      new Date(Number(getRequest.headers['webhook-timestamp']) * 1000),
      getRequest.query,
    );
    expect(String(getRequest.headers['webhook-signature']).split(' ')).toContain(expected);

    const perCall = await eventually(
      async () => receiver.at('/per-call').find((r) => r.body.includes(callId)),
      30_000,
      'the per-call delivery',
    );
    expect(perCall.method).toBe('POST');
    const verified = new StandardWebhook(Buffer.from(callSecret).toString('base64')).verify(
      perCall.body,
      perCall.headers as Record<string, string>,
    ) as { type: string };
    expect(verified.type).toBe('phoneCall.completed');
    // Its workflow was started knowing its own webhooks' events: what spares most endpoint lookups a
    // read of the call.
    const { events: started } = await stack.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
    const startPayload = started![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(JSON.parse(Buffer.from(startPayload.data!).toString('utf8'))).toMatchObject({
      ownWebhookEvents: ['phoneCall.completed'],
      paced: true,
      slotsByLocalActivity: true,
      streamEventsByActivity: true,
      routeWithWrites: true,
    });
    // A call of today asks its pacer without the patch checks that calls from before replay behind.
    const markers = started!.map((e) => e.markerRecordedEventAttributes?.markerName).filter(Boolean);
    expect(markers).not.toContain('core_patch');
    // Three local activities: the queued event's endpoint lookup, the slot's request and its release.
    // Every later event went with the write that made it (routeWithWrites), with no lookup of its own.
    expect(markers).toEqual(['core_local_activity', 'core_local_activity', 'core_local_activity']);
    // Three streams, one started per endpoint; /all's later events were handed over by the activities
    // that wrote them, with no signal command in the call's history.
    expect(started!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(3);
    expect(started!.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toEqual([]);

    const history = await WebhookDelivery.find({ phoneCallId: callId }).lean();
    expect(history.length).toBe(STATUS_ORDER.length + 2);
    expect(
      history.every((d) => d.state === 'delivered' && d.attempts.length === 1 && d.attempts[0]!.statusCode === 200),
    ).toBe(true);
  });

  it("spares a new call's workflow the queued event's lookup only while nothing subscribes to it", async () => {
    const team = await stack.seedTeam('Queued lookup team');
    const client = apiClient(stack.baseUrl, team.key);
    const startInput = async (callId: string) => {
      const { events } = await stack.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
      const payload = events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      return JSON.parse(Buffer.from(payload.data!).toString('utf8')) as { queuedEventUnsubscribed?: boolean };
    };
    // No team webhook, and the call's own subscribes to another event: single and batch creates alike.
    const own = [{ url: `${receiver.url}/own`, subscribedEvent: 'phoneCall.completed', secret: 'a-long-secret' }];
    const single = await placeCall(client, team.teamId, team.templateId, '+14155557311', { phoneCallWebhooks: own });
    expect(await startInput(single)).toMatchObject({ queuedEventUnsubscribed: true });
    const batch = await client.post('/v1/phoneCalls/batch', {
      phoneCalls: [
        {
          teamId: team.teamId,
          callTemplateId: team.templateId,
          toPhoneNumber: '+14155557312',
          promptVariableValues: [{ key: 'firstName', value: 'Lin' }],
        },
      ],
    });
    expect(batch.status).toBe(201);
    expect(await startInput(batch.body.data[0]._id as string)).toMatchObject({ queuedEventUnsubscribed: true });
    // The call's own webhook on queued, then a team webhook on it: looked up, and delivered.
    const ownQueued = await placeCall(client, team.teamId, team.templateId, '+14155557313', {
      phoneCallWebhooks: [{ ...own[0], subscribedEvent: 'phoneCall.queued' }],
    });
    expect(await startInput(ownQueued)).not.toHaveProperty('queuedEventUnsubscribed');
    await createWebhook('/queued-watch', ['phoneCall.queued'], 'POST', client, team.teamId);
    const watched = await placeCall(client, team.teamId, team.templateId, '+14155557314');
    expect(await startInput(watched)).not.toHaveProperty('queuedEventUnsubscribed');
    await eventually(
      async () => receiver.at('/queued-watch').find((r) => r.body.includes(watched)),
      30_000,
      'the queued event at the team webhook',
    );
  });

  it('delivers the busy, noAnswer, failed and cancelled events, signed', async () => {
    const team = await stack.seedTeam('Outcome events team');
    const client = apiClient(stack.baseUrl, team.key);
    const hook = await createWebhook('/outcomes', ['*'], 'POST', client, team.teamId);
    const expected: Record<string, string> = {};
    for (const [digits, type] of [
      ['1486', 'phoneCall.busy'],
      ['1408', 'phoneCall.noAnswer'],
      ['1404', 'phoneCall.failed'],
    ] as const) {
      expected[await placeCall(client, team.teamId, team.templateId, `+1415555${digits}`)] = type;
    }
    const queued = await placeCall(client, team.teamId, team.templateId, '+14155558005', {
      callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expected[queued] = 'phoneCall.cancelled';
    await stack.temporal.workflow.getHandle(`phoneCall-${queued}`).cancel();
    for (const [callId, type] of Object.entries(expected)) {
      const delivery = await eventually(
        async () =>
          receiver.at('/outcomes').find((r) => r.body.includes(callId) && r.body.includes(`"type":"${type}"`)),
        60_000,
        `${type} for ${callId}`,
      );
      expect(verifyPost(hook.secret, delivery)).toMatchObject({
        type,
        data: { _id: callId, status: type.split('.')[1] },
      });
    }
  });

  it('refuses a call webhook secret that claims to be whsec_ but is not base64', async () => {
    const res = await api.post('/v1/phoneCalls', {
      teamId: stack.team.teamId,
      callTemplateId: stack.team.templateId,
      toPhoneNumber: '+14155558010',
      promptVariableValues: [{ key: 'firstName', value: 'X' }],
      phoneCallWebhooks: [{ url: `${receiver.url}/x`, subscribedEvent: '*', secret: 'whsec_not base64!' }],
    });
    expect(errorMessages(res, 400)).toEqual([
      'phoneCallWebhooks.0.secret starting with whsec_ must continue with padded standard base64',
    ]);
  });

  it('a delivery stream that ended early is replaced, and the call is not affected', async () => {
    const team = await stack.seedTeam('Stream team');
    const client = apiClient(stack.baseUrl, team.key);
    const hook = await createWebhook('/stream', ['*'], 'POST', client, team.teamId);
    const callId = await placeCall(client, team.teamId, team.templateId, '+14155558011', {
      callDelayedUntil: new Date(Date.now() + 3_000).toISOString(),
    });
    await eventually(
      async () => receiver.at('/stream').find((r) => r.body.includes(callId)),
      30_000,
      'the queued event',
    );
    await stack.temporal.workflow
      .getHandle(`webhookDelivery-${callId}-wh-${hook._id}`)
      .terminate('test: the stream ends early');
    await callReaching(client, callId, 'completed', 60_000);
    const types = await eventually(
      async () => {
        const seen = receiver
          .at('/stream')
          .filter((r) => r.body.includes(callId))
          .map((r) => verifyPost(hook.secret, r).type);
        return seen.includes('phoneCall.completed') ? seen : undefined;
      },
      30_000,
      'the completed event',
    );
    expect([...new Set(types)]).toEqual(STATUS_ORDER);
  });

  it('delivers phoneCall.deleted when a queued call is deleted', async () => {
    const team = await stack.seedTeam('Deleted team');
    const client = apiClient(stack.baseUrl, team.key);
    const hook = await createWebhook('/deleted', ['phoneCall.deleted'], 'POST', client, team.teamId);
    const callId = await placeCall(client, team.teamId, team.templateId, '+14155558002', {
      callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect((await client.delete(`/v1/phoneCalls/${callId}`)).status).toBe(200);
    const delivered = await eventually(
      async () => receiver.at('/deleted').find((r) => r.body.includes(callId)),
      30_000,
      'phoneCall.deleted',
    );
    expect(verifyPost(hook.secret, delivered)).toMatchObject({
      type: 'phoneCall.deleted',
      data: { _id: callId, status: 'queued' },
    });
  });

  it('sends each attempt where the webhook points now: a PATCH applies at once, a removed webhook gets no more', async () => {
    const team = await stack.seedTeam('Moved webhook team');
    const client = apiClient(stack.baseUrl, team.key);
    receiver.on('/removed', () => 503);
    const moved = await createWebhook(
      '/before-move',
      ['phoneCall.queued', 'phoneCall.deleted'],
      'POST',
      client,
      team.teamId,
    );
    const removed = await createWebhook('/removed', ['phoneCall.queued'], 'POST', client, team.teamId);
    const later = { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() };
    const callId = await placeCall(client, team.teamId, team.templateId, '+14155558022', later);
    for (const path of ['/before-move', '/removed']) {
      await eventually(async () => receiver.at(path).find((r) => r.body.includes(callId)), 30_000, `queued at ${path}`);
    }
    // Both streams are under way: one endpoint moves (and turns to GET); the other, failing, is removed
    // between its attempts (the API has no webhook delete: an operator may remove one in the database).
    const patched = await client.patch(`/v1/webhooks/${moved._id}`, {
      url: `${receiver.url}/after-move`,
      method: 'GET',
    });
    expect(patched.status).toBe(200);
    expect((await Webhook.deleteOne({ _id: removed._id })).deletedCount).toBe(1);
    expect((await client.delete(`/v1/phoneCalls/${callId}`)).status).toBe(200);
    const deleted = await eventually(
      async () => receiver.at('/after-move').find((r) => r.query.includes(callId)),
      30_000,
      'phoneCall.deleted at the new address',
    );
    expect(deleted.method).toBe('GET');
    expect(decodeURIComponent(deleted.query)).toContain('phoneCall.deleted');
    expect(receiver.at('/before-move').filter((r) => r.body.includes(callId))).toHaveLength(1);
    const movedRecord = await WebhookDelivery.findOne({
      endpointKey: `wh-${moved._id}`,
      eventType: 'phoneCall.deleted',
    }).lean();
    expect(movedRecord).toMatchObject({ state: 'delivered', url: `${receiver.url}/after-move`, method: 'GET' });
    // The removed endpoint's retry of the queued event is not sent, and ends its delivery.
    const record = await eventually(
      async () => {
        const found = await WebhookDelivery.findOne({
          endpointKey: `wh-${removed._id}`,
          eventType: 'phoneCall.queued',
        }).lean();
        return found?.state === 'failed' ? found : undefined;
      },
      30_000,
      "the removed webhook's delivery to end",
    );
    const sent = receiver.at('/removed').filter((r) => r.body.includes(callId)).length;
    expect(record.attempts).toHaveLength(sent + 1);
    expect(record.attempts.at(-1)?.error).toBe('not sent: the webhook was deleted');
    expect(
      await WebhookDelivery.countDocuments({ endpointKey: `wh-${removed._id}`, eventType: 'phoneCall.deleted' }),
    ).toBe(0);
  });

  it("delivers phoneCall.deleted to the deleted call's own webhooks that subscribe to it", async () => {
    // The record that names them is gone by the time the event is sent.
    const team = await stack.seedTeam('Own deleted team');
    const client = apiClient(stack.baseUrl, team.key);
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const callId = await placeCall(client, team.teamId, team.templateId, '+14155558012', {
      callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(),
      phoneCallWebhooks: [
        { url: `${receiver.url}/own-deleted`, subscribedEvent: 'phoneCall.deleted', secret },
        { url: `${receiver.url}/own-all`, subscribedEvent: '*', secret },
        { url: `${receiver.url}/own-completed`, subscribedEvent: 'phoneCall.completed', secret },
      ],
    });
    expect((await client.delete(`/v1/phoneCalls/${callId}`)).status).toBe(200);
    const eventsAt = (path: string) =>
      receiver
        .at(path)
        .filter((r) => r.body.includes(callId))
        .map((r) => verifyPost(secret, r));
    for (const path of ['/own-deleted', '/own-all']) {
      const deleted = await eventually(
        async () => eventsAt(path).find((e) => e.type === 'phoneCall.deleted'),
        30_000,
        `phoneCall.deleted at ${path}`,
      );
      expect(deleted.data).toMatchObject({ _id: callId, status: 'queued' });
    }
    expect(eventsAt('/own-all').map((e) => e.type)).toEqual(['phoneCall.queued', 'phoneCall.deleted']);
    expect(eventsAt('/own-completed')).toEqual([]);
  });

  it('retries a failing receiver once per failure and then stops; 410 stops at once', async () => {
    const team = await stack.seedTeam('Retry team');
    const client = apiClient(stack.baseUrl, team.key);
    receiver.on('/flaky', (_req, count) => (count <= 3 ? 503 : 200));
    receiver.on('/gone', () => 410);
    await createWebhook('/flaky', ['phoneCall.completed'], 'POST', client, team.teamId);
    await createWebhook('/gone', ['phoneCall.completed'], 'POST', client, team.teamId);
    const callId = await placeCall(client, team.teamId, team.templateId, '+14155558003');
    await eventually(async () => (receiver.at('/flaky').length >= 4 ? true : undefined), 60_000, 'four attempts');
    await new Promise((r) => setTimeout(r, 3_000));
    const flaky = receiver.at('/flaky');
    expect(flaky).toHaveLength(4);
    expect(new Set(flaky.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // Each attempt is signed anew with its own timestamp (seconds): attempts 300 ms apart may share one,
    // and then their signatures too; attempts in different seconds never do.
    const timestamps = new Set(flaky.map((r) => r.headers['webhook-timestamp']));
    expect(timestamps.size).toBeGreaterThan(1);
    expect(new Set(flaky.map((r) => r.headers['webhook-signature'])).size).toBe(timestamps.size);
    expect(receiver.at('/gone')).toHaveLength(1);
    const records = await WebhookDelivery.find({ phoneCallId: callId }).lean();
    const byUrl = Object.fromEntries(records.map((r) => [new URL(r.url).pathname, r]));
    expect(byUrl['/flaky']!.state).toBe('delivered');
    expect(byUrl['/flaky']!.attempts.map((a) => a.statusCode)).toEqual([503, 503, 503, 200]);
    expect(byUrl['/gone']!.state).toBe('gone');
    expect(byUrl['/gone']!.attempts).toHaveLength(1);
  });

  it('loses nothing when the receiver is down while the worker restarts', async () => {
    const team = await stack.seedTeam('Restart team');
    const client = apiClient(stack.baseUrl, team.key);
    const down = await startReceiver();
    const port = down.port;
    await down.close();
    const hook = await client.post('/v1/webhooks', {
      teamId: team.teamId,
      url: `http://127.0.0.1:${port}/restart`,
      subscribedEvents: ['*'],
      method: 'POST',
    });
    const callId = await placeCall(client, team.teamId, team.templateId, '+14155558004');
    await callReaching(client, callId, 'completed', 60_000);
    await stack.stopWorker();
    const back = await startReceiver(port);
    try {
      await stack.startWorker();
      const got = await eventually(
        async () => {
          const ids = new Set(back.at('/restart').map((r) => r.headers['webhook-id']));
          return ids.size >= STATUS_ORDER.length ? back.at('/restart') : undefined;
        },
        60_000,
        'every event after the restart',
      );
      const types = got.map((r) => verifyPost(hook.body.data.secret, r).type);
      // Nothing lost; any repeat carries the same webhook-id and the order holds per call.
      expect([...new Set(types)]).toEqual(STATUS_ORDER);
      const idsByType = new Map<string, Set<unknown>>();
      got.forEach((r, i) =>
        idsByType.set(types[i]!, (idsByType.get(types[i]!) ?? new Set()).add(r.headers['webhook-id'])),
      );
      for (const ids of idsByType.values()) expect(ids.size).toBe(1);
    } finally {
      await back.close();
    }
  });

  it('keeps per-call order under load without one call blocking another', async () => {
    const team = await stack.seedTeam('Load team');
    const client = apiClient(stack.baseUrl, team.key);
    receiver.on('/load', (req) => (req.body.includes('"phoneCall.ringing"') && Math.random() < 0.3 ? 500 : 200));
    const hook = await createWebhook('/load', ['*'], 'POST', client, team.teamId);
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, i) => placeCall(client, team.teamId, team.templateId, `+1415555${8100 + i}`)),
    );
    await eventually(
      async () => {
        const done = ids.every((id) =>
          receiver
            .at('/load')
            .some((r) => r.body.includes(`"phoneCall.completed"`) && r.body.includes(id) && r.headers['webhook-id']),
        );
        return done ? true : undefined;
      },
      120_000,
      'completion events for every call',
    );
    for (const id of ids) {
      const delivered = receiver
        .at('/load')
        .filter((r) => r.body.includes(id))
        .map((r) => verifyPost(hook.secret, r).type);
      // Drop repeats of a failed attempt: the first occurrence of each type must follow STATUS_ORDER.
      expect([...new Set(delivered)]).toEqual(STATUS_ORDER);
    }
  });
});

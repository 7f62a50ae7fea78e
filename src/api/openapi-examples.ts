// Examples for the OpenAPI document (src/api/openapi.ts): request and answer bodies of every
// operation, validated against their schemas by test/unit/api/openapi-examples.test.ts.
import type { z } from 'zod';
import { encodeCursor } from './pagination';
import type { phoneCallBatchSchema, phoneCallCreateSchema } from '../schemas/phone-calls';
import type {
  batchControlResultSchema,
  doNotCallAddResultSchema,
  doNotCallEntryViewSchema,
  healthSchema,
  phoneCallCreateViewSchema,
  phoneCallReadViewSchema,
  readinessSchema,
  transcriptViewSchema,
  voiceViewSchema,
  webhookDeliveryViewSchema,
  webhookViewSchema,
} from '../schemas/responses';
import type { webhookCreateSchema, webhookUpdateSchema } from '../schemas/webhooks';
import type { doNotCallAddSchema } from '../schemas/do-not-call';

// One story runs through every example, so that an id can be followed from a request to its answers
// and its webhook: the team calls Grace for 2026-11-22T10:00Z and she books a meeting; a batch from
// `leads.csv` dials Ada, who asks not to be called again, while Alan's call waits, queued, for the
// batch controls and the delete to act on. Answers are typed by the views' zod schemas, so a renamed
// field fails the type check; test/unit/api/openapi-examples.test.ts validates each against the
// schema it illustrates.

/** The ids share a prefix, so that their last two characters tell the records apart. */
const exampleId = (suffix: string) => `665f1c2e8b3e4a00123456${suffix}`;
const EXAMPLE_TEAM = exampleId('78');
const EXAMPLE_TEMPLATE = exampleId('79');
const EXAMPLE_FROM = '+14155550100';
const EXAMPLE_FILE = { fileId: 'leads-2026-11', fileName: 'leads.csv' };
const EXAMPLE_CALL_AT = '2026-11-22T10:00:00.000Z';
/** Never a real secret: the right shape, words anyone can read. */
const EXAMPLE_SECRET = `whsec_${Buffer.from('an example secret: never use it!').toString('base64')}`;

type CallCreatedView = z.output<typeof phoneCallCreateViewSchema>;
type CallReadView = z.output<typeof phoneCallReadViewSchema>;
type TranscriptView = z.output<typeof transcriptViewSchema>;
type DoNotCallEntryView = z.output<typeof doNotCallEntryViewSchema>;

function batchCall(suffix: string, nameOfHuman: string, toPhoneNumber: string): CallCreatedView {
  const createdAt = '2026-11-21T17:00:00.000Z';
  return {
    _id: exampleId(suffix),
    teamId: EXAMPLE_TEAM,
    callTemplateId: EXAMPLE_TEMPLATE,
    nameOfHuman,
    toPhoneNumber,
    promptVariableValues: [{ key: 'firstName', value: nameOfHuman }],
    fromPhoneNumber: EXAMPLE_FROM,
    status: 'queued',
    telephonyProvider: 'twilio',
    record: false,
    phoneCallWebhooks: [],
    ...EXAMPLE_FILE,
    createdAt,
    updatedAt: createdAt,
  };
}

/** Request and answer bodies, by what they show; URLs are absolute on `baseUrl`, as the service writes them. */
export function examples(baseUrl: string, info: { title: string; version: string }) {
  const graceCreated: CallCreatedView = {
    _id: exampleId('80'),
    teamId: EXAMPLE_TEAM,
    callTemplateId: EXAMPLE_TEMPLATE,
    nameOfHuman: 'Grace',
    toPhoneNumber: '+14155552671',
    promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
    fromPhoneNumber: EXAMPLE_FROM,
    status: 'queued',
    telephonyProvider: 'twilio',
    record: true,
    callDelayedUntil: EXAMPLE_CALL_AT,
    phoneCallWebhooks: [],
    createdAt: '2026-11-21T16:30:00.000Z',
    updatedAt: '2026-11-21T16:30:00.000Z',
  };
  const graceCallTimes = {
    callTriggeredAt: '2026-11-22T10:00:00.250Z',
    callStartedAt: '2026-11-22T10:00:04.500Z',
    callEndedAt: '2026-11-22T10:02:10.000Z',
  };
  const graceEndedAt = '2026-11-22T10:02:11.200Z';
  const graceCompleted: CallReadView = {
    ...graceCreated,
    status: 'completed',
    updatedAt: graceEndedAt,
    resultValues: [
      { columnName: 'interested', value: 'yes' },
      { columnName: 'preferredDay', value: 'Wednesday' },
    ],
    ...graceCallTimes,
    statusExtraInfo: { statusCode: 'completed', dateTime: graceEndedAt },
    fixedMeetingTime: '2026-11-25T23:30:00.000Z',
    recordingUrl: `${baseUrl}/recordings/Vt3kQ9xLm2Rp7Wc4Hs8Nd1Fb6Gy0Jz5A.wav`,
    callDuration: 125.5,
    callOrigin: 'api',
    customTagsHitOnCall: ['demo'],
    attempts: [
      {
        attempt: 1,
        providerCallId: 'CA3f9c2b7e5d1a4c8e9b0f6a2d7c4e1b3a',
        ...graceCallTimes,
        status: 'completed',
        statusCode: 'completed',
      },
    ],
  };

  const ada = batchCall('91', 'Ada', '+14155552673');
  const alan = batchCall('92', 'Alan', '+14155552672');
  const batchId = exampleId('90');
  const pausedAt = '2026-11-21T17:05:00.000Z';
  const alanPaused: CallReadView = {
    ...alan,
    updatedAt: pausedAt,
    resultValues: [],
    statusExtraInfo: { statusCode: 'paused', dateTime: pausedAt },
    callOrigin: 'file',
    customTagsHitOnCall: [],
    attempts: [],
  };
  // Ada's call had begun by the time of the pause, so every control leaves it alone.
  const control = (action: 'pause' | 'resume' | 'cancel', selector: { batchId: string } | { fileId: string }) => ({
    data: {
      action,
      ...selector,
      calls: 2,
      changed: 1,
      unchanged: 0,
      notQueued: 1,
    } satisfies z.output<typeof batchControlResultSchema>,
  });

  const webhook: z.output<typeof webhookViewSchema> = {
    _id: exampleId('a0'),
    teamId: EXAMPLE_TEAM,
    url: 'https://example.com/hooks/calls',
    subscribedEvents: ['phoneCall.completed'],
    method: 'POST',
    createAt: '2026-11-20T09:00:00.000Z',
    updatedAt: '2026-11-20T09:00:00.000Z',
  };

  // The completed event reached the team webhook at the second try; an operator then had it sent again.
  const delivery: z.output<typeof webhookDeliveryViewSchema> = {
    _id: exampleId('d0'),
    teamId: EXAMPLE_TEAM,
    phoneCallId: graceCreated._id,
    webhookId: webhook._id,
    eventId: `evt_${graceCreated._id}_phoneCall.completed`,
    eventType: 'phoneCall.completed',
    method: 'POST',
    url: webhook.url,
    state: 'delivered',
    attempts: [
      {
        attempt: 1,
        attemptedAt: '2026-11-22T10:02:11.300Z',
        statusCode: 503,
        durationMs: 84,
        error: 'the receiver answered 503',
      },
      { attempt: 2, attemptedAt: '2026-11-22T10:02:16.400Z', statusCode: 200, durationMs: 61, error: null },
    ],
    redeliveries: 0,
    createdAt: '2026-11-22T10:02:11.390Z',
    updatedAt: '2026-11-22T10:02:16.470Z',
  };

  const utterance = (suffix: string, speaker: 'agent' | 'human', at: string, text: string): TranscriptView => ({
    _id: exampleId(suffix),
    teamId: EXAMPLE_TEAM,
    phoneCallId: graceCreated._id,
    text,
    speaker,
    createdAt: at,
    updatedAt: at,
  });

  const listedByKey: DoNotCallEntryView = {
    _id: exampleId('c1'),
    teamId: EXAMPLE_TEAM,
    phoneNumber: '+14155550123',
    reason: 'asked by e-mail on 2026-11-20',
    source: 'api',
    keyId: exampleId('7a'),
    callId: null,
    createdAt: '2026-11-20T10:15:00.000Z',
  };
  const listedByCallee: DoNotCallEntryView = {
    _id: exampleId('c2'),
    teamId: EXAMPLE_TEAM,
    phoneNumber: ada.toPhoneNumber,
    reason: 'the callee asked not to be called again',
    source: 'callee',
    keyId: null,
    callId: ada._id,
    createdAt: '2026-11-21T17:01:30.000Z',
  };

  return {
    createCall: {
      teamId: EXAMPLE_TEAM,
      callTemplateId: EXAMPLE_TEMPLATE,
      nameOfHuman: 'Grace',
      toPhoneNumber: '+14155552671',
      promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
      record: true,
      callDelayedUntil: EXAMPLE_CALL_AT,
    } satisfies z.input<typeof phoneCallCreateSchema>,
    callCreated: { data: graceCreated },
    createBatch: {
      phoneCalls: [ada, alan].map(({ teamId, callTemplateId, nameOfHuman, toPhoneNumber, promptVariableValues }) => ({
        teamId,
        callTemplateId,
        nameOfHuman,
        toPhoneNumber,
        promptVariableValues,
      })),
      ...EXAMPLE_FILE,
    } satisfies z.input<typeof phoneCallBatchSchema>,
    batchCreated: { data: [ada, alan], batchId },
    // A page of `limit=1`: more calls follow, so `nextCursor` is set.
    callList: {
      data: [graceCompleted],
      nextCursor: encodeCursor({ at: new Date(graceCreated.createdAt), id: graceCreated._id }),
    },
    call: { data: graceCompleted },
    callDeleted: { data: alanPaused },
    batchControl: (action: 'pause' | 'resume' | 'cancel') => control(action, { batchId }),
    fileControl: (action: 'pause' | 'resume' | 'cancel') => control(action, { fileId: EXAMPLE_FILE.fileId }),
    addToDoNotCall: {
      teamId: EXAMPLE_TEAM,
      entries: [{ phoneNumber: listedByKey.phoneNumber, reason: listedByKey.reason }],
    } satisfies z.input<typeof doNotCallAddSchema>,
    doNotCallAdded: { data: [listedByKey], added: 1 } satisfies z.output<typeof doNotCallAddResultSchema>,
    doNotCallList: { data: [listedByCallee, listedByKey], nextCursor: null },
    doNotCallRemoved: { data: listedByKey },
    createWebhook: {
      teamId: EXAMPLE_TEAM,
      url: webhook.url,
      subscribedEvents: webhook.subscribedEvents,
      method: webhook.method,
    } satisfies z.input<typeof webhookCreateSchema>,
    webhookCreated: { data: { ...webhook, secret: EXAMPLE_SECRET } },
    webhook: { data: webhook },
    updateWebhook: { subscribedEvents: ['*'], method: 'GET' } satisfies z.input<typeof webhookUpdateSchema>,
    webhookUpdated: {
      data: { ...webhook, subscribedEvents: ['*'], method: 'GET', updatedAt: '2026-11-20T09:30:00.000Z' },
    },
    voices: {
      data: [
        { id: 1, token: 'q7Lm0Zx4Tb9Kc2Vn8Rw5Hs1Jd6Fg3Ya_', voiceName: 'Ava', gender: 'female', isRecommended: true },
        { id: 2, token: 'Ne4Wq8Bt1Mz6Xr0Pk5Cv9Gh2Ls7Dj3U-', voiceName: 'Noah', gender: 'Male', isRecommended: true },
      ].map(({ id, token, ...voice }): z.output<typeof voiceViewSchema> => ({
        id,
        voiceSampleUrl: `${baseUrl}/voices/${token}/sample.wav`,
        ...voice,
      })),
    },
    // The whole transcript of Grace's call fits one page.
    transcripts: {
      data: [
        utterance('b1', 'agent', '2026-11-22T10:00:05.000Z', 'Hi, is this Grace?'),
        utterance('b2', 'human', '2026-11-22T10:00:07.500Z', 'Yes, speaking.'),
        utterance('b3', 'agent', '2026-11-22T10:00:09.000Z', 'Would Wednesday suit you for a short demo?'),
        utterance('b4', 'human', '2026-11-22T10:00:15.000Z', 'Wednesday at 3:30 in the afternoon works.'),
      ],
      nextCursor: null,
    },
    webhookDeliveries: { data: [delivery] },
    redelivering: {
      data: { ...delivery, state: 'pending', redeliveries: 1, updatedAt: '2026-11-22T11:00:00.000Z' },
    },
    callCompletedEvent: { type: 'phoneCall.completed', timestamp: graceEndedAt, data: graceCompleted },
    health: { status: 'ok' } satisfies z.output<typeof healthSchema>,
    ready: { status: 'ready', checks: { mongodb: 'ok', temporal: 'ok' } } satisfies z.output<typeof readinessSchema>,
    unavailable: {
      status: 'unavailable',
      checks: { mongodb: 'ok', temporal: 'unreachable' },
    } satisfies z.output<typeof readinessSchema>,
    // The document is too long for its own example: its first fields and one operation.
    openApiDocument: {
      openapi: '3.1.0',
      info,
      servers: [{ url: baseUrl }],
      paths: { '/healthz': { get: { operationId: 'getHealth', summary: 'Liveness' } } },
    },
    metrics: prometheusExample(),
  };
}

/** A `/metrics` answer: one series of each HTTP metric (the histogram has the service's buckets) and a process metric. */
function prometheusExample(): string {
  const labels = 'method="POST",route="/v1/phoneCalls",status="201"';
  const bounds = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];
  const cumulative = [0, 3, 31, 40, 42, 42, 42, 42, 42, 42, 42, 42];
  return [
    '# HELP http_requests_total HTTP requests answered, by method, route template and status.',
    '# TYPE http_requests_total counter',
    `http_requests_total{${labels}} 42`,
    '# HELP http_request_duration_seconds Time to answer an HTTP request, by method, route template and status.',
    '# TYPE http_request_duration_seconds histogram',
    ...bounds.map((le, i) => `http_request_duration_seconds_bucket{le="${le}",${labels}} ${cumulative[i]}`),
    `http_request_duration_seconds_sum{${labels}} 0.9871`,
    `http_request_duration_seconds_count{${labels}} 42`,
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    'process_resident_memory_bytes 92065792',
    '',
  ].join('\n');
}

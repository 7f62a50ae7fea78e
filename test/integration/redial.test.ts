// The redial policy through the API and the emulator, for each provider: a busy line dialled again
// as the template says (one ring per attempt, every attempt in the read form), a declined call never
// again, and the do-not-call list and a DELETE between attempts stopping the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTemplate } from '../../src/admin/commands';
import { callWorkflowId } from '../../src/contracts/ids';
import { PROVIDERS } from '../../src/contracts/providers';
import { createMongoStores } from '../../src/data/stores';
import { phoneCallReadViewSchema } from '../../src/schemas/responses';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type SeededTeam, type TestStack } from '../helpers/stack';

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  stack = await startTestStack();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const TERMINAL = ['completed', 'busy', 'noAnswer', 'failed', 'cancelled'];

/** A team whose template redials busy and unanswered calls `redials` times, `spacing` apart. */
async function redialTeam(name: string, redials: number, spacing: string) {
  const team = await stack.seedTeam(name);
  const { callTemplateId } = await createTemplate({
    team: team.teamId,
    name: 'Redialler',
    prompt: 'Hello {{firstName}}, this is Ada from Acme Dental.',
    requiredVariables: 'firstName',
    redialOn: 'busy,noAnswer',
    redials: String(redials),
    redialSpacing: spacing,
  });
  const client = apiClient(stack.baseUrl, team.key);
  const create = async (to: string, provider: string, extra: Record<string, unknown> = {}) => {
    const res = await client.post(
      '/v1/phoneCalls',
      seededCallBody({ ...team, templateId: callTemplateId } as SeededTeam, to, {
        telephonyProvider: provider,
        ...extra,
      }),
    );
    expect(res.status).toBe(201);
    return res.body.data._id as string;
  };
  const read = async (id: string) =>
    phoneCallReadViewSchema.parse((await client.get(`/v1/phoneCalls/${id}`)).body.data);
  const ended = (id: string) =>
    eventually(async () => {
      const call = await read(id);
      return TERMINAL.includes(call.status) ? call : undefined;
    }, 60_000);
  return { team, client, create, read, ended };
}

describe('redial policy', () => {
  it.each(PROVIDERS)('dials a busy line again as often as the policy says, once per attempt (%s)', async (provider) => {
    const { create, ended } = await redialTeam(`Redial ${provider}`, 2, '1s');
    const to = `+141555${PROVIDERS.indexOf(provider) + 1}1486`;
    const hook = { url: `${receiver.url}/redial-${provider}`, subscribedEvent: '*', secret: 'per-call secret' };
    const call = await ended(await create(to, provider, { phoneCallWebhooks: [hook] }));
    expect([call.status, call.statusExtraInfo?.statusCode]).toEqual(['busy', 'busy']);
    expect(call.attempts.map((a) => [a.attempt, a.status, a.statusCode])).toEqual([
      [1, 'busy', 'busy'],
      [2, 'busy', 'busy'],
      [3, 'busy', 'busy'],
    ]);
    expect(new Set(call.attempts.map((a) => a.providerCallId)).size).toBe(3);
    for (const [i, a] of call.attempts.entries()) {
      expect(Date.parse(a.callEndedAt)).toBeGreaterThanOrEqual(Date.parse(a.callTriggeredAt));
      // The spacing runs from one attempt's end to the next dial.
      if (i > 0)
        expect(Date.parse(a.callTriggeredAt) - Date.parse(call.attempts[i - 1]!.callEndedAt)).toBeGreaterThanOrEqual(
          1_000,
        );
    }
    expect(call.callTriggeredAt).toBe(call.attempts[2]!.callTriggeredAt);
    expect(stack.emulator.callsTo(to)).toBe(3);

    // Every attempt's events go out, each with a webhook-id of its own; the last says busy.
    const deliveries = await eventually(async () => {
      const got = receiver.at(`/redial-${provider}`);
      return got.some((r) => r.body.includes('"type":"phoneCall.busy"')) ? got : undefined;
    });
    const types = deliveries.map((r) => (JSON.parse(r.body) as { type: string }).type);
    expect(types).toEqual([
      'phoneCall.queued',
      'phoneCall.ringing',
      'phoneCall.queued',
      'phoneCall.ringing',
      'phoneCall.queued',
      'phoneCall.ringing',
      'phoneCall.busy',
    ]);
    expect(new Set(deliveries.map((r) => r.headers['webhook-id'])).size).toBe(7);
  });

  it.each(PROVIDERS)('never dials again a callee who declined the call (%s)', async (provider) => {
    const { create, ended } = await redialTeam(`Declined ${provider}`, 2, '1s');
    const to = `+141555${PROVIDERS.indexOf(provider) + 4}1603`;
    const call = await ended(await create(to, provider));
    expect([call.status, call.statusExtraInfo?.statusCode]).toEqual(['busy', 'declined']);
    expect(call.attempts.map((a) => [a.status, a.statusCode])).toEqual([['busy', 'declined']]);
    expect(stack.emulator.callsTo(to)).toBe(1);
  });

  it('stops when the number goes on the do-not-call list between attempts', async () => {
    const { team, client, create, read, ended } = await redialTeam('Redial, then listed', 2, '4s');
    const to = '+14155571486';
    const id = await create(to, 'twilio');
    await eventually(async () => ((await read(id)).attempts.length === 1 ? true : undefined), 30_000);
    const waiting = await read(id);
    expect([waiting.status, waiting.statusExtraInfo?.statusCode]).toEqual(['queued', 'waiting-to-redial']);
    await client.post('/v1/doNotCall', { teamId: team.teamId, entries: [{ phoneNumber: to }] });

    const call = await ended(id);
    expect([call.status, call.statusExtraInfo?.statusCode]).toEqual(['failed', 'do-not-call']);
    expect(call.attempts.map((a) => [a.attempt, a.status, a.statusCode])).toEqual([
      [1, 'busy', 'busy'],
      [2, 'failed', 'do-not-call'],
    ]);
    expect(call.attempts[1]!.providerCallId).toBeUndefined();
    expect(stack.emulator.callsTo(to)).toBe(1);

    // A capture try of the first attempt landing only now (had a machine answered it): the call holds
    // a later attempt, which placed no call, so it is not the first attempt's any more.
    const late = { resultValues: [{ columnName: 'late', value: 'yes' }], customTagsHitOnCall: ['late'] };
    await createMongoStores().calls.saveResults(
      id,
      { ...late, fixedMeetingTime: null },
      { providerCallId: call.attempts[0]!.providerCallId!, attempt: 1 },
    );
    expect(await read(id)).toEqual(call);
  });

  it('lets a call waiting to redial be deleted, and dials it no more', async () => {
    const { client, create, read } = await redialTeam('Redial, then deleted', 2, '4s');
    const to = '+14155581486';
    const id = await create(to, 'vonage');
    await eventually(async () => ((await read(id)).attempts.length === 1 ? true : undefined), 30_000);
    const deleted = await client.delete(`/v1/phoneCalls/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ status: 'queued', statusExtraInfo: { statusCode: 'waiting-to-redial' } });
    expect(errorMessages(await client.get(`/v1/phoneCalls/${id}`), 404)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 6_000));
    expect(stack.emulator.callsTo(to)).toBe(1);
  });
  it('leaves a call waiting to redial alone when a write of its ended attempt lands late', async () => {
    const { client, create, read } = await redialTeam('Redial, late writes', 2, '1h');
    const to = '+14155591486';
    const id = await create(to, 'telnyx');
    await eventually(async () => ((await read(id)).attempts.length === 1 ? true : undefined), 30_000);
    const waiting = await read(id);
    expect([waiting.status, waiting.statusExtraInfo?.statusCode]).toEqual(['queued', 'waiting-to-redial']);
    const first = waiting.attempts[0]!;

    // What the first attempt's tries wrote, landing only now: a try the server gave up on while the
    // store was slow runs on. The status machine alone lets `ringing` follow `queued`.
    const { calls } = createMongoStores();
    const lateRinging = await calls.applyStatusChange({
      callId: id,
      status: 'ringing',
      statusCode: 'dialling',
      at: first.callTriggeredAt,
      attempt: 1,
      fields: { callTriggeredAt: first.callTriggeredAt, providerCallId: first.providerCallId! },
    });
    expect(lateRinging.outcome).toBe('skipped');
    await calls.setQueuedStatusCode(id, 'waiting-for-slot', new Date(first.callTriggeredAt), 1);
    // A capture's try of that attempt (a machine answered it, say) storing its results only now.
    const lateResults = { resultValues: [{ columnName: 'late', value: 'yes' }], customTagsHitOnCall: ['late'] };
    await calls.saveResults(id, { ...lateResults, fixedMeetingTime: null }, { providerCallId: first.providerCallId! });
    expect(await read(id)).toEqual(waiting);
    // The attempt to come still takes its own.
    await calls.setQueuedStatusCode(id, 'paused', new Date(), 2);
    expect((await read(id)).statusExtraInfo?.statusCode).toBe('paused');

    // The workflow names the attempt of each write it made.
    const { events } = await stack.temporal.workflow.getHandle(callWorkflowId(id)).fetchHistory();
    const inputs = events!.flatMap((e) => {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (!scheduled) return [];
      const input = JSON.parse(Buffer.from(scheduled.input!.payloads![0]!.data!).toString('utf8'));
      return [[scheduled.activityType!.name, input]];
    });
    const inputOf = (name: string) => inputs.find(([activity]) => activity === name)?.[1];
    expect(inputOf('dialCall')).toMatchObject({ ringing: { attempt: 1 } });
    // The redial's `queued` ends the first attempt: it is that attempt's write.
    expect(inputOf('recordStatus')).toMatchObject({ status: 'queued', attempt: 1, endedAttempt: { attempt: 1 } });

    expect((await client.delete(`/v1/phoneCalls/${id}`)).status).toBe(200);
    expect(stack.emulator.callsTo(to)).toBe(1);
  });
});

// Campaigns through the API on the real stack: dial rates as the provider saw them, the cap across a
// worker restart, calling hours in the callee's zone, and pause / resume / cancel of a batch (the cap
// under a burst across teams is campaign-burst.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTemplate, setTeamLimits } from '../../src/admin/commands';
import { pacerWorkflowId } from '../../src/contracts/ids';
import { numberForScenario } from '../../src/emulator';
import { pacingStateQuery } from '../../workflows/messages';
import { runAdmin, stackAdminEnv } from '../helpers/admin-cli';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import {
  callBody,
  maxOverlap,
  teamCalls,
  teamCallsEnded,
  TERMINAL,
  type CampaignCall as Call,
} from '../helpers/campaign-calls';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** The operator CLI against this stack's database and Temporal. */
const admin = (args: string[]) => runAdmin(stackAdminEnv(stack.config), args);

/** A new team with these limits and one batch of `count` calls to `to`; its client and call ids. */
async function pacedBatch(
  name: string,
  limits: { maxConcurrentCalls: string; dialsPerSecond: string },
  count: number,
  to: string,
  extra: Record<string, unknown> = {},
) {
  const team = await stack.seedTeam(name);
  await setTeamLimits({ team: team.teamId, ...limits });
  const client = apiClient(stack.baseUrl, team.key);
  const res = await client.post('/v1/phoneCalls/batch', {
    phoneCalls: Array.from({ length: count }, () => callBody(team, to, extra)),
  });
  expect(res.status).toBe(201);
  return { team, client, ids: (res.body.data as Call[]).map((c) => c._id) };
}

async function allCalls(client: ReturnType<typeof apiClient>, ids: string[]): Promise<Call[]> {
  const out: Call[] = [];
  for (let i = 0; i < ids.length; i += 25) {
    out.push(
      ...(await Promise.all(
        ids.slice(i, i + 25).map(async (id) => (await client.get(`/v1/phoneCalls/${id}`)).body.data as Call),
      )),
    );
  }
  return out;
}

describe('dial rates measured at the provider', () => {
  it("never dials faster than the team's setting, as the emulator saw the dials arrive", async () => {
    const number = '+14155591486'; // busy, and dialled by this test only
    const { client, ids } = await pacedBatch(
      'Rate',
      { maxConcurrentCalls: '50', dialsPerSecond: 'twilio=2' },
      14,
      number,
    );
    await teamCallsEnded(client, ids, 60_000, 'every call to end');
    const arrivals = stack.emulator
      .calls()
      .filter((c) => c.to === number)
      .map((c) => c.placedAt!)
      .sort((a, b) => a - b);
    expect(arrivals).toHaveLength(14);
    // At 2 per second, any two dials two apart are a second apart. The pacer spaces its grants, and the
    // dial activity its provider requests (a dial granted on time may start late, with the next one's
    // grant: a clean run once saw dials 0 and 2 arrive 462 ms apart before it did). What is left is the
    // request's way to the emulator, allowed here: 150 ms. Three per second would put them 667 ms apart.
    for (let i = 2; i < arrivals.length; i += 1) {
      expect(arrivals[i]! - arrivals[i - 2]!, `dials ${i - 2} and ${i}`).toBeGreaterThanOrEqual(850);
    }
    expect((arrivals.length - 1) / ((arrivals.at(-1)! - arrivals[0]!) / 1000)).toBeLessThanOrEqual(2.05);
  }, 90_000);

  it("retries a provider's 429 after its Retry-After and never counts it as a failed call", async () => {
    // The team may dial faster than its Vonage account allows: the provider refuses the excess.
    stack.emulator.setDialsPerSecond({ vonage: 2 });
    try {
      const refusedBefore = stack.emulator.rateLimited('vonage');
      const number = '+14155521486'; // busy, and dialled by this test only
      const { client, ids } = await pacedBatch(
        'Refused',
        { maxConcurrentCalls: '50', dialsPerSecond: 'vonage=20' },
        10,
        number,
        { telephonyProvider: 'vonage' },
      );
      const done = await teamCallsEnded(client, ids, 90_000, 'every call to end');
      expect(done.map((c) => c.status)).toEqual(Array(10).fill('busy'));
      expect(stack.emulator.rateLimited('vonage') - refusedBefore).toBeGreaterThan(0);
      // Each call rang once: refused dials ring nobody, and none was placed twice.
      expect(stack.emulator.calls().filter((c) => c.to.replace('+', '') === number.slice(1))).toHaveLength(10);
    } finally {
      stack.emulator.setDialsPerSecond({});
    }
  }, 120_000);
});

describe('pacing across a worker restart', () => {
  it('holds the cap while the worker is stopped mid-campaign and restarted, and leaks no slot', async () => {
    const { team, client, ids } = await pacedBatch(
      'Restart',
      { maxConcurrentCalls: '3', dialsPerSecond: 'twilio=20' },
      // At least 6 dialled before the stop, the rest after it: the cap holds on both sides of the restart.
      24,
      '+14155571486',
    );
    await eventually(
      async () => ((await teamCalls(client, ids)).filter((c) => c.callTriggeredAt).length >= 6 ? true : undefined),
      60_000,
      'a few dials',
    );
    await stack.stopWorker();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await stack.startWorker();
    // A dial whose task the stopping worker's poll took is retried only after its 45 s start-to-close
    // (README, "Known limits"): the wait allows for that.
    const done = await teamCallsEnded(client, ids, 120_000, 'every call to end after the restart');
    expect(done.every((c) => c.status === 'busy')).toBe(true);
    expect(maxOverlap(done)).toBeLessThanOrEqual(3);
    const pacer = stack.temporal.workflow.getHandle(pacerWorkflowId(team.teamId));
    await eventually(
      async () => ((await pacer.query(pacingStateQuery)).liveCalls === 0 ? true : undefined),
      10_000,
      'every slot to be given back',
    );
  }, 180_000);
});

describe('calling hours through the API', () => {
  it("does not dial a call outside the template's hours in the callee's zone; says why", async () => {
    const team = stack.team;
    const client = apiClient(stack.baseUrl, team.key);
    // Open only on the day after tomorrow in Los Angeles: closed now, whatever the hour.
    const weekday = ((new Date(Date.now() - 8 * 3_600_000).getUTCDay() + 6) % 7) + 1; // ISO weekday in LA, roughly
    const names = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
    const openDay = names[(weekday - 1 + 2) % 7]!;
    const { callTemplateId } = await createTemplate({
      team: team.teamId,
      name: 'Polite hours',
      prompt: 'Hello {{firstName}}',
      requiredVariables: 'firstName',
      callingHours: [`${openDay} 09:00-17:00`],
    });
    const to = '+14155551200';
    const res = await client.post('/v1/phoneCalls', { ...callBody(team, to), callTemplateId });
    expect(res.status).toBe(201);
    const id = res.body.data._id as string;
    const waiting = await eventually(
      async () => {
        const call = (await client.get(`/v1/phoneCalls/${id}`)).body.data as Call;
        return call.statusExtraInfo?.statusCode === 'waiting-for-calling-window' ? call : undefined;
      },
      20_000,
      'the call to wait for its calling hours',
    );
    expect(waiting.status).toBe('queued');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(stack.emulator.callsTo(to)).toBe(0);
    // Deletable while it waits, as any queued call.
    expect((await client.delete(`/v1/phoneCalls/${id}`)).status).toBe(200);

    // A zone given on create replaces the number's; a zone set whose hours never meet is refused. So is
    // what is no zone name: an offset (no daylight saving), a date-time that carries a zone.
    for (const calleeTimeZone of ['Mars/Olympus', '+05:30', '2026-01-01T00:00Z']) {
      const refused = await client.post('/v1/phoneCalls', { ...callBody(team, to), callTemplateId, calleeTimeZone });
      expect(errorMessages(refused, 400), calleeTimeZone).toEqual([
        expect.stringContaining('calleeTimeZone must be an IANA time zone'),
      ]);
    }
    const tokyo = await client.post('/v1/phoneCalls', {
      ...callBody(team, to),
      callTemplateId,
      calleeTimeZone: 'Asia/Tokyo',
    });
    expect(tokyo.status).toBe(201);
    expect(tokyo.body.data.calleeTimeZone).toBe('Asia/Tokyo');
    await client.delete(`/v1/phoneCalls/${tokyo.body.data._id}`);
  });

  it('refuses a template whose hours can never open, naming the option at fault', async () => {
    const template = (extra: { callingHours?: string[]; skipDates?: string[] }) =>
      createTemplate({ team: stack.team.teamId, name: 'Never', prompt: 'Hi', ...extra });
    await expect(template({ callingHours: ['Mon 10:00-10:00'] })).rejects.toThrow(
      /^--calling-hours: .*start must come before the end/,
    );
    await expect(template({ callingHours: ['Mon-Fri 09:00-17:00'], skipDates: ['2026-2-3'] })).rejects.toThrow(
      /^--skip-date: a skip date must be written YYYY-MM-DD, got "2026-2-3"/,
    );
    await expect(template({ skipDates: ['2026-12-25'] })).rejects.toThrow(
      /^--skip-date needs --calling-hours.*"daily 00:00-24:00"/,
    );
  });
});

describe('batch controls', () => {
  it('shows a scheduled call paused at once, and scheduled again once resumed, long before it is due', async () => {
    const team = await stack.seedTeam('Paused early');
    const client = apiClient(stack.baseUrl, team.key);
    const due = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const res = await client.post('/v1/phoneCalls/batch', {
      phoneCalls: [callBody(team, '+14155560901', { callDelayedUntil: due })],
    });
    expect(res.status).toBe(201);
    const [id] = (res.body.data as Call[]).map((c) => c._id);
    const codeIs = (code: string) =>
      eventually(
        async () => {
          const [call] = await allCalls(client, [id!]);
          return call?.statusExtraInfo?.statusCode === code ? call : undefined;
        },
        20_000,
        `status code ${code}`,
      );
    expect((await client.post(`/v1/phoneCalls/batch/${res.body.batchId}/pause`)).body.data).toMatchObject({
      changed: 1,
    });
    expect(await codeIs('paused')).toMatchObject({ status: 'queued' });
    expect((await client.post(`/v1/phoneCalls/batch/${res.body.batchId}/resume`)).body.data).toMatchObject({
      changed: 1,
    });
    await codeIs('scheduled');
  });

  it('pauses, resumes and cancels the queued calls of a batch, by batchId and by fileId, and answers counts', async () => {
    const team = await stack.seedTeam('Campaign');
    const client = apiClient(stack.baseUrl, team.key);
    const due = new Date(Date.now() + 3_000).toISOString();
    const number = numberForScenario('meeting-tomorrow', '+1415556');
    const res = await client.post('/v1/phoneCalls/batch', {
      fileId: 'november-list.csv',
      phoneCalls: Array.from({ length: 6 }, () => callBody(team, number, { callDelayedUntil: due })),
    });
    expect(res.status).toBe(201);
    const batchId = res.body.batchId as string;
    const ids = (res.body.data as Call[]).map((c) => c._id);

    const paused = await client.post(`/v1/phoneCalls/batch/${batchId}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.data).toEqual({ action: 'pause', batchId, calls: 6, changed: 6, unchanged: 0, notQueued: 0 });
    // The same through the operator CLI: already paused, so nothing changes.
    const cli = await admin(['batch', 'pause', '--team', team.teamId, '--batch-id', batchId, '--json']);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({
      action: 'pause',
      batchId,
      calls: 6,
      changed: 0,
      unchanged: 6,
      notQueued: 0,
    });
    // Past their time, the paused calls wait, and say so.
    await eventually(
      async () => {
        const calls = await allCalls(client, ids);
        return calls.every((c) => c.statusExtraInfo?.statusCode === 'paused') ? calls : undefined;
      },
      20_000,
      'the calls to show they are paused',
    );
    expect(stack.emulator.callsTo(number)).toBe(0);

    // Cancel two of them first: by fileId after resuming would race the dial, so cancel through a second batch.
    const resumed = await client.post('/v1/phoneCalls/file/november-list.csv/resume');
    expect(resumed.body.data).toEqual({
      action: 'resume',
      fileId: 'november-list.csv',
      calls: 6,
      changed: 6,
      unchanged: 0,
      notQueued: 0,
    });
    const done = await eventually(
      async () => {
        const calls = await allCalls(client, ids);
        return calls.every((c) => TERMINAL.includes(c.status)) ? calls : undefined;
      },
      60_000,
      'the resumed calls to end',
    );
    expect(done.map((c) => c.status)).toEqual(Array(6).fill('completed'));
    expect(stack.emulator.callsTo(number)).toBe(6);

    // Cancel: the queued calls of a second batch are removed (as DELETE does); ended ones are left alone.
    const later = await client.post('/v1/phoneCalls/batch', {
      fileId: 'november-list.csv',
      phoneCalls: Array.from({ length: 4 }, () =>
        callBody(team, number, { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() }),
      ),
    });
    const cancelled = await client.post('/v1/phoneCalls/file/november-list.csv/cancel');
    expect(cancelled.body.data).toEqual({
      action: 'cancel',
      fileId: 'november-list.csv',
      calls: 10,
      changed: 4,
      unchanged: 0,
      notQueued: 6,
    });
    for (const call of later.body.data as Call[])
      expect((await client.get(`/v1/phoneCalls/${call._id}`)).status).toBe(404);
    expect((await client.post(`/v1/phoneCalls/batch/${later.body.batchId}/cancel`)).status).toBe(404);
  }, 120_000);

  it("a file's pause or cancel reaches the chunks of it still arriving (an import under way); a resume lets them go", async () => {
    // Before, a control acted only on the calls already written: chunks created after it were dialled.
    const team = await stack.seedTeam('Import under way');
    const client = apiClient(stack.baseUrl, team.key);
    const fileId = 'import-under-way.csv';
    const number = numberForScenario('meeting-tomorrow', '+1415557');
    const chunk = (size: number) =>
      client.post('/v1/phoneCalls/batch', {
        fileId,
        phoneCalls: Array.from({ length: size }, () => callBody(team, number)),
      });
    // The first chunk is scheduled, so that it is still queued when the file is paused.
    const first = await client.post('/v1/phoneCalls/batch', {
      fileId,
      phoneCalls: [callBody(team, number, { callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString() })],
    });
    expect(first.status).toBe(201);
    expect((await client.post(`/v1/phoneCalls/file/${fileId}/pause`)).body.data).toMatchObject({ changed: 1 });

    // A chunk after the pause: created, but its calls (due at once) wait, paused.
    const second = await chunk(2);
    expect(second.status).toBe(201);
    const secondIds = (second.body.data as Call[]).map((c) => c._id);
    await eventually(
      async () => {
        const calls = await allCalls(client, secondIds);
        return calls.every((c) => c.statusExtraInfo?.statusCode === 'paused') ? calls : undefined;
      },
      20_000,
      'the later chunk to wait paused',
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(stack.emulator.callsTo(number)).toBe(0);

    // Cancelled: the queued calls go, and a later chunk is refused, none of its calls made.
    const cancelled = await client.post(`/v1/phoneCalls/file/${fileId}/cancel`);
    expect(cancelled.body.data).toMatchObject({ calls: 3, changed: 3 });
    const refused = await chunk(2);
    expect(errorMessages(refused, 400)).toEqual([
      `file ${fileId} was cancelled (POST /v1/phoneCalls/file/{fileId}/cancel): no call of this batch was created; resume the file to create calls under it again`,
    ]);
    expect((await client.get('/v1/phoneCalls?limit=100')).body.data).toEqual([]);

    // Resumed (every call of the file gone, the control is still known): chunks are dialled again.
    expect((await client.post(`/v1/phoneCalls/file/${fileId}/resume`)).body.data).toMatchObject({ calls: 0 });
    const third = await chunk(1);
    expect(third.status).toBe(201);
    await eventually(
      async () => ((await allCalls(client, [third.body.data[0]._id]))[0]!.status === 'completed' ? true : undefined),
      60_000,
      'the call of a chunk after the resume to be dialled',
    );
    expect(stack.emulator.callsTo(number)).toBe(1);
  }, 120_000);

  it('answers 404 for another team’s batch, 400 for a malformed id, 403 without calls:write', async () => {
    const mine = await stack.seedTeam('Mine');
    const theirs = stack.team;
    const client = apiClient(stack.baseUrl, mine.key);
    const res = await apiClient(stack.baseUrl, theirs.key).post('/v1/phoneCalls/batch', {
      phoneCalls: [
        callBody(theirs, numberForScenario('meeting-tomorrow', '+1415556'), {
          callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      ],
    });
    expect((await client.post(`/v1/phoneCalls/batch/${res.body.batchId}/pause`)).status).toBe(404);
    expect((await client.post('/v1/phoneCalls/batch/not-an-id/pause')).status).toBe(404);
    // It takes no body: a field sent is named, not ignored.
    expect(errorMessages(await client.post(`/v1/phoneCalls/batch/${res.body.batchId}/pause`, { foo: 1 }), 400)).toEqual(
      ['foo is not allowed'],
    );
    await apiClient(stack.baseUrl, theirs.key).post(`/v1/phoneCalls/batch/${res.body.batchId}/cancel`);
  });
});

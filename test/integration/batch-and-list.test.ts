// Batch create (up to 10,000, all-or-nothing validation, request order) and the list endpoint's
// filters and cursor pagination over a few thousand calls while new ones are being created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DispatchBatch } from '../../src/data/models/dispatch-batch';
import { PhoneCall } from '../../src/data/models/phone-call';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
beforeAll(async () => {
  stack = await startTestStack();
  // Every call here is due months ahead: no workflow has work to do yet. Without a worker, the first
  // tasks of 10,000 started workflows wait in Temporal instead of competing with the API for the CPU.
  await stack.stopWorker();
  api = apiClient(stack.baseUrl, stack.team.key);
});
afterAll(async () => {
  await stack?.stop();
});

// Far ahead, so that the workflows only sleep.
const later = () => new Date(Date.now() + 200 * 86_400_000).toISOString();

function element(i: number, overrides: Record<string, unknown> = {}) {
  return {
    teamId: stack.team.teamId,
    callTemplateId: stack.team.templateId,
    toPhoneNumber: `+1415555${String(i % 10_000).padStart(4, '0')}`,
    promptVariableValues: [{ key: 'firstName', value: `Person ${i}` }],
    callDelayedUntil: later(),
    ...overrides,
  };
}

describe('POST /v1/phoneCalls/batch', () => {
  it('refuses the whole batch when any element is invalid, naming each by index', async () => {
    const before = await PhoneCall.countDocuments({});
    const res = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: [
        element(1),
        element(2, { toPhoneNumber: 'x' }),
        element(3),
        element(4, { record: 'no', extra: 1 }),
        element(5, { callTemplateId: 'c'.repeat(24) }),
      ],
    });
    // The elements that pass the schema are checked against the store too: every problem at once.
    expect(errorMessages(res, 400)).toEqual([
      'phoneCalls.1.toPhoneNumber must be a valid E.164 phone number',
      'phoneCalls.3.record must be a boolean',
      'phoneCalls.3.extra is not allowed',
      'phoneCalls.4.callTemplateId does not name a call template of this team',
    ]);
    expect(await PhoneCall.countDocuments({})).toBe(before);
    // A problem of the envelope is listed with the elements', not before them: one corrected request goes.
    expect(
      errorMessages(
        await api.post('/v1/phoneCalls/batch', {
          phoneCalls: [element(1), element(2, { toPhoneNumber: 'x' }), element(3, { callTemplateId: 'c'.repeat(24) })],
          fileId: '',
          extra: 1,
        }),
        400,
      ),
    ).toEqual([
      'fileId must not be empty',
      'extra is not allowed',
      'phoneCalls.1.toPhoneNumber must be a valid E.164 phone number',
      'phoneCalls.2.callTemplateId does not name a call template of this team',
    ]);
    // A body the schema refused is a 400 whatever its teamIds, as a single create's is.
    expect(
      errorMessages(
        await api.post('/v1/phoneCalls/batch', { phoneCalls: [element(1, { teamId: 'f'.repeat(24) })], extra: 1 }),
        400,
      ),
    ).toEqual(['extra is not allowed', 'phoneCalls.0.teamId is not the team of this API key']);
    expect(
      errorMessages(
        await api.post('/v1/phoneCalls/batch', {
          phoneCalls: [element(1, { toPhoneNumber: 'x' }), element(2, { teamId: 'f'.repeat(24) })],
        }),
        400,
      ),
    ).toEqual([
      'phoneCalls.0.toPhoneNumber must be a valid E.164 phone number',
      'phoneCalls.1.teamId is not the team of this API key',
    ]);
    expect(await PhoneCall.countDocuments({})).toBe(before);
    expect(errorMessages(await api.post('/v1/phoneCalls/batch', { phoneCalls: [] }), 400)).toEqual([
      'phoneCalls must have at least 1 element',
    ]);
    expect(
      errorMessages(
        await api.post('/v1/phoneCalls/batch', { phoneCalls: Array.from({ length: 10_001 }, (_, i) => ({ i })) }),
        400,
      ),
    ).toEqual(['phoneCalls must have at most 10000 elements']);
  });

  it('lists every problem of a batch with 150,000 of them, never a 500', async () => {
    // A spreadsheet export of 10,000 rows with 15 unmapped columns. Listing each problem as an
    // argument of one call overflowed the stack (500).
    const before = await PhoneCall.countDocuments({});
    const columns = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`column_${i}`, 'x']));
    const rows = Array.from({ length: 10_000 }, (_, i) => element(i, columns));
    const messages = errorMessages(await api.post('/v1/phoneCalls/batch', { phoneCalls: rows }), 400);
    expect(messages).toHaveLength(150_000);
    expect(messages.slice(0, 2)).toEqual([
      'phoneCalls.0.column_0 is not allowed',
      'phoneCalls.0.column_1 is not allowed',
    ]);
    expect(messages.at(-1)).toBe('phoneCalls.9999.column_14 is not allowed');
    // Rows the schema takes whose variables the template does not know, 15 each: refused alike.
    const variables = Array.from({ length: 15 }, (_, i) => ({ key: `column_${i}`, value: 'x' }));
    const unknown = errorMessages(
      await api.post('/v1/phoneCalls/batch', {
        phoneCalls: Array.from({ length: 10_000 }, (_, i) => element(i, { promptVariableValues: variables })),
      }),
      400,
    );
    expect(unknown.length).toBeGreaterThanOrEqual(150_000);
    expect(unknown[0]).toMatch(/^phoneCalls\.0\.promptVariableValues /);
    expect(await PhoneCall.countDocuments({})).toBe(before);
  });

  it('accepts 10,000 calls, answers in request order and starts every workflow', async () => {
    const phoneCalls = Array.from({ length: 10_000 }, (_, i) => element(i, { nameOfHuman: `n${i}` }));
    const res = await api.post('/v1/phoneCalls/batch', {
      phoneCalls,
      fileId: 'file-10k',
      fileName: 'ten-thousand.csv',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toHaveLength(10_000);
    res.body.data.forEach((call: { nameOfHuman: string; fileId: string }, i: number) => {
      expect(call.nameOfHuman).toBe(`n${i}`);
      expect(call.fileId).toBe('file-10k');
    });
    const stored = await PhoneCall.find({ fileId: 'file-10k' }, { dispatchBatchId: 1 }).lean();
    expect(stored).toHaveLength(10_000);
    const batchIds = new Set(stored.map((c) => c.dispatchBatchId.toHexString()));
    expect(batchIds.size).toBe(1);
    // Every workflow started and no Idempotency-Key to answer for: the batch is not kept.
    expect([...batchIds][0]).toBe(res.body.batchId);
    expect(await DispatchBatch.exists({ _id: res.body.batchId })).toBeNull();
    const first = await api.get(`/v1/phoneCalls/${res.body.data[0]._id}`);
    expect(first.body.data).toMatchObject({ callOrigin: 'file', fileName: 'ten-thousand.csv' });
    const count = await eventually(
      async () => {
        const { count } = await stack.temporal.workflow.count(
          `CallTeamId = "${stack.team.teamId}" AND ExecutionStatus = "Running"`,
        );
        return count >= 10_000 ? count : undefined;
      },
      120_000,
      'every workflow to be visible',
    );
    expect(count).toBeGreaterThanOrEqual(10_000);
  }, 600_000);
});

describe('GET /v1/phoneCalls', () => {
  // 600 calls in three batches plus 120 arriving during paging: enough for several pages in each
  // state (before, during and after the concurrent inserts) and for every filter to select a strict
  // subset; more rows prove nothing more. Until lists stop sorting a team's calls in memory on
  // FerretDB (the performance issue), each page costs a scan of the team, so the row count is what
  // keeps this test within its budget on 2 cores.
  const PER_BATCH = 200;
  const LATE_BATCHES = 6;
  const PER_LATE_BATCH = 20;
  it('filters by every parameter and pages newest first without gaps while calls are being created', async () => {
    const team = await stack.seedTeam('List team');
    const client = apiClient(stack.baseUrl, team.key);
    const mk = (i: number, extra: Record<string, unknown> = {}) => ({
      teamId: team.teamId,
      callTemplateId: team.templateId,
      toPhoneNumber: i % 3 === 0 ? '+14155557000' : `+1415555${String(7000 + (i % 900) + 1).padStart(4, '0')}`,
      promptVariableValues: [{ key: 'firstName', value: 'X' }],
      callDelayedUntil: later(),
      phoneNumberId: i % 2 === 0 ? team.phoneNumberIds.telnyx : undefined,
      ...extra,
    });
    const batches = [0, 1, 2];
    const created: string[] = [];
    for (const b of batches) {
      const res = await client.post('/v1/phoneCalls/batch', {
        phoneCalls: Array.from({ length: PER_BATCH }, (_, i) => mk(b * PER_BATCH + i)),
        fileId: `file-${b}`,
      });
      expect(res.status).toBe(201);
      created.push(...res.body.data.map((c: { _id: string }) => c._id));
    }
    const middle = (await client.get(`/v1/phoneCalls/${created[PER_BATCH * 1.5]}`)).body.data.createdAt;

    // Page through everything while more calls arrive concurrently.
    const inserting = (async () => {
      for (let i = 0; i < LATE_BATCHES; i++) {
        const late = Array.from({ length: PER_LATE_BATCH }, (_, j) => mk(5_000 + i * PER_LATE_BATCH + j));
        expect((await client.post('/v1/phoneCalls/batch', { phoneCalls: late })).status).toBe(201);
      }
    })();
    const seen: string[] = [];
    let cursor: string | null = null;
    let previous: { createdAt: string; _id: string } | null = null;
    do {
      const page: { status: number; body: any } = await client.get(
        `/v1/phoneCalls?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      for (const call of page.body.data) {
        if (previous) {
          const ordered =
            call.createdAt < previous.createdAt || (call.createdAt === previous.createdAt && call._id < previous._id);
          expect(ordered, 'newest first').toBe(true);
        }
        previous = call;
        seen.push(call._id);
      }
      cursor = page.body.nextCursor;
    } while (cursor);
    await inserting;
    expect(new Set(seen).size).toBe(seen.length);
    const seenSet = new Set(seen);
    expect(created.every((id) => seenSet.has(id))).toBe(true);

    const countAll = async (query: string) => {
      let total = 0;
      let next: string | null = null;
      do {
        // Below the largest filtered count, so that filtered lists page too.
        const res: { status: number; body: any } = await client.get(
          `/v1/phoneCalls?limit=250&${query}${next ? `&cursor=${next}` : ''}`,
        );
        expect(res.status).toBe(200);
        total += res.body.data.length;
        next = res.body.nextCursor;
      } while (next);
      return total;
    };
    expect(await countAll('fileId=file-1')).toBe(PER_BATCH);
    expect(await countAll(`phoneNumberId=${team.phoneNumberIds.telnyx}`)).toBe(
      await PhoneCall.countDocuments({ teamId: team.teamId, phoneNumberId: team.phoneNumberIds.telnyx }),
    );
    expect(await countAll('toPhoneNumber=%2B1%20415%20555%207000')).toBe(
      await PhoneCall.countDocuments({ teamId: team.teamId, toPhoneNumber: '+14155557000' }),
    );
    expect(await countAll(`callTemplateId=${team.templateId}&status=queued`)).toBe(
      3 * PER_BATCH + LATE_BATCHES * PER_LATE_BATCH,
    );
    expect(await countAll('status=canceled')).toBe(0);
    expect(await countAll(`createdBefore=${encodeURIComponent(middle)}`)).toBe(
      await PhoneCall.countDocuments({ teamId: team.teamId, createdAt: { $lt: new Date(middle) } }),
    );
    expect(await countAll(`createdAfter=${encodeURIComponent(middle)}`)).toBe(
      await PhoneCall.countDocuments({ teamId: team.teamId, createdAt: { $gt: new Date(middle) } }),
    );

    expect(errorMessages(await client.get('/v1/phoneCalls?status=ringingish'), 400)[0]).toMatch(
      /^status must be one of/,
    );
    expect(errorMessages(await client.get('/v1/phoneCalls?limit=0'), 400)).toEqual([
      'limit must be between 1 and 1000',
    ]);
    expect(errorMessages(await client.get('/v1/phoneCalls?sort=asc'), 400)).toEqual(['sort is not allowed']);
    expect(errorMessages(await client.get('/v1/phoneCalls?cursor=garbage'), 400)).toEqual([
      'cursor is not a cursor this API returned',
    ]);
    expect(errorMessages(await client.get('/v1/phoneCalls?createdAfter=yesterday'), 400)).toEqual([
      'createdAfter must be an ISO 8601 date-time with Z or an offset',
    ]);
  });
});

// The lists' query values as written: `limit` only in plain decimal digits on every list, and the
// exclusive `createdAfter`/`createdBefore` bounds of GET /v1/phoneCalls with digits below the
// millisecond (times are held to the millisecond: `createdBefore` rounds such a time up, so the calls
// strictly before it are kept; `createdAfter` cuts it, which already leaves out only earlier ones).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, errorMessages } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
/** Months ahead: the calls only wait, nobody is rung. */
const FAR_AHEAD = new Date(Date.now() + 120 * 86_400_000).toISOString();

beforeAll(async () => {
  stack = await startTestStack();
  await stack.stopWorker();
  api = apiClient(stack.baseUrl, stack.team.key);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('list query values', () => {
  it('refuses a limit not written in plain decimal digits on every list', async () => {
    for (const path of ['/v1/phoneCalls', '/v1/doNotCall', '/v1/transcripts']) {
      for (const written of ['1e2', '0x10', '%201', '%2B5', '1.5']) {
        const messages = errorMessages(await api.get(`${path}?limit=${written}`), 400);
        expect({ path, written, first: messages[0] }).toEqual({
          path,
          written,
          first: expect.stringMatching(/^limit must be an integer in decimal digits, e\.g\. 100/),
        });
      }
      expect(errorMessages(await api.get(`${path}?limit=1001`), 400)).toEqual(['limit must be between 1 and 1000']);
      expect((await api.get(`${path}?limit=7`)).status).toBe(200);
    }
  });

  it('keeps the calls strictly before a createdBefore with digits below the millisecond', async () => {
    const batch = async (numbers: string[]) => {
      const res = await api.post('/v1/phoneCalls/batch', {
        phoneCalls: numbers.map((to) => seededCallBody(stack.team, to, { callDelayedUntil: FAR_AHEAD })),
      });
      expect(res.status).toBe(201);
    };
    await batch(['+14155550101', '+14155550102']);
    const middle = await api.post(
      '/v1/phoneCalls',
      seededCallBody(stack.team, '+14155550103', { callDelayedUntil: FAR_AHEAD }),
    );
    expect(middle.status).toBe(201);
    await batch(['+14155550104', '+14155550105']);
    const all = (await api.get('/v1/phoneCalls?limit=1000')).body.data as Array<{ _id: string; createdAt: string }>;
    const at = (middle.body.data as { createdAt: string }).createdAt; // e.g. 2026-11-30T10:00:58.553Z
    const atMs = Date.parse(at);
    expect(at).toMatch(/\.\d{3}Z$/);
    const idsAt = all.filter((call) => Date.parse(call.createdAt) === atMs).map((call) => call._id);
    const idsBefore = all.filter((call) => Date.parse(call.createdAt) < atMs).map((call) => call._id);
    const idsAfter = all.filter((call) => Date.parse(call.createdAt) > atMs).map((call) => call._id);
    const withDigits = (iso: string, digits: string) => iso.replace(/Z$/, `${digits}Z`);
    const lessOneMs = new Date(atMs - 1).toISOString();
    const list = async (query: Record<string, string>) => {
      const res = await api.get(`/v1/phoneCalls?limit=1000&${new URLSearchParams(query).toString()}`);
      expect(res.status).toBe(200);
      return (res.body.data as Array<{ _id: string }>).map((call) => call._id);
    };

    // The reported case: after .552 (cut from .5521) and before .5531, the calls at .553 are there.
    expect(await list({ createdAfter: withDigits(lessOneMs, '1'), createdBefore: withDigits(at, '1') })).toEqual(idsAt);
    expect(await list({ createdBefore: withDigits(at, '1') })).toEqual([...idsAt, ...idsBefore]);
    expect(await list({ createdBefore: withDigits(at, '000001') })).toEqual([...idsAt, ...idsBefore]);
    expect(await list({ createdBefore: at.replace(/Z$/, '9+00:00') })).toEqual([...idsAt, ...idsBefore]);
    // Zeros below the millisecond are the millisecond itself: strictly before it leaves its calls out.
    expect(await list({ createdBefore: withDigits(at, '000') })).toEqual(idsBefore);
    expect(await list({ createdBefore: at })).toEqual(idsBefore);
    // createdAfter a time within the millisecond leaves that millisecond's calls out, as they are earlier.
    expect(await list({ createdAfter: withDigits(at, '1') })).toEqual(idsAfter);
    expect(await list({ createdAfter: withDigits(lessOneMs, '9') })).toEqual([...idsAfter, ...idsAt]);
  });
});

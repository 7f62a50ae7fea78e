// The do-not-call list through the API and the CLI on the real stack: listing and removing numbers,
// refusal at create, the check right before the dial, and the callee who opts out on a call, for
// each provider through the emulator.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/admin/commands';
import { PROVIDERS } from '../../src/contracts/providers';
import { numberForScenario } from '../../src/emulator';
import { doNotCallAddResultSchema, doNotCallEntryViewSchema } from '../../src/schemas/responses';
import { runAdmin, stackAdminEnv } from '../helpers/admin-cli';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

type Entry = { _id: string; phoneNumber: string; source: string; keyId: string | null; callId: string | null };
type Call = { _id: string; status: string; statusExtraInfo: { statusCode: string }; customTagsHitOnCall: string[] };
const TERMINAL = ['completed', 'busy', 'noAnswer', 'failed', 'cancelled'];

const keyIdOf = (key: string) => key.split('_')[1];
const encoded = (number: string) => encodeURIComponent(number);

const callBody = seededCallBody;

async function ended(client: ReturnType<typeof apiClient>, id: string): Promise<Call> {
  return eventually(
    async () => {
      const res = await client.get(`/v1/phoneCalls/${id}`);
      return TERMINAL.includes(res.body.data?.status) ? (res.body.data as Call) : undefined;
    },
    60_000,
    `call ${id} to end`,
  );
}

describe('the list', () => {
  it('adds one or many numbers (each once, the first entry kept), pages newest first and removes them', async () => {
    const team = await stack.seedTeam('DNC list');
    const client = apiClient(stack.baseUrl, team.key);
    const added = await client.post('/v1/doNotCall', {
      teamId: team.teamId,
      entries: [
        { phoneNumber: '+1 (415) 555-0123', reason: 'asked by e-mail' },
        { phoneNumber: '+14155550124' },
        { phoneNumber: '+14155550123', reason: 'a second time' },
      ],
    });
    expect(added.status).toBe(200);
    const body = doNotCallAddResultSchema.parse(added.body);
    expect(body.added).toBe(2);
    expect(body.data.map((e) => [e.phoneNumber, e.reason, e.source, e.keyId, e.callId])).toEqual([
      ['+14155550123', 'asked by e-mail', 'api', keyIdOf(team.key), null],
      ['+14155550124', '', 'api', keyIdOf(team.key), null],
    ]);

    const again = await client.post('/v1/doNotCall', {
      teamId: team.teamId,
      entries: [{ phoneNumber: '+14155550124' }],
    });
    expect(again.body.added).toBe(0);
    expect(again.body.data[0]._id).toBe(body.data[1]!._id);

    const first = await client.get('/v1/doNotCall?limit=1');
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: Entry) => e.phoneNumber)).toEqual(['+14155550124']);
    const second = await client.get(`/v1/doNotCall?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((e: Entry) => e.phoneNumber)).toEqual(['+14155550123']);
    expect(second.body.nextCursor).toBeNull();
    doNotCallEntryViewSchema.parse(second.body.data[0]);
    const one = await client.get(`/v1/doNotCall?phoneNumber=${encoded('+14155550123')}`);
    expect(one.body.data).toHaveLength(1);

    const removed = await client.delete('/v1/doNotCall/+14155550124');
    expect(removed.status).toBe(200);
    expect(removed.body.data.phoneNumber).toBe('+14155550124');
    expect(errorMessages(await client.delete('/v1/doNotCall/+14155550124'), 404)).toEqual([
      "+14155550124 is not on the team's do-not-call list",
    ]);
    expect(errorMessages(await client.delete('/v1/doNotCall/12ab'), 400)).toEqual([
      'phoneNumber must be a valid E.164 phone number',
    ]);
    expect((await client.get('/v1/doNotCall')).body.data.map((e: Entry) => e.phoneNumber)).toEqual(['+14155550123']);
  });

  it('refuses bad input in the documented shape, keeps teams apart and checks the scopes', async () => {
    const team = await stack.seedTeam('DNC checks');
    const other = await stack.seedTeam('DNC other team');
    const client = apiClient(stack.baseUrl, team.key);
    const bad = await client.post('/v1/doNotCall', {
      teamId: team.teamId,
      entries: [{ phoneNumber: '+14155550125' }, { phoneNumber: 'call me maybe' }, { phoneNumber: '+1415', x: 1 }],
    });
    const messages = errorMessages(bad, 400);
    expect(messages.some((m) => m.startsWith('entries.1.phoneNumber must be a valid E.164 phone number'))).toBe(true);
    expect(messages.some((m) => m.startsWith('entries.2'))).toBe(true);
    expect(errorMessages(await client.post('/v1/doNotCall', { teamId: team.teamId, entries: [] }), 400)[0]).toMatch(
      /^entries must have at least 1 element/,
    );
    // Nothing of a refused request was listed.
    expect((await client.get(`/v1/doNotCall?phoneNumber=${encoded('+14155550125')}`)).body.data).toEqual([]);
    // An unencoded + arrives as a space; a parameter given twice arrives as a list: both are told so.
    expect(errorMessages(await client.get('/v1/doNotCall?phoneNumber=+14155550125'), 400)).toEqual([
      'phoneNumber must be a valid E.164 phone number (a `+` in a query string must be sent as %2B)',
    ]);
    expect(errorMessages(await client.get('/v1/doNotCall?phoneNumber=%2B14155550125&phoneNumber=x'), 400)).toEqual([
      'phoneNumber may be given only once',
    ]);
    expect(
      errorMessages(
        await client.post('/v1/doNotCall', { teamId: other.teamId, entries: [{ phoneNumber: '+14155550125' }] }),
        403,
      ),
    ).toEqual(['teamId is not the team of this API key']);

    await client.post('/v1/doNotCall', { teamId: team.teamId, entries: [{ phoneNumber: '+14155550126' }] });
    const otherClient = apiClient(stack.baseUrl, other.key);
    expect((await otherClient.get('/v1/doNotCall')).body.data).toEqual([]);
    expect((await otherClient.delete('/v1/doNotCall/+14155550126')).status).toBe(404);

    const readOnly = apiClient(stack.baseUrl, (await createKey({ team: team.teamId, scopes: 'dnc:read' })).key);
    expect((await readOnly.get('/v1/doNotCall')).status).toBe(200);
    expect(
      errorMessages(
        await readOnly.post('/v1/doNotCall', { teamId: team.teamId, entries: [{ phoneNumber: '+14155550127' }] }),
        403,
      ),
    ).toEqual(['the API key lacks the dnc:write scope']);
    expect(errorMessages(await readOnly.delete('/v1/doNotCall/+14155550126'), 403)).toEqual([
      'the API key lacks the dnc:write scope',
    ]);
    const callsOnly = apiClient(stack.baseUrl, (await createKey({ team: team.teamId, scopes: 'calls:read' })).key);
    expect(errorMessages(await callsOnly.get('/v1/doNotCall'), 403)).toEqual(['the API key lacks the dnc:read scope']);
  });
});

describe('calls to listed numbers', () => {
  it('are refused at create, per batch element, for the listing team only', async () => {
    const team = await stack.seedTeam('DNC create');
    const other = await stack.seedTeam('DNC create, other team');
    const client = apiClient(stack.baseUrl, team.key);
    const listed = '+14155550131';
    await client.post('/v1/doNotCall', { teamId: team.teamId, entries: [{ phoneNumber: listed }] });

    expect(errorMessages(await client.post('/v1/phoneCalls', callBody(team, '+1 415 555 0131')), 400)).toEqual([
      `toPhoneNumber ${listed} is on the team's do-not-call list`,
    ]);
    const free = '+14155550132';
    const batch = await client.post('/v1/phoneCalls/batch', {
      phoneCalls: [callBody(team, free), callBody(team, listed), callBody(team, free)],
    });
    expect(errorMessages(batch, 400)).toEqual([
      `phoneCalls.1.toPhoneNumber ${listed} is on the team's do-not-call list`,
    ]);
    expect((await client.get(`/v1/phoneCalls?toPhoneNumber=${encoded(free)}`)).body.data).toEqual([]);

    // Another team's list is its own: scheduled far ahead and deleted, so nothing rings.
    const otherClient = apiClient(stack.baseUrl, other.key);
    const allowed = await otherClient.post(
      '/v1/phoneCalls',
      callBody(other, listed, { callDelayedUntil: new Date(Date.now() + 86_400_000).toISOString() }),
    );
    expect(allowed.status).toBe(201);
    expect((await otherClient.delete(`/v1/phoneCalls/${allowed.body.data._id}`)).status).toBe(200);
  });

  it.each(PROVIDERS)(
    'listed after create are never dialled: the call fails with do-not-call (%s)',
    async (provider) => {
      const team = await stack.seedTeam(`DNC before dial ${provider}`);
      const client = apiClient(stack.baseUrl, team.key);
      const to = `+141555${PROVIDERS.indexOf(provider) + 3}0140`;
      const created = await client.post(
        '/v1/phoneCalls',
        callBody(team, to, {
          telephonyProvider: provider,
          callDelayedUntil: new Date(Date.now() + 3_000).toISOString(),
        }),
      );
      expect(created.status).toBe(201);
      await client.post('/v1/doNotCall', {
        teamId: team.teamId,
        entries: [{ phoneNumber: to, reason: 'asked by phone' }],
      });

      const call = await ended(client, created.body.data._id);
      expect([call.status, call.statusExtraInfo.statusCode]).toEqual(['failed', 'do-not-call']);
      expect(stack.emulator.callsTo(to)).toBe(0);
    },
  );

  it.each(PROVIDERS)('are listed when the callee asks not to be called again, tagged optOut (%s)', async (provider) => {
    const team = await stack.seedTeam(`DNC opt-out ${provider}`);
    const client = apiClient(stack.baseUrl, team.key);
    const to = numberForScenario('opt-out', `+141555${PROVIDERS.indexOf(provider) + 6}`);
    const created = await client.post('/v1/phoneCalls', callBody(team, to, { telephonyProvider: provider }));
    expect(created.status).toBe(201);
    const callId = created.body.data._id as string;

    const call = await ended(client, callId);
    expect(call.status).toBe('completed');
    expect(call.customTagsHitOnCall).toContain('optOut');
    const entry = (await client.get(`/v1/doNotCall?phoneNumber=${encoded(to)}`)).body.data[0] as Entry;
    expect(entry).toMatchObject({ phoneNumber: to, source: 'callee', callId, keyId: null });
    expect(errorMessages(await client.post('/v1/phoneCalls', callBody(team, to)), 400)).toEqual([
      `toPhoneNumber ${to} is on the team's do-not-call list`,
    ]);

    // A callee who only says they are not interested is not listed.
    const declined = numberForScenario('not-interested', `+141555${PROVIDERS.indexOf(provider) + 6}`);
    const other = await client.post('/v1/phoneCalls', callBody(team, declined, { telephonyProvider: provider }));
    const otherCall = await ended(client, other.body.data._id);
    expect(otherCall.status).toBe('completed');
    expect(otherCall.customTagsHitOnCall).not.toContain('optOut');
    expect((await client.get(`/v1/doNotCall?phoneNumber=${encoded(declined)}`)).body.data).toEqual([]);
  });
});

describe('the CLI', () => {
  it('imports a CSV file (header or not, national numbers with --default-country), lists and removes', async () => {
    const team = await stack.seedTeam('DNC CLI');
    const dir = await mkdtemp(path.join(tmpdir(), 'dnc-'));
    const admin = (...args: string[]) => runAdmin(stackAdminEnv(stack.config), args);
    const withHeader = path.join(dir, 'opt-outs.csv');
    await writeFile(
      withHeader,
      '\ufeffName,Phone Number,Reason\r\n"Lin, Ada",(415) 555-0150,"said ""stop"" on the phone"\r\nBo,+14155550151,\r\nBo again,415-555-0151,\r\n',
    );
    const imported = await admin(
      'dnc',
      'import',
      '--team',
      team.teamId,
      '--file',
      withHeader,
      '--default-country',
      'US',
      '--reason',
      'imported',
      '--json',
    );
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ teamId: team.teamId, numbers: 2, added: 2, alreadyListed: 0 });

    const bare = path.join(dir, 'bare.csv');
    await writeFile(bare, '+14155550151\n+14155550152,from the old system\n');
    const second = JSON.parse((await admin('dnc', 'import', '--team', team.teamId, '--file', bare, '--json')).stdout);
    expect(second).toMatchObject({ numbers: 2, added: 1, alreadyListed: 1 });

    const listed = JSON.parse((await admin('dnc', 'list', '--team', team.teamId, '--json')).stdout);
    expect(
      Object.fromEntries(listed.entries.map((e: Entry & { reason: string }) => [e.phoneNumber, [e.source, e.reason]])),
    ).toEqual({
      '+14155550150': ['cli', 'said "stop" on the phone'],
      '+14155550151': ['cli', 'imported'],
      '+14155550152': ['cli', 'from the old system'],
    });
    // Paged: each page's nextCursor lists the entries after it, the newest first, until none is left.
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const args = ['dnc', 'list', '--team', team.teamId, '--limit', '2', ...(cursor ? ['--cursor', cursor] : [])];
      const page = JSON.parse((await admin(...args, '--json')).stdout);
      pages.push(page.entries.map((e: Entry) => e.phoneNumber));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages.flat()).toEqual(listed.entries.map((e: Entry) => e.phoneNumber));
    expect(pages.map((p) => p.length)).toEqual([2, 1]);
    const badCursor = await admin('dnc', 'list', '--team', team.teamId, '--cursor', 'nope');
    expect(badCursor.code).toBe(2);
    expect(badCursor.stderr).toContain('--cursor must be a nextCursor');

    const broken = path.join(dir, 'broken.csv');
    await writeFile(broken, 'phone\n+14155550153\nnot a number\n12\n');
    const refused = await admin('dnc', 'import', '--team', team.teamId, '--file', broken);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('line 3: "not a number" is not a valid phone number');
    expect(refused.stderr).toContain('line 4: "12" is not a valid phone number');
    const client = apiClient(stack.baseUrl, team.key);
    expect((await client.get(`/v1/doNotCall?phoneNumber=${encoded('+14155550153')}`)).body.data).toEqual([]);

    const removed = await admin('dnc', 'remove', '--team', team.teamId, '--number', '+14155550152', '--json');
    expect(JSON.parse(removed.stdout)).toMatchObject({ removed: true, entry: { phoneNumber: '+14155550152' } });
    expect((await client.get('/v1/doNotCall')).body.data).toHaveLength(2);
  });
});

// The operator's call commands as an operator runs them: `calls import` (a CSV file checked whole, then
// created through the API's batch endpoint in chunks; run again, nothing twice), `calls list|show|
// watch|cancel|create` and `transcripts show` through the API with the team's key, and `webhooks
// deliveries|redeliver`.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CallTemplate } from '../../src/data/models/call-template';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyRecord } from '../../src/data/models/idempotency-record';
import { runAdmin, spawnAdmin, stackAdminEnv } from '../helpers/admin-cli';
import { apiClient, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let dir: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  stack = await startTestStack();
  receiver = await startReceiver();
  dir = await mkdtemp(path.join(tmpdir(), 'oco-import-'));
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  // The files the imports read: each run left its folder in the temporary folder before.
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The CLI with the team's key and the stack's API. */
const admin = (...args: string[]) =>
  runAdmin({ ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key }, [...args, '--api-url', stack.baseUrl]);

const importArgs = (file: string, extra: string[] = []) => [
  'calls',
  'import',
  '--team',
  stack.team.teamId,
  '--template',
  stack.team.templateId,
  '--file',
  file,
  '--api-url',
  stack.baseUrl,
  '--json',
  ...extra,
];
const importFile = (file: string, extra: string[] = []) =>
  runAdmin({ ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key }, importArgs(file, extra));

it('creates every row once, in chunks, as file calls; a second run creates nothing more', async () => {
  // Scheduled a month ahead: the calls are created and queued, nobody is rung by this test.
  const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const rows = Array.from(
    { length: 25 },
    (_, i) => `${String(i).padStart(2, '0')} Caller,(415) 555-${String(2100 + i)},Ada${i},${at}`,
  );
  const file = path.join(dir, 'spring-campaign.csv');
  await writeFile(file, ['name,phone,firstName,callDelayedUntil', ...rows].join('\n'));

  const first = await importFile(file, ['--default-country', 'US', '--batch-size', '10']);
  expect(first.stderr).not.toMatch(/error/i);
  expect(first.code).toBe(0);
  const summary = JSON.parse(first.stdout) as {
    fileId: string;
    calls: number;
    batches: number;
    batchIds: string[];
    seconds: number;
    apiSeconds: number;
  };
  expect(summary).toMatchObject({
    fileName: 'spring-campaign.csv',
    calls: 25,
    callsOfFileNow: 25,
    batches: 3,
    alreadyImportedBatches: 0,
  });
  // Where the time went: the whole run, and the waits for the API within it.
  expect(summary.apiSeconds).toBeGreaterThan(0);
  expect(summary.seconds).toBeGreaterThanOrEqual(summary.apiSeconds);

  const client = apiClient(stack.baseUrl, stack.team.key);
  const listed = await client.get(`/v1/phoneCalls?fileId=${summary.fileId}&limit=100`);
  expect(listed.status).toBe(200);
  const calls = listed.body.data as {
    toPhoneNumber: string;
    callOrigin: string;
    fileName: string;
    nameOfHuman: string;
  }[];
  expect(calls).toHaveLength(25);
  expect(new Set(calls.map((c) => c.toPhoneNumber)).size).toBe(25);
  expect(calls.every((c) => c.callOrigin === 'file' && c.fileName === 'spring-campaign.csv')).toBe(true);
  expect(calls.map((c) => c.nameOfHuman)).toContain('07 Caller');

  // Interrupted or not, running the same import again answers the same batches and creates nothing.
  const again = await importFile(file, ['--default-country', 'US', '--batch-size', '10']);
  expect(again.code).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ batchIds: summary.batchIds, alreadyImportedBatches: 3 });
  expect((await client.get(`/v1/phoneCalls?fileId=${summary.fileId}&limit=100`)).body.data).toHaveLength(25);

  // Run again with another --batch-size (or none): the earlier import's chunks, not new ones under new
  // keys, which created every call a second time.
  const resized = await importFile(file, ['--default-country', 'US']);
  expect(resized.code).toBe(0);
  expect(JSON.parse(resized.stdout)).toMatchObject({
    batchSize: 10,
    batchSizeOfEarlierImport: true,
    batchIds: summary.batchIds,
    alreadyImportedBatches: 3,
  });
  expect((await client.get(`/v1/phoneCalls?fileId=${summary.fileId}&limit=100`)).body.data).toHaveLength(25);

  // A day later the API no longer knows the chunks' keys: run again, the import is refused (it would
  // call everyone a second time) until --again says that is meant.
  await IdempotencyRecord.updateMany(
    { teamId: stack.team.teamId, key: { $regex: `^${summary.fileId}-` } },
    { $set: { createdAt: new Date(Date.now() - IDEMPOTENCY_WINDOW_MS - 60_000) } },
  );
  const dayLater = await importFile(file, ['--default-country', 'US']);
  expect(dayLater.code, dayLater.stdout).toBe(2);
  expect(JSON.parse(dayLater.stdout).error).toMatch(
    /^this file was imported for this template before: 3 of its 3 batches were created more than 24 hours ago .*--again/,
  );
  expect((await client.get(`/v1/phoneCalls?fileId=${summary.fileId}&limit=100`)).body.data).toHaveLength(25);
  const anew = await importFile(file, ['--default-country', 'US', '--again']);
  expect(anew.code, anew.stdout).toBe(0);
  expect(JSON.parse(anew.stdout)).toMatchObject({ calls: 25, batches: 3, alreadyImportedBatches: 0 });
  expect((await client.get(`/v1/phoneCalls?fileId=${summary.fileId}&limit=100`)).body.data).toHaveLength(50);
});

it('carries an interrupted import on, run under another name: chunks created are not sent again, a number listed since is left out of the rest', async () => {
  const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const rows = Array.from({ length: 60 }, (_, i) => `(415) 555-${String(2600 + i)},Ada${i},${at}`);
  const content = ['phone,firstName,callDelayedUntil', ...rows].join('\n');
  const file = path.join(dir, 'interrupted.csv');
  await writeFile(file, content);
  const fileId = `csv-${createHash('sha256').update(`${stack.team.templateId}\n${content}`).digest('hex').slice(0, 24)}`;
  const client = apiClient(stack.baseUrl, stack.team.key);
  const ofFile = async () =>
    (await client.get(`/v1/phoneCalls?fileId=${fileId}&limit=100`)).body.data as {
      toPhoneNumber: string;
      fileName: string;
    }[];

  // Killed once its first chunks (of one call each) are created.
  const env = { ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key };
  const child = spawnAdmin(env, importArgs(file, ['--default-country', 'US', '--batch-size', '1']));
  const exited = once(child, 'exit');
  await eventually(async () => ((await ofFile()).length > 0 ? true : undefined), 30_000, 'a first chunk');
  child.kill('SIGKILL');
  await exited;
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // a chunk in flight settles at the API
  const createdBefore = (await ofFile()).length;
  expect(createdBefore).toBeLessThan(30);

  // Since, the first callee asked not to be called again, and a number of a chunk not sent was listed.
  const listed = ['+14155552600', '+14155552659'];
  const dnc = await client.post('/v1/doNotCall', {
    teamId: stack.team.teamId,
    entries: listed.map((phoneNumber) => ({ phoneNumber })),
  });
  expect(dnc.status).toBeLessThan(300);

  // Run again from a copy of another name (a download's "(1)", or standard input). Before, the listed
  // first number refused the whole file, and the other name made every created chunk's request another.
  const copy = path.join(dir, 'interrupted (1).csv');
  await copyFile(file, copy);
  const again = await importFile(copy, ['--default-country', 'US', '--batch-size', '1']);
  expect(again.code, again.stdout).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({
    fileId,
    fileName: 'interrupted.csv',
    calls: 60,
    batches: 59,
    alreadyImportedBatches: createdBefore,
    leftOut: [{ line: 61, toPhoneNumber: '+14155552659', reason: "on the team's do-not-call list" }],
  });
  const calls = await ofFile();
  expect(calls).toHaveLength(59);
  expect(new Set(calls.map((c) => c.toPhoneNumber)).size).toBe(59);
  expect(calls.map((c) => c.toPhoneNumber)).toContain('+14155552600'); // created before it was listed
  expect(calls.map((c) => c.toPhoneNumber)).not.toContain('+14155552659');
  expect(calls.every((c) => c.fileName === 'interrupted.csv')).toBe(true);

  // And once more: nothing sent, nothing created.
  const third = JSON.parse((await importFile(file, ['--default-country', 'US'])).stdout) as Record<string, unknown>;
  expect(third).toMatchObject({ batches: 59, alreadyImportedBatches: 59, batchSize: 1 });
  expect(await ofFile()).toHaveLength(59);
});

it('imports the same list for another template as an import of its own; an import begun before carries on', async () => {
  const file = path.join(dir, 'two-campaigns.csv');
  const content = ['phone,firstName', '+14155552501,Ada', '+14155552502,Bo'].join('\n');
  await writeFile(file, content);
  // An import begun until 2026-11-30, its fileId a digest of the content alone: its one chunk as that
  // version sent it, under that version's key.
  const legacy = `csv-${createHash('sha256').update(content).digest('hex').slice(0, 24)}`;
  const client = apiClient(stack.baseUrl, stack.team.key);
  const element = (toPhoneNumber: string, firstName: string) => ({
    teamId: stack.team.teamId,
    callTemplateId: stack.team.templateId,
    toPhoneNumber,
    promptVariableValues: [{ key: 'firstName', value: firstName }],
  });
  const begun = await client.post(
    '/v1/phoneCalls/batch',
    {
      phoneCalls: [element('+14155552501', 'Ada'), element('+14155552502', 'Bo')],
      fileId: legacy,
      fileName: 'two-campaigns.csv',
    },
    { headers: { 'Idempotency-Key': `${legacy}-lines-2-3` } },
  );
  expect(begun.status).toBe(201);
  const carriedOn = JSON.parse((await importFile(file)).stdout) as Record<string, unknown>;
  expect(carriedOn).toMatchObject({ fileId: legacy, calls: 2, callsOfFileNow: 2, alreadyImportedBatches: 1 });

  // The same list for a second template of the team: its own fileId and keys, its own calls.
  const template = (await CallTemplate.findById(stack.team.templateId).lean())!;
  const second = await CallTemplate.create({
    ...template,
    _id: new mongoose.Types.ObjectId(),
    name: 'Second campaign',
  });
  const other = await runAdmin({ ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key }, [
    ...['calls', 'import', '--team', stack.team.teamId, '--template', second._id.toHexString()],
    ...['--file', file, '--api-url', stack.baseUrl, '--json'],
  ]);
  expect(other.code, other.stdout).toBe(0);
  const secondImport = JSON.parse(other.stdout) as { fileId: string; calls: number; alreadyImportedBatches: number };
  expect(secondImport).toMatchObject({ calls: 2, alreadyImportedBatches: 0 });
  expect(secondImport.fileId).not.toBe(legacy);
  const ofSecond = (await client.get(`/v1/phoneCalls?fileId=${secondImport.fileId}`)).body.data as {
    callTemplateId: string;
  }[];
  expect(ofSecond.map((c) => c.callTemplateId)).toEqual([second._id.toHexString(), second._id.toHexString()]);
  expect((await client.get(`/v1/phoneCalls?fileId=${legacy}`)).body.data).toHaveLength(2);
});

it("refuses a file the API would refuse midway (Twilio's speech limit on a later chunk's line), naming the line, and creates nothing", async () => {
  const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const rows = Array.from({ length: 15 }, (_, i) => `(415) 555-${String(2300 + i)},Ada${i},${at}`);
  // Line 14, in the second chunk of ten: its opening line is over the 4,000 characters of TwiML
  // Twilio speaks. Before, the first chunk was created and the second refused with `phoneCalls.2`.
  rows[12] = `(415) 555-2312,${'A'.repeat(4_100)},${at}`;
  const file = path.join(dir, 'too-long.csv');
  await writeFile(file, ['phone,firstName,callDelayedUntil', ...rows].join('\n'));
  const result = await importFile(file, ['--default-country', 'US', '--batch-size', '10']);
  expect(result.code).toBe(2);
  const { error } = JSON.parse(result.stdout) as { error: string };
  expect(error).toMatch(/^nothing imported: 1 bad line\(s\)/);
  expect(error).toMatch(/line 14: promptVariableValues with the call template's prompt /);
  const client = apiClient(stack.baseUrl, stack.team.key);
  expect((await client.get('/v1/phoneCalls?toPhoneNumber=%2B14155552300')).body.data).toEqual([]);
});

it('refuses a file with bad lines or listed numbers, naming each, and creates nothing', async () => {
  const file = path.join(dir, 'bad.csv');
  await writeFile(file, ['phone,firstName', '+14155552201,Ada', 'not a number,Bo', '+14155552203,'].join('\n'));
  const result = await importFile(file);
  expect(result.code).toBe(2);
  const { error } = JSON.parse(result.stdout) as { error: string };
  expect(error).toMatch(/nothing imported: 2 bad line\(s\)/);
  expect(error).toMatch(/line 3: toPhoneNumber/);
  expect(error).toMatch(/line 4: missing required variable\(s\) firstName/);
  const client = apiClient(stack.baseUrl, stack.team.key);
  expect((await client.get('/v1/phoneCalls?toPhoneNumber=%2B14155552201')).body.data).toEqual([]);

  // More than a terminal's worth: the message names 20, the JSON form every one.
  const many = path.join(dir, 'many-bad.csv');
  await writeFile(many, ['phone,firstName', ...Array.from({ length: 22 }, (_, i) => `bad ${i},Ada`)].join('\n'));
  const refused = JSON.parse((await importFile(many)).stdout) as { error: string; problems: string[] };
  expect(refused.error).toMatch(/\.\.\. and 2 more \(--json lists every one as "problems"\)$/);
  expect(refused.problems).toHaveLength(22);
  expect(refused.problems[21]).toMatch(/^line 23: toPhoneNumber/);

  // A number on the team's do-not-call list is a bad line too.
  await client.post('/v1/doNotCall', { teamId: stack.team.teamId, entries: [{ phoneNumber: '+14155552202' }] });
  await writeFile(file, ['phone,firstName', '+14155552201,Ada', '+14155552202,Bo'].join('\n'));
  const listed = await importFile(file);
  expect(listed.code).toBe(2);
  expect(JSON.parse(listed.stdout).error).toMatch(
    /nothing imported: 1 number\(s\) on the do-not-call list:\nline 3: \+14155552202 is on the team's do-not-call list/,
  );
  expect((await client.get('/v1/phoneCalls?toPhoneNumber=%2B14155552201')).body.data).toEqual([]);
});

it('lists, shows and cancels the imported calls; watches a call to its end, shows its transcript and deliveries', async () => {
  const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const file = path.join(dir, 'follow-up.csv');
  await writeFile(
    file,
    ['phone,firstName,callDelayedUntil', `+14155552301,Ada,${at}`, `+14155552302,Bo,${at}`].join('\n'),
  );
  const { fileId } = JSON.parse((await importFile(file)).stdout) as { fileId: string };

  const listed = await admin('calls', 'list', '--file-id', fileId, '--json');
  expect(listed.code).toBe(0);
  const { calls } = JSON.parse(listed.stdout) as { calls: { _id: string; status: string; statusCode: string }[] };
  expect(calls.map((c) => [c.status, c.statusCode])).toEqual([
    ['queued', 'scheduled'],
    ['queued', 'scheduled'],
  ]);
  const shown = JSON.parse((await admin('calls', 'show', '--id', calls[0]!._id, '--json')).stdout);
  expect(shown).toMatchObject({ _id: calls[0]!._id, callOrigin: 'file', fileId });

  const cancelled = await admin('calls', 'cancel', '--id', calls[0]!._id, '--json');
  expect(JSON.parse(cancelled.stdout)).toMatchObject({ cancelled: true, call: { _id: calls[0]!._id } });
  const gone = await admin('calls', 'show', '--id', calls[0]!._id, '--json');
  expect(gone.code).toBe(2);
  expect(JSON.parse(gone.stdout).error).toMatch(/^404/);
  // Imported again, the file's chunk answers as it was created, and the summary says what stands now.
  const again = JSON.parse((await importFile(file)).stdout) as Record<string, unknown>;
  expect(again).toMatchObject({ calls: 2, callsOfFileNow: 1, alreadyImportedBatches: 1 });

  // A call placed now: watch follows it to its end, one line per status change.
  const client = apiClient(stack.baseUrl, stack.team.key);
  const hook = { url: `${receiver.url}/operator`, subscribedEvent: '*', secret: 'operator hook secret' };
  const placed = await client.post(
    '/v1/phoneCalls',
    seededCallBody(stack.team, '+14155550007', { phoneCallWebhooks: [hook] }),
  );
  const id = placed.body.data._id as string;
  const watched = await admin('calls', 'watch', '--id', id, '--interval', '0.2', '--json');
  expect(watched.code).toBe(0);
  expect(JSON.parse(watched.stdout)).toMatchObject({ _id: id, status: 'completed' });
  expect(watched.stderr).toMatch(/completed \(completed\)\s*$/);
  const transcript = JSON.parse((await admin('transcripts', 'show', '--call', id, '--json')).stdout) as {
    transcript: { speaker: string; text: string }[];
  };
  expect(transcript.transcript.some((u) => u.speaker === 'human' && /Tuesday at 3pm/.test(u.text))).toBe(true);

  // Every event sent to the call's endpoint, with each attempt's answer.
  await eventually(
    async () => receiver.at('/operator').some((r) => r.body.includes('phoneCall.completed')) || undefined,
  );
  const deliveries = await eventually(async () => {
    const out = await admin('webhooks', 'deliveries', id, '--json');
    const parsed = JSON.parse(out.stdout) as {
      deliveries: {
        deliveryId: string;
        eventType: string;
        webhookId: string;
        endpoint: string;
        state: string;
        attempts: { status: number }[];
      }[];
    };
    return parsed.deliveries.some((d) => d.eventType === 'phoneCall.completed' && d.state === 'delivered')
      ? parsed.deliveries
      : undefined;
  });
  const completed = deliveries.find((d) => d.eventType === 'phoneCall.completed')!;
  expect(completed).toMatchObject({ endpoint: `POST ${hook.url}`, state: 'delivered', attempts: [{ status: 200 }] });
  const received = receiver.at('/operator').find((r) => r.body.includes('"type":"phoneCall.completed"'))!;
  expect(completed.webhookId).toBe(received.headers['webhook-id']);
  expect(deliveries.map((d) => d.eventType)).toEqual(expect.arrayContaining(['phoneCall.queued', 'phoneCall.ringing']));

  // Sent again on request: the same event, the same webhook-id.
  const redelivered = await admin('webhooks', 'redeliver', completed.deliveryId, '--json');
  expect(redelivered.code, redelivered.stdout).toBe(0);
  expect(JSON.parse(redelivered.stdout)).toMatchObject({
    redelivering: true,
    delivery: { deliveryId: completed.deliveryId, state: 'pending' },
  });
  const twice = await eventually(async () => {
    const sent = receiver.at('/operator').filter((r) => r.body.includes('"type":"phoneCall.completed"'));
    return sent.length === 2 ? sent : undefined;
  });
  expect(twice[1]!.headers['webhook-id']).toBe(completed.webhookId);
  expect(twice[1]!.body).toBe(twice[0]!.body);
});

it('watches a queued call through an API that answers 503 for a while, and to its deletion', async () => {
  // Before, the first 503 ended the watch (exit 1), and the deletion's 404 too (exit 2, as if the
  // command's input were wrong).
  const client = apiClient(stack.baseUrl, stack.team.key);
  const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const placed = await client.post(
    '/v1/phoneCalls',
    seededCallBody(stack.team, '+14155552801', { callDelayedUntil: at }),
  );
  const id = placed.body.data._id as string;
  // The API behind a proxy that answers 503 while `unavailable`, as an API restarting behind a balancer.
  let unavailable = false;
  let served = 0;
  let refused = 0;
  const proxy = http.createServer((req, res) => {
    if (unavailable) {
      refused += 1;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'connection'),
    ) as Record<string, string>;
    void fetch(new URL(req.url!, stack.baseUrl), { method: req.method, headers }).then(async (upstream) => {
      served += 1;
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    const proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const env = { ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key };
    const watching = runAdmin(env, ['calls', 'watch', id, '--interval', '0.1', '--api-url', proxied, '--json']);
    await eventually(async () => (served >= 2 ? true : undefined), 30_000, 'the watch to read the call');
    unavailable = true;
    await eventually(async () => (refused >= 3 ? true : undefined), 30_000, 'three reads refused');
    unavailable = false;
    expect((await client.delete(`/v1/phoneCalls/${id}`)).status).toBe(200);
    const watched = await watching;
    expect(watched.code, watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ deleted: true, call: { _id: id, status: 'queued' } });
    expect(watched.stderr.match(/the API answered 503: Service Unavailable; still watching/g)).toHaveLength(1);
    expect(watched.stderr).toMatch(/deleted \(cancelled while queued\)\s*$/);
  } finally {
    proxy.close();
  }
});

it('calls create queues one call; run again with its idempotency key, it creates nothing more', async () => {
  const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const args = ['calls', 'create', '--team', stack.team.teamId, '--template', stack.team.templateId];
  const created = await admin(...args, '--to', '+1 415 555 2401', '--var', 'firstName=Ada', '--at', at, '--json');
  expect(created.code, created.stdout).toBe(0);
  const call = JSON.parse(created.stdout) as {
    _id: string;
    status: string;
    toPhoneNumber: string;
    idempotencyKey: string;
  };
  expect(call).toMatchObject({ status: 'queued', toPhoneNumber: '+14155552401' });

  const again = await admin(
    ...args,
    ...['--to', '+1 415 555 2401', '--var', 'firstName=Ada', '--at', at, '--idempotency-key', call.idempotencyKey],
    '--json',
  );
  expect(JSON.parse(again.stdout)._id).toBe(call._id);
  const listed = JSON.parse((await admin('calls', 'list', '--to', '+14155552401', '--json')).stdout) as {
    calls: unknown[];
  };
  expect(listed.calls).toHaveLength(1);
  // Every filter of the API: by creation time too.
  const shown = (await admin('calls', 'show', call._id, '--json')).stdout;
  const createdAt = (JSON.parse(shown) as { createdAt: string }).createdAt;
  const around = (flag: string, iso: string) =>
    admin('calls', 'list', '--to', '+14155552401', flag, iso, '--json').then(
      (r) => (JSON.parse(r.stdout) as { calls: unknown[] }).calls.length,
    );
  const before = new Date(Date.parse(createdAt) - 1).toISOString();
  expect([await around('--created-after', before), await around('--created-before', before)]).toEqual([1, 0]);
  // The positional form of show.
  expect(JSON.parse((await admin('calls', 'show', call._id, '--json')).stdout)).toMatchObject({
    _id: call._id,
    promptVariableValues: [{ key: 'firstName', value: 'Ada' }],
    callDelayedUntil: at,
  });

  // The API's own refusal, its messages as the error.
  const refused = await admin(...args, '--to', '+14155552402', '--json');
  expect(refused.code).toBe(2);
  const refusal = JSON.parse(refused.stdout) as { error: string; idempotencyKey: string };
  expect(refusal.error).toMatch(/^400: .*firstName/);
  // Refused, nothing was created: the key is given, with no advice to retry under it.
  expect(refusal.idempotencyKey).toMatch(/^cli-/);
  expect(refusal.error).not.toContain('--idempotency-key');

  // A create whose outcome is not known (here the API cannot be reached; a 5xx or a timeout alike)
  // names the key it sent, so that the command run again with it creates the call at most once.
  const lost = await runAdmin({ ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key }, [
    ...args,
    ...['--to', '+1 415 555 2403', '--var', 'firstName=Bo', '--at', at, '--api-url', 'http://127.0.0.1:9', '--json'],
  ]);
  expect(lost.code, lost.stdout).toBe(1);
  const failure = JSON.parse(lost.stdout) as { error: string; idempotencyKey: string };
  expect(failure.idempotencyKey).toMatch(/^cli-[0-9a-f-]{36}$/);
  expect(failure.error).toContain(`--idempotency-key ${failure.idempotencyKey}`);
  const retried = async () =>
    JSON.parse(
      (
        await admin(
          ...args,
          ...['--to', '+1 415 555 2403', '--var', 'firstName=Bo', '--at', at],
          ...['--idempotency-key', failure.idempotencyKey, '--json'],
        )
      ).stdout,
    ) as { _id: string; idempotencyKey: string };
  const first = await retried();
  expect(first.idempotencyKey).toBe(failure.idempotencyKey);
  expect((await retried())._id).toBe(first._id);

  // An operator who holds only a key and the API's URL: no MONGODB_URI, ENCRYPTION_KEY or local stack.
  const keyOnly = await runAdmin(
    {
      PATH: process.env.PATH,
      OCO_DATA_DIR: dir,
      PUBLIC_BASE_URL: stack.baseUrl,
      OCO_API_KEY: stack.team.key,
    },
    ['calls', 'show', first._id, '--json'],
  );
  expect(keyOnly.code, keyOnly.stdout + keyOnly.stderr).toBe(0);
  expect(JSON.parse(keyOnly.stdout)).toMatchObject({ _id: first._id, toPhoneNumber: '+14155552403' });
});

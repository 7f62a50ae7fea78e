// `calls import` as an operator runs it: a CSV file of calls, checked whole, then created through the
// API's batch endpoint in chunks; run again, it creates nothing twice.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runAdmin, stackAdminEnv } from '../helpers/admin-cli';
import { apiClient } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let dir: string;
beforeAll(async () => {
  stack = await startTestStack();
  dir = await mkdtemp(path.join(tmpdir(), 'oco-import-'));
});
afterAll(async () => {
  await stack?.stop();
});

const importFile = (file: string, extra: string[] = []) =>
  runAdmin({ ...stackAdminEnv(stack.config), OCO_API_KEY: stack.team.key }, [
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
  ]);

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
  const summary = JSON.parse(first.stdout) as { fileId: string; calls: number; batches: number; batchIds: string[] };
  expect(summary).toMatchObject({ fileName: 'spring-campaign.csv', calls: 25, batches: 3, alreadyImportedBatches: 0 });

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
});

it('refuses a file with bad lines, naming each, and creates nothing', async () => {
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
});

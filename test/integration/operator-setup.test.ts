// A tenant set up exactly with the decisions.md commands places calls: the CLI reaches the running
// stack by itself, `team create` gives the team emulator accounts where the provider URLs point at
// the emulator, a provider without credentials is refused at create, and credentials that vanish
// before the dial end the call at once.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PhoneCall } from '../../src/data/models/phone-call';
import { Team } from '../../src/data/models/team';
import { apiClient, errorMessages, eventually } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let dataDir: string;
beforeAll(async () => {
  stack = await startTestStack();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'oco-stack-file-'));
});
afterAll(async () => {
  await stack?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The operator command line as a person runs it: a child process, this environment only. */
function admin(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.resolve('src/main/admin.ts'), ...args],
      { env },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** A shell with none of the service's variables: only what a new user's terminal has. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', ...extra };
  return env;
}

/** What `npm start` writes for the stack it runs (src/local/stack-settings.ts), for this test's stack. */
async function writeStackFile(pid: number): Promise<void> {
  const { config } = stack;
  await writeFile(
    path.join(dataDir, 'local-stack.json'),
    JSON.stringify({
      pid,
      writtenAt: new Date().toISOString(),
      env: {
        MONGODB_URI: config.MONGODB_URI,
        TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
        ENCRYPTION_KEY: config.ENCRYPTION_KEY,
        TWILIO_API_BASE_URL: config.TWILIO_API_BASE_URL,
        VONAGE_API_BASE_URL: config.VONAGE_API_BASE_URL,
        TELNYX_API_BASE_URL: config.TELNYX_API_BASE_URL,
      },
    }),
  );
}

async function json(env: NodeJS.ProcessEnv, ...args: string[]) {
  const result = await admin(env, ...args, '--json');
  expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(1);
  const body = JSON.parse(result.stdout) as Record<string, string>;
  expect(result.code, JSON.stringify(body)).toBe(0);
  return { body, stderr: result.stderr };
}

describe('the operator command line against a running local stack', () => {
  it('with no variables set finds the stack, says so, and makes a tenant whose calls complete through every provider', async () => {
    await writeStackFile(process.pid);
    const env = cleanEnv({ OCO_DATA_DIR: dataDir });
    const team = await json(env, 'team', 'create', '--name', 'Acme', '--provider', 'twilio');
    expect(team.stderr).toContain('local-stack.json');
    expect(team.stderr).toMatch(/emulator accounts and from-numbers set for twilio, vonage, telnyx/);
    const { teamId } = team.body;
    const template = await json(
      env,
      'template',
      'create',
      '--team',
      teamId!,
      '--name',
      'Hello',
      '--prompt',
      'Hello {{firstName}}',
      '--required-variables',
      'firstName',
      '--tag',
      'interested=sounds good',
      '--result-column',
      'interested',
    );
    const { key } = (await json(env, 'key', 'create', '--team', teamId!)).body;

    const api = apiClient(stack.baseUrl, key);
    const ids: string[] = [];
    for (const provider of ['twilio', 'vonage', 'telnyx']) {
      const created = await api.post('/v1/phoneCalls', {
        teamId,
        callTemplateId: template.body.callTemplateId,
        toPhoneNumber: '+14155550007',
        telephonyProvider: provider,
        promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      ids.push(created.body.data._id as string);
    }
    for (const id of ids) {
      const call = await eventually(
        async () => {
          const body = (await api.get(`/v1/phoneCalls/${id}`)).body.data;
          return ['completed', 'failed', 'busy', 'noAnswer'].includes(body.status) ? body : undefined;
        },
        60_000,
        `call ${id} to end`,
      );
      expect(call).toMatchObject({ status: 'completed', statusExtraInfo: { statusCode: 'completed' } });
    }
  });

  it('explicit variables win over the stack file', async () => {
    await writeStackFile(process.pid);
    const result = await admin(
      cleanEnv({ OCO_DATA_DIR: dataDir, MONGODB_URI: 'mongodb://127.0.0.1:1/nothing' }),
      'team',
      'list',
      '--json',
    );
    expect(result.stderr).not.toContain('local-stack.json');
    expect(JSON.parse(result.stdout).error).toMatch(/ENCRYPTION_KEY is required/);
  });

  it('with no stack running and nothing set, says both ways out', async () => {
    // The file of an `npm start` that has stopped (its process is gone) describes no running stack.
    await writeStackFile(2 ** 22 + 12_345);
    const result = await admin(cleanEnv({ OCO_DATA_DIR: dataDir }), 'team', 'list', '--json');
    expect(result.code).not.toBe(0);
    const { error } = JSON.parse(result.stdout) as { error: string };
    expect(error).toMatch(/MONGODB_URI is required/);
    expect(error).toMatch(/npm start/);
    expect(error).toMatch(/set MONGODB_URI and ENCRYPTION_KEY/);
  });
});

describe('a provider without credentials', () => {
  let teamId: string;
  let templateId: string;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    const team = await stack.seedTeam('Partly configured');
    teamId = team.teamId;
    templateId = team.templateId;
    api = apiClient(stack.baseUrl, team.key);
    // An operator removes the team's Vonage credentials.
    const doc = await Team.findById(teamId).lean();
    const settings = doc!.providerSettings.map((s) =>
      s.provider === 'vonage' ? { provider: s.provider, fromNumbers: s.fromNumbers } : s,
    );
    await Team.updateOne({ _id: teamId }, { $set: { providerSettings: settings } });
  });
  const body = (extra: Record<string, unknown> = {}) => ({
    teamId,
    callTemplateId: templateId,
    toPhoneNumber: '+14155550007',
    promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
    ...extra,
  });

  it('is refused at create, naming telephonyProvider, and nothing is stored', async () => {
    const single = await api.post('/v1/phoneCalls', body({ telephonyProvider: 'vonage' }));
    expect(errorMessages(single, 400)).toEqual([
      expect.stringMatching(/^telephonyProvider vonage has no credentials for this team/),
    ]);
    const batch = await api.post('/v1/phoneCalls/batch', {
      phoneCalls: [body(), body({ telephonyProvider: 'vonage' })],
    });
    expect(errorMessages(batch, 400)).toEqual([
      expect.stringMatching(/^phoneCalls\.1\.telephonyProvider vonage has no credentials/),
    ]);
    expect(await PhoneCall.countDocuments({ teamId })).toBe(0);
  });

  it('ends a call at once when its credentials disappear between create and dial', async () => {
    const to = '+14155550008';
    const created = await api.post(
      '/v1/phoneCalls',
      body({
        telephonyProvider: 'telnyx',
        toPhoneNumber: to,
        callDelayedUntil: new Date(Date.now() + 2_000).toISOString(),
      }),
    );
    expect(created.status).toBe(201);
    const doc = await Team.findById(teamId).lean();
    const settings = doc!.providerSettings.map((s) =>
      s.provider === 'telnyx' ? { provider: s.provider, fromNumbers: s.fromNumbers } : s,
    );
    await Team.updateOne({ _id: teamId }, { $set: { providerSettings: settings } });
    const started = Date.now();
    const call = await eventually(
      async () => {
        const current = (await api.get(`/v1/phoneCalls/${created.body.data._id}`)).body.data;
        return current.status === 'queued' ? undefined : current;
      },
      30_000,
      'the call to end',
    );
    expect(call).toMatchObject({ status: 'failed', statusExtraInfo: { statusCode: 'provider-not-configured' } });
    // No retries for minutes: the dial gives up on its first attempt.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(stack.emulator.callsTo(to)).toBe(0);
  });
});

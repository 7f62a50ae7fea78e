// The operator command line as a script would use it: one JSON object on stdout per command.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { authenticateApiKey } from '../../src/auth/api-keys';
import { CommandError, createTemplate, setTeamProvider } from '../../src/admin/commands';
import { createSecretBox } from '../../src/crypto/secret-box';
import { CallTemplate } from '../../src/data/models/call-template';
import { Team } from '../../src/data/models/team';
import { freePort } from '../../src/local/servers';
import { runAdmin, type AdminResult } from '../helpers/admin-cli';
import { withDatabase } from '../helpers/database-uri';
import { startReceiver } from '../helpers/receiver';

const env = {
  ...process.env,
  MONGODB_URI: withDatabase(inject('mongoUri'), `admin_${randomBytes(4).toString('hex')}`),
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  LOG_LEVEL: 'silent',
};

function admin(...args: string[]): Promise<AdminResult> {
  return adminWith({}, ...args);
}

/** The CLI with some variables of its environment changed. */
function adminWith(changed: NodeJS.ProcessEnv, ...args: string[]): Promise<AdminResult> {
  return runAdmin({ ...env, ...changed }, args);
}

async function json(...args: string[]) {
  return jsonWith({}, ...args);
}

async function jsonWith(changed: NodeJS.ProcessEnv, ...args: string[]) {
  const result = await adminWith(changed, ...args, '--json');
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return { ...result, body: JSON.parse(result.stdout) as Record<string, any> };
}

/**
 * A command's refusal made in this process, by the function the command runs: a loop over refused
 * values spawns the CLI for its first value only (the exit code and the JSON error are the same for
 * each), as every spawn costs the suite about a second of CPU.
 */
async function refusal(command: () => Promise<unknown>): Promise<string> {
  const outcome = await command().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(CommandError);
  return (outcome as CommandError).message;
}

beforeAll(async () => {
  await mongoose.connect(env.MONGODB_URI);
});
afterAll(async () => {
  await mongoose.connection.db?.dropDatabase();
  await mongoose.disconnect();
});

describe('npm run admin', () => {
  it('creates and lists teams, keys, templates and numbers, and revokes keys', async () => {
    const team = await json('team', 'create', '--name', 'Acme', '--provider', 'vonage');
    expect(team.code).toBe(0);
    expect(team.body.teamId).toMatch(/^[0-9a-f]{24}$/);
    const teamId = team.body.teamId as string;
    expect((await Team.findById(teamId).lean())?.defaultProvider).toBe('vonage');

    const key = await json(
      'key',
      'create',
      '--team',
      teamId,
      '--scopes',
      'calls:read,voices:read',
      '--expires-in',
      '90d',
    );
    expect(key.body).toEqual({ keyId: expect.stringMatching(/^[0-9a-f]{24}$/), key: expect.stringMatching(/^oco_/) });
    const auth = await authenticateApiKey(key.body.key);
    expect(auth?.teamId).toBe(teamId);
    expect([...auth!.scopes].sort()).toEqual(['calls:read', 'voices:read']);

    const template = await json(
      'template',
      'create',
      '--team',
      teamId,
      '--name',
      'Renewal',
      '--prompt',
      'Hi {{firstName}}, your {{product}} renews soon.',
      '--required-variables',
      'firstName',
      '--tag',
      'yes=sounds good',
      '--tag',
      'yes=go ahead',
      '--result-column',
      'interested',
    );
    const stored = await CallTemplate.findById(template.body.callTemplateId).lean();
    expect(stored).toMatchObject({
      variables: ['firstName', 'product'],
      requiredVariables: ['firstName'],
      resultColumns: ['interested'],
    });
    expect(stored?.customTags).toEqual([{ name: 'yes', triggerPhrases: ['sounds good', 'go ahead'] }]);
    expect(stored?.redialPolicy).toBeNull();

    const redialling = await json(
      'template',
      'create',
      '--team',
      teamId,
      '--name',
      'Redialler',
      '--prompt',
      'Hi {{firstName}}',
      '--redial-on',
      'busy,noAnswer',
      '--redials',
      '2',
      '--redial-spacing',
      '90m',
    );
    expect((await CallTemplate.findById(redialling.body.callTemplateId).lean())?.redialPolicy).toEqual({
      on: ['busy', 'noAnswer'],
      maxRedials: 2,
      spacingSeconds: 5_400,
    });
    const listed = (await json('template', 'list', '--team', teamId)).body.templates;
    expect(listed.map((t: { redial: string }) => t.redial)).toEqual([
      'never',
      'busy, noAnswer: up to 2 more, 5400 s apart',
    ]);
    const bad = await json(
      'template',
      'create',
      '--team',
      teamId,
      '--name',
      'x',
      '--prompt',
      'Hi',
      '--redial-on',
      'voicemail',
      '--redials',
      '1',
      '--redial-spacing',
      '1h',
    );
    expect(bad.code).toBe(2);
    expect(bad.body.error).toMatch(/^--redial-on must list some of/);
    for (const [policy, error] of [
      [{ redialOn: 'busy', redials: '11', redialSpacing: '1h' }, /^--redials must be an integer from 1 to 10/],
      [{ redialOn: 'busy', redials: '1' }, /^--redial-spacing is required/],
      [{ redialOn: 'busy', redials: '1', redialSpacing: '8d' }, /^--redial-spacing must be from 1s to 7d/],
    ] as const) {
      expect(await refusal(() => createTemplate({ team: teamId, name: 'x', prompt: 'Hi', ...policy }))).toMatch(error);
    }

    const number = await json(
      'phone-number',
      'create',
      '--team',
      teamId,
      '--number',
      '+1 415 555 0199',
      '--provider',
      'telnyx',
    );
    expect(number.body.phoneNumberId).toMatch(/^[0-9a-f]{24}$/);
    expect((await json('phone-number', 'list', '--team', teamId)).body.phoneNumbers).toEqual([
      { phoneNumberId: number.body.phoneNumberId, number: '+14155550199', provider: 'telnyx' },
    ]);
    const teams = (await json('team', 'list')).body.teams;
    expect(teams.find((t: { teamId: string }) => t.teamId === teamId).providers).toEqual([
      { provider: 'telnyx', fromNumbers: ['+14155550199'], hasCredentials: false },
    ]);

    const revoked = await json('key', 'revoke', '--key-id', key.body.keyId);
    expect(revoked.body).toEqual({ keyId: key.body.keyId, revoked: true });
    expect(await authenticateApiKey(key.body.key)).toBeNull();
    const keys = (await json('key', 'list', '--team', teamId)).body.keys;
    expect(keys).toEqual([expect.objectContaining({ keyId: key.body.keyId, revoked: true })]);
    expect(JSON.stringify(keys)).not.toContain(key.body.key);
  });

  it('answers bad input with one JSON error object and a non-zero exit', async () => {
    const missing = await json('team', 'create');
    expect(missing.code).not.toBe(0);
    expect(missing.body).toEqual({ error: '--name is required' });
    const badScope = await json('key', 'create', '--team', '0123456789abcdef01234567', '--scopes', 'calls:read');
    expect(badScope.body.error).toBe('no team with id 0123456789abcdef01234567');
    const unknown = await json('team', 'explode');
    expect(unknown.body.error).toBe("unknown command 'explode'");
    // Help of a command there is not: said the same way (it was commander's marker, "(outputHelp)").
    const helpOfUnknown = await json('help', 'nosuch');
    expect(helpOfUnknown.code).toBe(2);
    expect(helpOfUnknown.body).toEqual({ error: "unknown command 'nosuch'" });
    const human = await admin('team', 'create', '--name', 'Readable');
    expect(human.stdout).toMatch(/^teamId: [0-9a-f]{24}\n$/);
  });

  it("refuses provider credentials that lack what the provider's adapter needs, naming each field", async () => {
    const teamId = (await json('team', 'create', '--name', 'Credentials')).body.teamId as string;
    const setProvider = (provider: string, credentials: unknown) =>
      json(
        'team',
        'set-provider',
        '--team',
        teamId,
        '--provider',
        provider,
        '--credentials',
        JSON.stringify(credentials),
      );

    for (const [i, [provider, credentials, error]] of (
      [
        [
          'telnyx',
          { foo: 1 },
          '--credentials for telnyx: apiKey is required; connectionId is required; publicKey is required; ' +
            'foo is not allowed (it takes apiKey, connectionId, publicKey)',
        ],
        [
          'twilio',
          { accountSid: 'SK0123456789abcdef0123456789abcdef', authToken: '' },
          '--credentials for twilio: accountSid must be the Account SID: AC and 32 hex digits; ' +
            'authToken must not be empty (it takes accountSid, authToken)',
        ],
        [
          'vonage',
          { applicationId: 'app', privateKey: 'not a key', signatureSecret: 7 },
          "--credentials for vonage: privateKey must be the application's RSA private key (PEM); " +
            'signatureSecret must be a string (it takes applicationId, privateKey, signatureSecret)',
        ],
        [
          'telnyx',
          ['apiKey'],
          '--credentials for telnyx: must be a JSON object (it takes apiKey, connectionId, publicKey)',
        ],
      ] as const
    ).entries()) {
      if (i === 0) {
        const refused = await setProvider(provider, credentials);
        expect(refused.code).toBe(2);
        expect(refused.body).toEqual({ error });
      } else {
        const given = { team: teamId, provider, credentials: JSON.stringify(credentials) };
        expect(await refusal(() => setTeamProvider(given, createSecretBox(env.ENCRYPTION_KEY)))).toBe(error);
      }
    }
    const refusedTeam = (await json('team', 'list')).body.teams.find((t: { teamId: string }) => t.teamId === teamId);
    expect(refusedTeam.providers).toEqual([]);

    // What the adapter reads, as given (surrounding spaces dropped): stored, sealed.
    // The public key as Mission Control shows it: base64 of its 32 raw bytes.
    const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
    const telnyx = {
      apiKey: ' KEY0123 ',
      connectionId: '1494404757140276705',
      publicKey: Buffer.from(raw, 'base64url').toString('base64'),
    };
    const accepted = await setProvider('telnyx', telnyx);
    expect(accepted.body).toEqual({ teamId, provider: 'telnyx' });
    const stored = (await Team.findById(teamId).lean())!.providerSettings[0]!;
    expect(JSON.parse(createSecretBox(env.ENCRYPTION_KEY).open(stored.credentialsSealed!))).toEqual({
      provider: 'telnyx',
      telnyx: { ...telnyx, apiKey: 'KEY0123' },
    });
  });

  it('exits 1 when the API cannot answer (unreachable, a 5xx) and 2 when it refuses (a 4xx)', async () => {
    const calls = (apiUrl: string) => json('calls', 'list', '--key', 'oco_x_y', '--api-url', apiUrl);
    const unreachable = await calls(`http://127.0.0.1:${await freePort()}`);
    expect(unreachable.code).toBe(1);
    expect(unreachable.body.error).toMatch(/^the API at http:\/\/127\.0\.0\.1:\d+ cannot be reached: .*ECONNREFUSED/);

    // A proxy in front of the API: 503 while the API is down, then the API's own 401 for a bad key.
    const proxy = await startReceiver();
    try {
      proxy.on('/v1/phoneCalls', (_request, count) => (count === 1 ? 503 : 401));
      const down = await calls(proxy.url);
      expect(down).toMatchObject({ code: 1, body: { error: '503: Service Unavailable' } });
      const refused = await calls(proxy.url);
      expect(refused).toMatchObject({ code: 2, body: { error: '401: Unauthorized' } });
    } finally {
      await proxy.close();
    }
  });
});

describe('refused input and unreachable servers, as a reviewer found them', () => {
  let teamId: string;
  let dir: string;
  beforeAll(async () => {
    teamId = (await json('team', 'create', '--name', 'Review')).body.teamId as string;
    dir = await mkdtemp(path.join(tmpdir(), 'oco-admin-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const template = (...flags: string[]) =>
    json('template', 'create', '--team', teamId, '--name', 'T', '--prompt', 'Hi {{firstName}}', ...flags);

  it('refuses a maximum duration that is not a whole number of seconds from 1 to 14400, and a voice not listed', async () => {
    const given = { team: teamId, name: 'T', prompt: 'Hi {{firstName}}' };
    const tooLong = await template('--max-duration-seconds', '14401');
    expect(tooLong.code).toBe(2);
    expect(tooLong.body.error).toBe('--max-duration-seconds must be a whole number from 1 to 14400, got "14401"');
    for (const value of ['-5', '0', 'abc', '1.5']) {
      expect(await refusal(() => createTemplate({ ...given, maxDurationSeconds: value }))).toBe(
        `--max-duration-seconds must be a whole number from 1 to 14400, got "${value}"`,
      );
    }
    const notAVoice = await template('--voice-id', '99999');
    expect(notAVoice.code).toBe(2);
    const voiceRefusal = /^--voice-id must be the id of a voice of GET \/v1\/voices \(1, 2, .*\), got "/;
    expect(notAVoice.body.error).toMatch(voiceRefusal);
    for (const value of ['0', 'ava']) {
      expect(await refusal(() => createTemplate({ ...given, voiceId: value }))).toMatch(voiceRefusal);
    }
    const made = await template('--max-duration-seconds', '600', '--voice-id', '2');
    expect(made.code).toBe(0);
    expect(await CallTemplate.findById(made.body.callTemplateId).lean()).toMatchObject({
      maxDurationSeconds: 600,
      voiceId: 2,
    });
  });

  it('refuses text that looks like a placeholder but is none, and variables a CSV column could not tell apart', async () => {
    // Before, `{{first-name}}` made a template with no variable, and every call's agent said the braces.
    const given = { team: teamId, name: 'T' };
    const form = 'which would be spoken as written: a variable is {{name}}, its name ASCII letters, digits and _';
    for (const [prompt, named] of [
      ['Hello {{first-name}}, this is Ada', '"{{first-name}}"'],
      ['Hello {{firstName}, this is Ada', '"{{firstName}"'],
      ['Bonjour {{ prénom }} et {{nom}}', '"{{ prénom }}"'],
      ['Hello {{first name}}', '"{{first name}}"'],
      ['Hello {{{firstName}}}', '"{", "}"'],
    ]) {
      expect(await refusal(() => createTemplate({ ...given, prompt: prompt! }))).toMatch(
        new RegExp(`^--prompt has ${named!.replace(/[{}]/g, '\\$&')}, ${form.replace(/[{}]/g, '\\$&')}`),
      );
    }
    expect(await refusal(() => createTemplate({ ...given, prompt: 'Hi {{firstName}}, {{first_name}}' }))).toBe(
      '--prompt uses {{firstName}} and {{first_name}}, which differ only in case or _: use one name',
    );
    const made = await template();
    expect(made.code).toBe(0);
  });

  it('refuses a custom tag whose name or phrase is only spaces, and a result column without a name', async () => {
    // Before, ' =x' reached the template's schema and ended in its validation error (exit code 1).
    const given = { team: teamId, name: 'T', prompt: 'Hi {{firstName}}' };
    for (const tag of [' =yes', 'interested= ', '=yes', 'interested']) {
      expect(await refusal(() => createTemplate({ ...given, tags: [tag] }))).toBe(
        `--tag must look like NAME=PHRASE, got "${tag}"`,
      );
    }
    expect(await refusal(() => createTemplate({ ...given, resultColumns: ['summary', ' '] }))).toBe(
      '--result-column must name a column',
    );
  });

  it('refuses a voicemail message without leaveMessage, leaveMessage without a message, unknown variables and malformed ones', async () => {
    const refusals = await Promise.all(
      [
        ['--machine-detection', 'sometimes'],
        ['--machine-detection', 'leaveMessage'],
        ['--voicemail-message', 'Call us back'],
        ['--machine-detection', 'leaveMessage', '--voicemail-message', 'Hi {{lastName}}'],
        ['--machine-detection', 'leaveMessage', '--voicemail-message', 'Hi {{first-name}}, call us back'],
      ].map((flags) => template(...flags)),
    );
    expect(refusals.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    const [mode, noMessage, noMode, unknown, malformed] = refusals.map((r) => r.body.error as string);
    expect(malformed).toMatch(/^--voicemail-message has "\{\{first-name\}\}", which would be spoken/);
    expect(mode).toMatch(/--machine-detection must be one of off, hangUp, leaveMessage/);
    expect(noMessage).toMatch(/--voicemail-message is required/);
    expect(noMode).toMatch(/needs --machine-detection leaveMessage/);
    expect(unknown).toMatch(/variables the prompt does not: lastName/);
    const made = await template(
      '--machine-detection',
      'leaveMessage',
      '--voicemail-message',
      'Hi {{firstName}}, call us back.',
    );
    expect(made.code).toBe(0);
    expect(await CallTemplate.findById(made.body.callTemplateId).lean()).toMatchObject({
      machineDetection: 'leaveMessage',
      voicemailMessage: 'Hi {{firstName}}, call us back.',
    });
  });

  it("sets a team's pacing limits, and `default` puts one back to the service's default", async () => {
    const limits = (...flags: string[]) => json('team', 'set-limits', '--team', teamId, ...flags);
    expect(
      (await limits('--max-concurrent-calls', '5', '--dials-per-second', 'twilio=2,telnyx=7')).body.limits,
    ).toEqual({ maxConcurrentCalls: 5, dialsPerSecond: { twilio: 2, vonage: null, telnyx: 7 } });
    expect(
      (await limits('--max-concurrent-calls', 'default', '--dials-per-second', 'twilio=default')).body.limits,
    ).toEqual({ maxConcurrentCalls: null, dialsPerSecond: { twilio: null, vonage: null, telnyx: 7 } });
    const refused = await limits('--dials-per-second', 'twilio=fast');
    expect(refused.code).toBe(2);
    expect(refused.body.error).toContain('or default');
  });

  it('refuses a number already registered for another provider; the same provider again answers the same id', async () => {
    const create = (provider: string) =>
      json('phone-number', 'create', '--team', teamId, '--number', '+14155550177', '--provider', provider);
    const first = await create('twilio');
    expect(first.code).toBe(0);
    expect((await create('twilio')).body).toEqual(first.body);
    const other = await create('vonage');
    expect(other).toMatchObject({ code: 2, body: { error: '+14155550177 is already registered for twilio' } });
    const team = (await json('team', 'list')).body.teams.find((t: { teamId: string }) => t.teamId === teamId);
    expect(team.providers.filter((p: { fromNumbers: string[] }) => p.fromNumbers.includes('+14155550177'))).toEqual([
      { provider: 'twilio', fromNumbers: ['+14155550177'], hasCredentials: false },
    ]);
  });

  it('refuses an expiry beyond ten years, a malformed API URL and an option given as a value, with exit code 2', async () => {
    const forever = await json('key', 'create', '--team', teamId, '--expires-in', '999999999999d');
    expect(forever).toMatchObject({
      code: 2,
      body: { error: '--expires-in must be from 1s to 3650d (ten years), got "999999999999d"' },
    });
    const notUrl = await json('calls', 'list', '--key', 'oco_x_y', '--api-url', 'notaurl');
    expect(notUrl.code).toBe(2);
    expect(notUrl.body.error).toMatch(/^--api-url \(or PUBLIC_BASE_URL\) must be an http:\/\/ or https:\/\/ URL/);
    const teams = (await Team.find({ name: '--json' }).lean()).length;
    const swallowed = await json('team', 'create', '--name');
    expect(swallowed).toMatchObject({
      code: 2,
      body: { error: '--name needs a value, got the option "--json" instead' },
    });
    expect(await Team.find({ name: '--json' }).lean()).toHaveLength(teams);
  });

  it('names every bad line of an import at once: lines that do not parse and numbers on the do-not-call list', async () => {
    const tpl = (await template('--required-variables', 'firstName')).body.callTemplateId as string;
    expect((await json('dnc', 'add', '--team', teamId, '--number', '+14155550181')).code).toBe(0);
    const file = path.join(dir, 'mixed.csv');
    await writeFile(file, ['phone,firstName', '+14155550181,Ada', 'not a number,Bo', '+14155550183,'].join('\n'));
    // The file is checked before the API is asked: nothing listens at this URL.
    const imported = await json(
      'calls',
      'import',
      '--team',
      teamId,
      '--template',
      tpl,
      '--file',
      file,
      '--key',
      'oco_x_y',
      '--api-url',
      'http://127.0.0.1:1',
    );
    expect(imported.code).toBe(2);
    expect(imported.body.error).toBe(
      'nothing imported: 2 bad line(s) and 1 number(s) on the do-not-call list:\n' +
        "line 2: +14155550181 is on the team's do-not-call list\n" +
        'line 3: toPhoneNumber must be a valid E.164 phone number\n' +
        'line 4: missing required variable(s) firstName',
    );
  });

  it('reads a relative --file from the folder npm run was started in (INIT_CWD), naming the path it tried', async () => {
    await writeFile(path.join(dir, 'opt-outs.csv'), 'phone\n+14155550191\n');
    const imported = await jsonWith({ INIT_CWD: dir }, 'dnc', 'import', '--team', teamId, '--file', 'opt-outs.csv');
    expect(imported).toMatchObject({ code: 0, body: { numbers: 1, added: 1 } });
    const missing = await jsonWith(
      { INIT_CWD: dir },
      'calls',
      'import',
      '--team',
      teamId,
      '--template',
      (await template()).body.callTemplateId as string,
      '--file',
      'spring.csv',
      '--key',
      'oco_x_y',
      '--api-url',
      'http://127.0.0.1:1',
    );
    expect(missing.code).toBe(2);
    expect(missing.body.error).toBe(`cannot read ${path.join(dir, 'spring.csv')}: ENOENT: no such file or directory`);
  });

  it('warns on stderr when secrets open under none of the keys (the next step of a rotation drops a key)', async () => {
    const lost = await Team.create({
      name: 'Sealed elsewhere',
      defaultProvider: 'twilio',
      providerSettings: [
        {
          provider: 'twilio',
          fromNumbers: [],
          credentialsSealed: createSecretBox(randomBytes(32).toString('base64')).seal('{}'),
        },
      ],
    });
    try {
      const resealed = await json('secrets', 'reseal');
      expect(resealed.code).toBe(0);
      expect(resealed.body.teams.unreadable).toBe(1);
      expect(resealed.stderr).toMatch(
        /^Warning: 1 document\(s\) hold a secret that opens under none of the keys given \(teams 1, webhooks 0, phoneCalls 0;/m,
      );
    } finally {
      await Team.deleteOne({ _id: lost._id });
    }
  });

  it('names MongoDB and Temporal when they cannot be reached (exit code 1), never the credentials', async () => {
    const [mongoPort, temporalPort] = [await freePort(), await freePort()];
    const [mongo, temporal] = await Promise.all([
      jsonWith({ MONGODB_URI: `mongodb://ops:hunter2@127.0.0.1:${mongoPort}/oco` }, 'team', 'list'),
      jsonWith(
        { TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}` },
        'batch',
        'pause',
        '--team',
        teamId,
        '--file-id',
        'csv-none',
      ),
    ]);
    expect(mongo.code).toBe(1);
    expect(mongo.body.error).toMatch(new RegExp(`^MongoDB at 127\\.0\\.0\\.1:${mongoPort} cannot be reached: .+`));
    expect(mongo.stdout + mongo.stderr).not.toContain('hunter2');
    expect(temporal.code).toBe(1);
    expect(temporal.body.error).toMatch(
      new RegExp(`^Temporal at 127\\.0\\.0\\.1:${temporalPort} cannot be reached: .+`),
    );
  }, 60_000);
});

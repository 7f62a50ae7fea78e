// Fuzzes the running API against its own OpenAPI document with schemathesis (`--checks all`), as a
// real tenant: the calls, webhooks and numbers it names exist, so every operation reaches its logic
// instead of stopping at 401, 403 or 404. Makes its Python venv once, in the binaries' cache folder.
//
//   npm run schemathesis                    # against `npm start` (its demo team and key)
//   npm run schemathesis -- --max-examples 200
//   tsx scripts/schemathesis.ts --url URL --key KEY --team T --template C --phone-number P
//
// Exit code: schemathesis' own (0 when it found nothing).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cacheDir } from '../src/local/binaries';
import { dataDir, readStackSettings } from '../src/local/stack-settings';

export const SCHEMATHESIS_VERSION = '4.32.5';

export interface Tenant {
  url: string;
  key: string;
  teamId: string;
  callTemplateId: string;
  phoneNumberId: string;
  /** A value for each variable the template requires. */
  promptVariableValues: Array<{ key: string; value: string }>;
}

/**
 * Runs a command; its output goes to ours, or into `captured` when one is given. Past `timeoutMs` the
 * command is killed and a line saying so ends the captured output, so that a run that stalls still
 * shows how far it got.
 */
function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; captured?: string[]; cwd?: string; timeoutMs?: number } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const { captured } = options;
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: captured ? 'pipe' : 'inherit',
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            const line = `\n${command} still running after ${options.timeoutMs} ms: killed\n`;
            if (captured) captured.push(line);
            else process.stderr.write(line);
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => captured?.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => captured?.push(chunk.toString()));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code ?? 1);
    });
  });
}

/** The `st` executable of a venv with schemathesis pinned, made once (about 10 s). */
export async function ensureSchemathesis(): Promise<string> {
  const venv = path.join(cacheDir(), `schemathesis-venv-${SCHEMATHESIS_VERSION}`);
  const st = path.join(venv, 'bin', 'st');
  // Written last: a venv whose install was interrupted is made again.
  const complete = path.join(venv, '.complete');
  if (existsSync(complete)) return st;
  process.stderr.write(`Installing schemathesis ${SCHEMATHESIS_VERSION} into ${venv} (once)...\n`);
  await rm(venv, { recursive: true, force: true });
  if ((await run('python3', ['-m', 'venv', venv])) !== 0) {
    throw new Error(
      'python3 -m venv failed: install Python 3 with venv support (Debian: apt-get install python3-venv)',
    );
  }
  if ((await run(path.join(venv, 'bin', 'pip'), ['install', '-q', `schemathesis==${SCHEMATHESIS_VERSION}`])) !== 0) {
    throw new Error(`pip install schemathesis==${SCHEMATHESIS_VERSION} failed (see above)`);
  }
  await writeFile(complete, `${new Date().toISOString()}\n`);
  return st;
}

async function api<T>(tenant: Tenant, method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${tenant.url}${route}`, {
    method,
    headers: { 'service-api-key': tenant.key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A TOML value: strings as JSON strings (valid TOML basic strings), arrays, inline tables. */
/** The one number the fuzzer lists and unlists. */
const DNC_NUMBER = '+14155550199';

function toml(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(toml).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{ ${Object.entries(value)
      .map(([key, inner]) => `${JSON.stringify(key)} = ${toml(inner)}`)
      .join(', ')} }`;
  }
  return JSON.stringify(value);
}

/**
 * The configuration: fixed values where the document cannot say what the data must be (ids that
 * exist, the template's variables, a schedule within a year, a number that can exist); everything
 * else is generated from the document.
 */
async function writeConfig(tenant: Tenant, dir: string): Promise<string> {
  // Resources the path parameters name: a webhook, and a call scheduled far ahead (deletable once).
  const webhook = await api<{ data: { _id: string } }>(tenant, 'POST', '/v1/webhooks', {
    teamId: tenant.teamId,
    url: 'http://127.0.0.1:9/schemathesis',
    subscribedEvents: ['phoneCall.completed'],
    method: 'POST',
  });
  const schedule = new Date(Date.now() + 300 * 86_400_000).toISOString();
  const call = {
    teamId: tenant.teamId,
    callTemplateId: tenant.callTemplateId,
    phoneNumberId: tenant.phoneNumberId,
    toPhoneNumber: '+14155550007',
    fromPhoneNumber: '+14155550100',
    promptVariableValues: tenant.promptVariableValues,
    callDelayedUntil: schedule,
    phoneCallWebhooks: [],
    // A zone must be one the IANA database has, which the document's pattern cannot say.
    calleeTimeZone: 'America/Los_Angeles',
  };
  const created = await api<{ data: { _id: string } }>(tenant, 'POST', '/v1/phoneCalls', call);
  const lines = [
    `base-url = ${toml(tenant.url)}`,
    `headers = { "service-api-key" = ${toml(tenant.key)} }`,
    // The document forbids U+0000 in prose (a pattern on every string would only repeat it), and
    // the server answers it with 400 naming the field; the integration tests check that.
    '[generation]',
    'allow-x00 = false',
    '[parameters]',
    `"path.id" = ${toml(created.data._id)}`,
    `"path._id" = ${toml(webhook.data._id)}`,
    `"body.url" = ${toml('http://127.0.0.1:9/schemathesis')}`,
    // Every webhook the fuzzer makes would get a delivery workflow per call event: subscribe them
    // to an event the fuzzed calls (scheduled months ahead) never reach.
    `"body.subscribedEvents" = ${toml(['phoneCall.completed'])}`,
    `"query.toPhoneNumber" = ${toml(call.toPhoneNumber)}`,
    // Phone numbers must be numbers that can exist, which no pattern can say: the do-not-call list gets
    // one, never the number the fuzzed calls go to (a listed number is refused on create).
    `"path.phoneNumber" = ${toml(DNC_NUMBER)}`,
    `"query.phoneNumber" = ${toml(DNC_NUMBER)}`,
    `"body.entries" = ${toml([{ phoneNumber: DNC_NUMBER, reason: 'schemathesis' }])}`,
  ];
  for (const [field, value] of Object.entries(call)) lines.push(`${toml(`body.${field}`)} = ${toml(value)}`);
  // A batch's elements are the single create's body, fuzzed there; here one element, so that the
  // generator's 10,000-element boundary cases do not start tens of thousands of workflows.
  lines.push(`"body.phoneCalls" = ${toml([call])}`);
  lines.push(
    '[[operations]]',
    'include-path = "/v1/phoneCalls/batch"',
    'include-method = "POST"',
    // Its coverage phase builds batches of its own for the array's bounds (up to 10,000 elements of
    // generated numbers) and ignores the fixed element; the elements are the single create's body,
    // covered there, and the bounds are checked by the integration tests.
    'phases.coverage.enabled = false',
  );
  // A webhook's url must parse as an absolute http or https URL (WHATWG), which the document's
  // `format: uri` does not narrow and no pattern says exactly: the coverage phase ignores the fixed
  // url above and makes URIs such as `Ed:`, rightly refused (400). The url's checks are
  // test/integration/webhooks.test.ts's; the other phases still fuzz these operations.
  for (const [method, webhookPath] of [
    ['POST', '/v1/webhooks'],
    ['PATCH', '/v1/webhooks/{_id}'],
  ])
    lines.push(
      '[[operations]]',
      `include-path = ${toml(webhookPath)}`,
      `include-method = ${toml(method)}`,
      'phases.coverage.enabled = false',
    );
  const file = path.join(dir, 'schemathesis.toml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

/** Runs schemathesis against the tenant; answers its exit code (and its report, when `capture`). */
export async function runSchemathesis(
  tenant: Tenant,
  options: { maxExamples: number; extraArgs?: string[]; capture?: boolean; timeoutMs?: number },
): Promise<{ code: number; report: string }> {
  const captured = options.capture ? [] : undefined;
  const st = await ensureSchemathesis();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'oco-schemathesis-'));
  try {
    const config = await writeConfig(tenant, dir);
    const code = await run(
      st,
      [
        '--config-file',
        config,
        'run',
        `${tenant.url}/v1/openapi.json`,
        '--checks',
        'all',
        '--max-examples',
        String(options.maxExamples),
        '--workers',
        '2',
        '--request-timeout',
        '30',
        '--no-color',
        ...(options.extraArgs ?? []),
      ],
      // The hooks module is imported by name from the scripts folder. Run in the temporary folder, where
      // schemathesis leaves its `.schemathesis/` cache, not in the repository.
      // Unbuffered, so that the report of a run killed at its deadline has every line it printed.
      {
        env: {
          ...process.env,
          SCHEMATHESIS_HOOKS: 'schemathesis_hooks',
          PYTHONPATH: __dirname,
          PYTHONUNBUFFERED: '1',
        },
        captured,
        cwd: dir,
        timeoutMs: options.timeoutMs,
      },
    );
    return { code, report: captured?.join('') ?? '' };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The demo team of a running `npm start`. */
async function localTenant(): Promise<Omit<Tenant, 'promptVariableValues'>> {
  const stack = readStackSettings();
  if (!stack)
    throw new Error(
      'no local stack is running: start one with `npm start`, or pass --url, --key, --team, --template and --phone-number',
    );
  const demo = JSON.parse(await readFile(path.join(dataDir(), 'demo.json'), 'utf8')) as {
    key: string;
    teamId: string;
    callTemplateId: string;
    phoneNumberId?: string;
  };
  if (!demo.phoneNumberId)
    throw new Error('the demo team has no phone number id in .data/demo.json: restart npm start once');
  return {
    url: stack.env.PUBLIC_BASE_URL ?? 'http://localhost:3000',
    key: demo.key,
    teamId: demo.teamId,
    callTemplateId: demo.callTemplateId,
    phoneNumberId: demo.phoneNumberId,
  };
}

if (require.main === module) {
  const { values, positionals } = parseArgs({
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      team: { type: 'string' },
      template: { type: 'string' },
      'phone-number': { type: 'string' },
      'max-examples': { type: 'string', default: '50' },
    },
    allowPositionals: true,
  });
  (async () => {
    const base = values.url
      ? {
          url: values.url,
          key: values.key!,
          teamId: values.team!,
          callTemplateId: values.template!,
          phoneNumberId: values['phone-number']!,
        }
      : await localTenant();
    const { code } = await runSchemathesis(
      { ...base, promptVariableValues: [{ key: 'firstName', value: 'Grace' }] },
      {
        maxExamples: Number(values['max-examples']),
        extraArgs: positionals,
      },
    );
    process.exit(code);
  })().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  });
}

// `npm start`: the whole service on this machine. Starts PostgreSQL + FerretDB and the Temporal dev
// server (unless MONGODB_URI / TEMPORAL_ADDRESS point elsewhere), the provider emulator, the worker
// and the API; seeds a demo team with the admin command line; prints the URLs and a working curl.
// Ctrl-C stops everything in order. Data lives under .data/ and survives restarts.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { withNodeProcessEnv } from '../local/node-process-env';
import { createProcessRecord, processRecordPath, stopLeftoverProcesses } from '../local/leftover-processes';
import { assertPortFree, startMongoStack, startTemporal, stopChild, type RunningServer } from '../local/servers';
import { dataDir, removeStackSettings, writeStackSettings } from '../local/stack-settings';

const ROOT = path.resolve(__dirname, '..', '..');
const DATA = dataDir();

const PORTS = {
  api: Number(process.env.PORT ?? 3000),
  emulator: Number(process.env.EMULATOR_PORT ?? 4010),
  postgres: Number(process.env.LOCAL_POSTGRES_PORT ?? 54329),
  mongo: Number(process.env.LOCAL_MONGO_PORT ?? 27017),
  temporal: Number(process.env.LOCAL_TEMPORAL_PORT ?? 7233),
  temporalUi: Number(process.env.LOCAL_TEMPORAL_UI_PORT ?? 8233),
  workerMetrics: Number(process.env.WORKER_METRICS_PORT ?? 9464),
};

interface LocalSecrets {
  encryptionKey: string;
  vonageSignatureSecret: string;
  telnyxPrivateKeyPem: string;
}

interface Demo {
  teamId: string;
  key: string;
  callTemplateId: string;
  phoneNumberId: string;
}

const say = (line: string) => process.stdout.write(`${line}\n`);

async function localSecrets(): Promise<LocalSecrets> {
  const file = path.join(DATA, 'local-secrets.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as LocalSecrets;
  const telnyx = generateKeyPairSync('ed25519');
  const secrets: LocalSecrets = {
    encryptionKey: randomBytes(32).toString('base64'),
    vonageSignatureSecret: randomBytes(24).toString('base64url'),
    telnyxPrivateKeyPem: telnyx.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  await writeFile(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

function startNode(name: string, script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script)], {
    cwd: ROOT,
    env: withNodeProcessEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const prefix = (chunk: Buffer) =>
    chunk
      .toString()
      .split('\n')
      .filter((line) => line.trim())
      .forEach((line) => process.stdout.write(`[${name}] ${line}\n`));
  child.stdout?.on('data', prefix);
  child.stderr?.on('data', prefix);
  return child;
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
/** "exited (code 1)", or "was killed (SIGKILL)" for one a signal ended. */
const howItEnded = (child: ChildProcess) =>
  child.signalCode !== null ? `was killed (${child.signalCode})` : `exited (code ${child.exitCode})`;

/** Waits until `url` answers 200: the API's /readyz, then the worker's (polling its task queues). */
async function waitForReady(what: string, url: string, children: ChildProcess[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const dead = children.find(exited);
    if (dead)
      throw new Error(`a service process ${howItEnded(dead)} before the ${what} was ready; see its output above`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
      last = await response.text();
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the ${what} was not ready within ${timeoutMs / 1000}s: ${last}`);
}

async function admin(env: NodeJS.ProcessEnv, args: string[]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'src/main/admin.ts'), ...args, '--json'],
      { cwd: ROOT, env },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('close', (code) => {
      const result = JSON.parse(out || '{}') as Record<string, string>;
      if (code === 0) resolve(result);
      else reject(new Error(`admin ${args.slice(0, 2).join(' ')} failed: ${result.error ?? out}`));
    });
  });
}

async function seedDemo(env: NodeJS.ProcessEnv, emulatorUrl: string): Promise<Demo> {
  const file = path.join(DATA, 'demo.json');
  if (existsSync(file)) {
    const demo = JSON.parse(await readFile(file, 'utf8')) as Demo;
    const teams = (await admin(env, ['team', 'list'])) as unknown as { teams: Array<{ teamId: string }> };
    // Demo files from before phone numbers were seeded are made again.
    if (demo.phoneNumberId && teams.teams.some((t) => t.teamId === demo.teamId)) return demo;
  }
  say(`Seeding a demo team with the admin command line (emulated providers at ${emulatorUrl})...`);
  // team create gives the team emulator credentials and a from-number for each provider.
  const { teamId } = await admin(env, ['team', 'create', '--name', 'Demo team', '--provider', 'twilio']);
  const { callTemplateId } = await admin(env, [
    'template',
    'create',
    '--team',
    teamId!,
    '--name',
    'Dental check-up reminder',
    '--prompt',
    'Hello {{firstName}}, this is Ada calling from Acme Dental. You are due for a check-up; could we book a time that suits you?',
    '--required-variables',
    'firstName',
    '--tag',
    'interested=sounds good',
    '--tag',
    'interested=works for me',
    '--tag',
    'callback=call me back',
    '--tag',
    'notInterested=not interested',
    '--result-column',
    'interested',
    '--result-column',
    'meetingTime',
    '--result-column',
    'summary',
    '--time-zone',
    'America/New_York',
  ]);
  const { phoneNumberId } = await admin(env, [
    'phone-number',
    'create',
    '--team',
    teamId!,
    '--number',
    '+14155550100',
    '--provider',
    'twilio',
  ]);
  const { key } = await admin(env, ['key', 'create', '--team', teamId!, '--name', 'demo']);
  const demo: Demo = { teamId: teamId!, key: key!, callTemplateId: callTemplateId!, phoneNumberId: phoneNumberId! };
  // Local development only (.data/ is git-ignored): keeps the printed curl working across restarts.
  await writeFile(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
  return demo;
}

async function main(): Promise<void> {
  await mkdir(DATA, { recursive: true });
  const servers: RunningServer[] = [];
  const children: ChildProcess[] = [];
  let stopping = false;
  let stackFileWritten = false;
  // Each server and service process as it starts: should this process be killed, the next npm start
  // stops what it left running.
  const recorded = createProcessRecord(processRecordPath(DATA));
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('\nStopping: API, worker, emulator, then the servers...');
    // The worker gets time to finish the activities it is running (its shutdown grace is 20 s).
    for (const child of [...children].reverse()) await stopChild(child, 30_000);
    // Newest first, and one spawned while the stop runs (its start carried on meanwhile) too.
    const stopped = new Set<RunningServer>();
    const nextToStop = () => [...servers].reverse().find((server) => !stopped.has(server));
    for (let server = nextToStop(); server; server = nextToStop()) {
      stopped.add(server);
      const { name } = server;
      await server.stop().catch((err: unknown) => say(`${name}: ${String(err)}`));
    }
    if (stackFileWritten) removeStackSettings({ OCO_DATA_DIR: DATA });
    recorded.remove();
    // Inside the project named from it (the default `.data/`), elsewhere in full (OCO_DATA_DIR).
    const kept = path.relative(ROOT, DATA).startsWith('..') ? DATA : path.relative(ROOT, DATA) || '.';
    say(`Stopped. Data is kept in ${kept}/ for the next npm start.`);
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  // The terminal closed: stop in order all the same. Nothing reads this process's output any more.
  process.on('SIGHUP', () => {
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    void stopAll(0);
  });
  process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));
  // Each server as soon as it is spawned, not once it is ready: a stop while it starts (Ctrl-C while
  // PostgreSQL, FerretDB or Temporal comes up) stops it too, and should this process be killed
  // meanwhile the next npm start finds it. (PostgreSQL's initdb, run before, is no server: a terminal's
  // Ctrl-C reaches it in this process group, and it removes what it began.)
  const onSpawned = (server: RunningServer) => {
    servers.push(server);
    recorded.add(server.name, server.pid, server.stopSignal);
  };

  try {
    await stopLeftoverProcesses(processRecordPath(DATA), say);
    await assertPortFree(PORTS.api, 'API, set PORT');
    await assertPortFree(PORTS.emulator, 'provider emulator, set EMULATOR_PORT');
    await assertPortFree(PORTS.workerMetrics, "worker's metrics, set WORKER_METRICS_PORT");
    const secrets = await localSecrets();
    const log = (line: string) => {
      if (/level=(ERROR|error)|FATAL|panic/.test(line)) process.stdout.write(`${line}\n`);
    };

    let mongoUri = process.env.MONGODB_URI;
    if (!mongoUri) {
      await assertPortFree(PORTS.postgres, 'PostgreSQL, set LOCAL_POSTGRES_PORT');
      await assertPortFree(PORTS.mongo, 'FerretDB, set LOCAL_MONGO_PORT');
      say('Starting PostgreSQL and FerretDB...');
      const stack = await startMongoStack({
        dataDir: path.join(DATA, 'mongo'),
        postgresPort: PORTS.postgres,
        mongoPort: PORTS.mongo,
        log: (l) => (l.startsWith('Building') || l.startsWith('  ...') || l.startsWith('Granted') ? say(l) : log(l)),
        onSpawned,
      });
      mongoUri = stack.uri;
    }
    if (stopping) return; // stopped while PostgreSQL and FerretDB came up (see below)
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    let temporalUi = process.env.TEMPORAL_UI_URL ?? null;
    if (!temporalAddress) {
      await assertPortFree(PORTS.temporal, 'Temporal, set LOCAL_TEMPORAL_PORT');
      await assertPortFree(PORTS.temporalUi, 'Temporal Web UI, set LOCAL_TEMPORAL_UI_PORT');
      say('Starting the Temporal dev server with its Web UI...');
      const temporal = await startTemporal({
        dataDir: path.join(DATA, 'temporal'),
        port: PORTS.temporal,
        uiPort: PORTS.temporalUi,
        log: (l) => (l.startsWith('Building') || l.startsWith('  ...') ? say(l) : log(l)),
        onSpawned,
      });
      temporalAddress = temporal.address;
      temporalUi = temporal.uiUrl;
    }

    const emulatorUrl = `http://127.0.0.1:${PORTS.emulator}`;
    const apiUrl = `http://localhost:${PORTS.api}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MONGODB_URI: mongoUri,
      TEMPORAL_ADDRESS: temporalAddress,
      ENCRYPTION_KEY: process.env.ENCRYPTION_KEY ?? secrets.encryptionKey,
      PORT: String(PORTS.api),
      PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? apiUrl,
      TWILIO_API_BASE_URL: emulatorUrl,
      VONAGE_API_BASE_URL: emulatorUrl,
      TELNYX_API_BASE_URL: emulatorUrl,
      ALLOW_PRIVATE_WEBHOOK_URLS: process.env.ALLOW_PRIVATE_WEBHOOK_URLS ?? 'true',
      EMULATOR_PORT: String(PORTS.emulator),
      WORKER_METRICS_PORT: String(PORTS.workerMetrics),
      EMULATOR_VONAGE_SIGNATURE_SECRET: secrets.vonageSignatureSecret,
      EMULATOR_TELNYX_PRIVATE_KEY: secrets.telnyxPrivateKeyPem,
    };
    // Stopped while the servers came up (their start carried on meanwhile): the stop ends this process,
    // and nothing more is started.
    if (stopping) return;
    for (const name of ['emulator', 'worker', 'api']) {
      const child = startNode(name, `src/main/${name}.ts`, env);
      children.push(child);
      recorded.add(name, child.pid);
    }
    await waitForReady('API', `${apiUrl}/readyz`, children);
    // "Ready." means a call placed now is picked up at once: the worker polls (it may still be bundling
    // its workflow code when the API answers). Without its port (WORKER_METRICS_PORT=0) nothing to ask.
    if (PORTS.workerMetrics !== 0)
      await waitForReady('worker', `http://localhost:${PORTS.workerMetrics}/readyz`, children);
    // From here on `npm run -s admin -- ...` in another terminal finds this stack by itself.
    writeStackSettings({ ...env, OCO_DATA_DIR: DATA });
    stackFileWritten = true;
    const demo = await seedDemo(env, emulatorUrl);
    // One that exited while the demo was set up would otherwise go unseen (the watch below begins
    // with "Ready.", nothing awaited in between).
    const dead = children.find(exited);
    if (dead)
      throw new Error(`a service process ${howItEnded(dead)} while the demo team was set up; see its output above`);

    const body = JSON.stringify({
      teamId: demo.teamId,
      callTemplateId: demo.callTemplateId,
      // The emulator's scenario for this number agrees to a meeting on Tuesday at 3 pm.
      toPhoneNumber: '+14155550007',
      nameOfHuman: 'Grace',
      promptVariableValues: [{ key: 'firstName', value: 'Grace' }],
      record: true,
    });
    say('');
    say('Ready.');
    say(`  API:               ${apiUrl}   (reference: ${apiUrl}/docs, OpenAPI: ${apiUrl}/v1/openapi.json)`);
    if (temporalUi) say(`  Temporal Web UI:  ${temporalUi}/namespaces/default/workflows`);
    say(`  Provider emulator: ${emulatorUrl}`);
    say(`  Metrics:           ${apiUrl}/metrics (API), http://127.0.0.1:${PORTS.workerMetrics}/metrics (worker)`);
    say(`  Demo team ${demo.teamId}, API key: ${demo.key}`);
    say('');
    say('Place a call (then follow it in the Temporal UI, or GET /v1/phoneCalls/<_id>):');
    say(
      `  curl -sS -X POST ${apiUrl}/v1/phoneCalls -H 'content-type: application/json' -H 'service-api-key: ${demo.key}' -d '${body}'`,
    );
    say('');
    say('Ctrl-C stops everything.');
    for (const child of children) {
      child.once('exit', (code) => {
        if (!stopping) {
          say(`A service process exited unexpectedly (code ${code}); stopping.`);
          void stopAll(1);
        }
      });
    }
    // A server gone (the kernel's out-of-memory killer, say) leaves a stack that cannot work: stop it
    // all and exit 1, so that a supervisor restarts it (before, npm start stood at Ready).
    for (const server of servers) {
      server.onExit?.((how) => {
        if (!stopping) {
          say(`The ${server.name} server exited unexpectedly (${how}); stopping.`);
          void stopAll(1);
        }
      });
    }
  } catch (err) {
    // Stopped meanwhile (Ctrl-C): a start cut short by the stop is no failure to report.
    if (stopping) return;
    say(`\nnpm start failed: ${err instanceof Error ? err.message : String(err)}`);
    // Refused before starting anything (another npm start runs, a port is taken): there is nothing to
    // stop, and stop lines would read as if the stack already running had been stopped.
    if (!servers.length && !children.length) process.exit(1);
    await stopAll(1);
  }
}

void main();

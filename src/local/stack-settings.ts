// The settings of the stack `npm start` runs, written to a git-ignored file under the data folder so
// that the operator command line (and `npm run api` / `npm run worker`) started in another terminal
// reach that same stack with no variables set. Explicit environment variables always win.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../config';

/** The checkout: above src/local/, or above dist/src/local/ once compiled (`npm run build`). */
const ROOT = path.resolve(__dirname, __filename.endsWith('.js') ? '../../..' : '../..');

/** The variables a process needs to use the local stack; nothing else is written. */
export const STACK_VARIABLES = [
  'MONGODB_URI',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_TASK_QUEUE',
  'ENCRYPTION_KEY',
  'ENCRYPTION_KEYS_PREVIOUS',
  'PUBLIC_BASE_URL',
  'TWILIO_API_BASE_URL',
  'VONAGE_API_BASE_URL',
  'TELNYX_API_BASE_URL',
  'ALLOW_PRIVATE_WEBHOOK_URLS',
] as const;

interface StackFile {
  /** The `npm start` process: a file whose writer is gone describes no running stack. */
  pid: number;
  writtenAt: string;
  env: Partial<Record<(typeof STACK_VARIABLES)[number], string>>;
}

export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.OCO_DATA_DIR ?? path.join(ROOT, '.data'));
}

export function stackFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dataDir(env), 'local-stack.json');
}

export function writeStackSettings(env: NodeJS.ProcessEnv): string {
  const file = stackFilePath(env);
  const picked = Object.fromEntries(STACK_VARIABLES.flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
  const content: StackFile = { pid: process.pid, writtenAt: new Date().toISOString(), env: picked };
  // It holds the encryption key: readable by its owner only.
  writeFileSync(file, JSON.stringify(content, null, 2), { mode: 0o600 });
  return file;
}

export function removeStackSettings(env: NodeJS.ProcessEnv = process.env): void {
  rmSync(stackFilePath(env), { force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running local stack's settings, or null (no file, or its `npm start` has stopped). */
export function readStackSettings(
  env: NodeJS.ProcessEnv = process.env,
): { file: string; env: StackFile['env'] } | null {
  const file = stackFilePath(env);
  if (!existsSync(file)) return null;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as StackFile;
    return isRunning(parsed.pid) ? { file, env: parsed.env } : null;
  } catch {
    return null;
  }
}

/**
 * loadConfig() for processes an operator starts by hand: with no MONGODB_URI set, the running local
 * stack's settings fill in what the environment leaves out (and `note` says so).
 */
export function loadConfigWithLocalStack(
  env: NodeJS.ProcessEnv = process.env,
  note: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Config {
  if (env.MONGODB_URI) return loadConfig(env);
  const stack = readStackSettings(env);
  if (stack) {
    note(
      `Using the settings of the local stack that npm start runs (${path.relative(process.cwd(), stack.file) || stack.file}); set MONGODB_URI to use other servers.`,
    );
    return loadConfig({ ...stack.env, ...env });
  }
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(
      `${err.message}\nEither start the local stack with \`npm start\` in another terminal (its settings are then found ` +
        'automatically), or set MONGODB_URI and ENCRYPTION_KEY (and the other variables you need) for your own servers.',
    );
  }
}

// espeak-ng as a subprocess: found on PATH once, fed the text on stdin (so a text that starts
// with "-" is never read as an option), WAV read from stdout.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const BINARY = 'espeak-ng';
const TIMEOUT_MS = 20_000;

let cachedPath: string | null | undefined;

/** Absolute path of espeak-ng on PATH, or null; looked up once per process. */
export function findEspeak(): string | null {
  if (cachedPath !== undefined) return cachedPath;
  cachedPath = null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir.length === 0) continue;
    const candidate = join(dir, BINARY);
    try {
      accessSync(candidate, constants.X_OK);
      cachedPath = candidate;
      break;
    } catch {
      // not in this directory
    }
  }
  return cachedPath;
}

export interface EspeakOptions {
  /** espeak-ng voice name, e.g. `en-us`, `en-gb+f3`. */
  voice: string;
  wordsPerMinute: number;
  /** 0-99, espeak's default is 50. */
  pitch: number;
}

export function runEspeak(binary: string, text: string, options: EspeakOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      binary,
      ['--stdout', '-v', options.voice, '-s', String(options.wordsPerMinute), '-p', String(options.pitch)],
      { stdio: ['pipe', 'pipe', 'pipe'], timeout: TIMEOUT_MS },
    );
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(`espeak-ng exited with ${code ?? signal}: ${Buffer.concat(err).toString('utf8').trim()}`));
    });
    child.stdin.on('error', reject);
    child.stdin.end(text, 'utf8');
  });
}

// A load generator's run as a child process of the harness: the last line it prints is its result,
// as JSON. Both load generators (autocannon, the raw Temporal load) are read back this way.
import { spawn } from 'node:child_process';

export function runChildForJson<T>(args: string[], what: string, cwd?: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as T);
      } catch {
        reject(new Error(`${what} exited with ${code} without a result:\n${stdout}\n${stderr}`));
      }
    });
  });
}

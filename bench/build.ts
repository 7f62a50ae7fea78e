// `npm run build` for the bench: the service compiled to dist/ as the deployment image has it. Used by
// `npm run bench` (unless --tsx) and `npm run bench:startup`.
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** Runs the build; answers its seconds and its last line of output, or fails with its output. */
export function runBuild(): Promise<{ seconds: number; lastLine: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve({ seconds: (performance.now() - started) / 1000, lastLine: output.trim().split('\n').pop() ?? '' })
        : reject(new Error(`npm run build exited with ${code}:\n${output.slice(-4000)}`)),
    );
  });
}

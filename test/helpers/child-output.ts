// A child process's output (stdout and stderr as they come), for tests that wait for a line a program
// prints before they act on it.
import type { ChildProcess } from 'node:child_process';

export function followOutput(child: ChildProcess) {
  let output = '';
  const waiting: Array<{ line: string; resolve: () => void }> = [];
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const read = (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of waiting.filter((w) => output.includes(w.line))) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  child.stdout?.on('data', read);
  child.stderr?.on('data', read);
  return {
    /** Its exit code, once it has exited and its output is read. */
    exited,
    output: () => output,
    /** Once `line` has appeared in the output, or the child has exited without it: the output so far. */
    async until(line: string): Promise<string> {
      if (!output.includes(line)) {
        await Promise.race([new Promise<void>((resolve) => waiting.push({ line, resolve })), exited]);
      }
      return output;
    },
  };
}

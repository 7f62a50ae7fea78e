// Environment every Node process of the service starts with, here as in the image (the Dockerfile
// sets the same; test/unit/local/node-process-env.test.ts keeps the two alike).
//
// MALLOC_ARENA_MAX: glibc gives each thread that allocates its own malloc arena and keeps what an
// arena once held. The worker runs many threads (the Temporal core's runtime, the workflow threads,
// libuv's pool): after 2,000 creates its RSS was 487 MiB, of which its main V8 heap 103 MiB; with two
// arenas, 426 MiB at the same throughput (README, "Where the budgets stand").
// Read by glibc when the process starts, so it must be in the environment it is started with.
export const NODE_PROCESS_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
};

/** `env` with the service's process settings added where `env` does not set them itself. */
export function withNodeProcessEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...NODE_PROCESS_ENV, ...env };
}

// Liveness for an activity that may legitimately run long: it heartbeats while it works, so the
// workflow can give it a short heartbeat timeout. An attempt that hangs, or whose task never reached a
// worker, is then retried after that timeout instead of after the whole start-to-close.
import { Context } from '@temporalio/activity';

/** How often a long activity says it is alive; its heartbeat timeout must be a few times this. */
export const HEARTBEAT_EVERY_MS = 5_000;

/**
 * The worker's options for heartbeats: each one reaches the server within HEARTBEAT_EVERY_MS. The
 * SDK otherwise holds an activity's heartbeats back for 0.8x its heartbeat timeout, so that with
 * the capture's 20 s the server heard one every 16 s and would give up on a live try whose heartbeat
 * came 4 s late (a busy server or worker); now one late by up to 15 s is still in time.
 */
export const HEARTBEAT_WORKER_OPTIONS = { maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS } as const;

/**
 * Runs `work`, heartbeating every `everyMs` until it ends. Work that ends sooner sends no heartbeat
 * at all (each one is a request to the server).
 */
export async function withHeartbeats<T>(work: () => Promise<T>, everyMs = HEARTBEAT_EVERY_MS): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

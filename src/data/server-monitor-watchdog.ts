// Restarts the MongoDB driver's monitor of a server when its check has hung past every limit the
// driver sets on it. With the driver at 7.8, a check can hang for good when the server closes every
// connection at once (a restart): an operation's closed connection marks the server unknown and asks
// for a check at once, and the check may start on the monitor's own connection in the moment its
// socket is destroyed but has not yet said it closed. Its request is then written to the destroyed
// socket, which neither sends nor fails, and the check waits for ever. Until it ends the monitor
// starts no other, the server stays unknown, and every operation of the process fails server
// selection: seen as a process that never found its database again after a restart (the chaos
// scenario database-down; test/integration/mongo-monitor-watchdog.test.ts reproduces it).
import type mongoose from 'mongoose';

type MongoClient = mongoose.mongo.MongoClient;

/** A check past its limits is noticed within this long. */
const LOOK_EVERY_MS = 1_000;
/** Beyond the driver's own limits, before a check counts as hung. */
const GRACE_MS = 2_000;
/** Clock skew allowed between a check's start as the driver times it and as this records it. */
const SKEW_MS = 500;

export interface MonitorWatchdogOptions {
  /**
   * A check that has not ended this long after it started has hung. By default, the longest the
   * driver lets a check run: a connect and a handshake of `connectTimeoutMS` each, and for a
   * streaming check the server's wait of `heartbeatFrequencyMS` on top.
   */
  hungAfterMs?: (check: { awaited: boolean }) => number;
  /** Told each restart (for the log). */
  onRestart?: (event: { address: string; hungForMs: number }) => void;
  /** Told when the driver no longer has the parts this restarts (a driver upgrade changed them). */
  onCannotRestart?: (event: { address: string; hungForMs: number }) => void;
}

interface RestartableMonitor {
  close(): void;
  connect(): void;
}

/** The driver's monitor of one server; not public API, so looked for with care. */
function monitorOf(client: MongoClient, address: string): RestartableMonitor | null {
  const servers = (client as unknown as { topology?: { s?: { servers?: Map<string, { monitor?: unknown }> } } })
    .topology?.s?.servers;
  const monitor = servers?.get(address)?.monitor as Partial<RestartableMonitor> | null | undefined;
  return typeof monitor?.close === 'function' && typeof monitor.connect === 'function'
    ? (monitor as RestartableMonitor)
    : null;
}

export function watchServerMonitors(client: MongoClient, options: MonitorWatchdogOptions = {}): { stop(): void } {
  const hungAfterMs =
    options.hungAfterMs ??
    (({ awaited }) =>
      2 * client.options.connectTimeoutMS + (awaited ? client.options.heartbeatFrequencyMS : 0) + GRACE_MS);
  /** Checks under way, by server address. */
  const checks = new Map<string, { startedAt: number; awaited: boolean }>();
  const reported = new Set<string>();

  const started = (event: mongoose.mongo.ServerHeartbeatStartedEvent) =>
    checks.set(event.connectionId, { startedAt: Date.now(), awaited: event.awaited });
  const ended = (event: { connectionId: string; duration: number }) => {
    const check = checks.get(event.connectionId);
    // An end that took longer than the check on record has run is an earlier check's: the one a
    // restart gave up on, ending late. The check on record runs on and is still watched.
    if (check && event.duration > Date.now() - check.startedAt + SKEW_MS) return;
    checks.delete(event.connectionId);
  };
  const closed = () => checks.clear();
  client.on('serverHeartbeatStarted', started);
  client.on('serverHeartbeatSucceeded', ended);
  client.on('serverHeartbeatFailed', ended);
  client.on('topologyClosed', closed);

  const timer = setInterval(() => {
    const now = Date.now();
    for (const [address, check] of checks) {
      const hungForMs = now - check.startedAt;
      if (hungForMs <= hungAfterMs(check)) continue;
      const monitor = monitorOf(client, address);
      if (!monitor) {
        if (!reported.has(address)) options.onCannotRestart?.({ address, hungForMs });
        reported.add(address);
        continue;
      }
      checks.delete(address);
      // Closing drops the hung check's connection and timers; connecting starts a check at once.
      monitor.close();
      monitor.connect();
      options.onRestart?.({ address, hungForMs });
    }
  }, LOOK_EVERY_MS);
  timer.unref();

  return {
    stop() {
      clearInterval(timer);
      client.off('serverHeartbeatStarted', started);
      client.off('serverHeartbeatSucceeded', ended);
      client.off('serverHeartbeatFailed', ended);
      client.off('topologyClosed', closed);
    },
  };
}

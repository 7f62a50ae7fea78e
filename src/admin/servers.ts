// The servers the operator commands use besides the API: MongoDB (the setup commands) and Temporal
// (`batch`). One that cannot be reached is named in the error, as api-target.ts names the API, with
// exit code 1 (README, "Operator command line"); a MongoDB URI's credentials are never shown.
//
// Each driver is loaded by the function that uses it, not at import (by `require`, as program.ts says
// why): the runner imports this module for every command, and mongoose and the Temporal client are
// most of a start's time.

/** MongoDB or Temporal is down or unreachable: the same command may work later, unchanged. */
export class ServerUnavailableError extends Error {
  override readonly name = 'ServerUnavailableError';
}

const HOST = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The servers a MongoDB URI names (`host:port`, comma-separated), without its credentials: the
 * driver's own list of servers where its error has one, else read from the URI. What follows the last
 * `@` holds no credentials (they come before it); `the MONGODB_URI's server` where no host can be read.
 */
export function mongoServers(uri: string, err?: unknown): string {
  const servers = (err as { reason?: { servers?: unknown } } | undefined)?.reason?.servers;
  if (servers instanceof Map && servers.size > 0) return [...servers.keys()].map(String).join(',');
  const scheme = /^mongodb(?:\+srv)?:\/\//i.exec(uri);
  if (!scheme) return "the MONGODB_URI's server";
  const rest = uri.slice(scheme[0].length);
  const hosts = rest.slice(rest.lastIndexOf('@') + 1).split(/[/?#]/)[0]!;
  return hosts && hosts.split(',').every((host) => HOST.test(host)) ? hosts : "the MONGODB_URI's server";
}

/** The URI's user name and password, each replaced by `***` wherever a message repeats them. */
function withoutCredentials(message: string, uri: string): string {
  const scheme = /^mongodb(?:\+srv)?:\/\//i.exec(uri);
  const at = uri.lastIndexOf('@');
  if (!scheme || at < scheme[0].length) return message;
  const userinfo = uri.slice(scheme[0].length, at);
  const secrets = new Set([userinfo, ...userinfo.split(':')]);
  for (const part of [...secrets]) {
    try {
      secrets.add(decodeURIComponent(part));
    } catch {
      // Not percent-encoded as it should be: its raw form is replaced.
    }
  }
  let out = message;
  for (const secret of [...secrets].filter(Boolean).sort((a, b) => b.length - a.length))
    out = out.split(secret).join('***');
  return out;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Connects the process to MongoDB (a pool of `poolSize`); unreachable: a ServerUnavailableError naming it. */
export async function connectDatabase(uri: string, poolSize = 2): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on use (see the top)
  const { connectMongo } = require('../data/connection') as typeof import('../data/connection');
  try {
    await connectMongo(uri, poolSize);
  } catch (err) {
    throw new ServerUnavailableError(
      `MongoDB at ${mongoServers(uri, err)} cannot be reached: ${withoutCredentials(messageOf(err), uri)}`,
    );
  }
}

/** Closes what connectDatabase opened. */
export async function disconnectDatabase(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on use (see the top)
  await (require('mongoose') as typeof import('mongoose')).disconnect();
}

/** A Temporal client; unreachable: a ServerUnavailableError naming the address. */
export async function connectTemporal(options: { address: string; namespace: string }) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on use (see the top)
  const { connectTemporalClient } = require('../temporal/connection') as typeof import('../temporal/connection');
  try {
    return await connectTemporalClient(options);
  } catch (err) {
    throw new ServerUnavailableError(`Temporal at ${options.address} cannot be reached: ${messageOf(err)}`);
  }
}

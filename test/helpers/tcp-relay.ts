// A TCP relay in front of a real server, for tests of what a client does when the network or the
// server misbehaves: answers dropped or held, every connection closed at once.
import net from 'node:net';
import mongoose from 'mongoose';
import { afterAll, beforeAll, inject } from 'vitest';
import { startServiceStack, type TestStack } from './service-stack';

/**
 * Relays TCP to `target`; while `silent`, what the server sends is dropped, as if never answered;
 * while held, it is kept, and delivered in order at release (a slow store).
 */
async function startRelay(target: { host: string; port: number }) {
  let silent = false;
  let held: Array<() => void> | null = null;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (silent) return;
      if (held) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    setSilent(value: boolean) {
      silent = value;
    },
    /** Keeps the server's answers from now on, until `release`. */
    hold() {
      held ??= [];
    },
    /** Delivers what was kept, in order, and relays as before. */
    release() {
      const kept = held ?? [];
      held = null;
      for (const deliver of kept) deliver();
    },
    /** Closes every relayed connection, as a server going down does; new ones are still taken. */
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      this.dropConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * For a test file: a relay in front of the suite's MongoDB server, started before its tests and
 * closed after them; `uri` goes through it.
 */
export function useMongoRelay() {
  const relayed = {} as { relay: Awaited<ReturnType<typeof startRelay>>; uri: string };
  beforeAll(async () => {
    const uri = new URL(inject('mongoUri'));
    relayed.relay = await startRelay({ host: uri.hostname, port: Number(uri.port) });
    uri.host = `127.0.0.1:${relayed.relay.port}`;
    relayed.uri = uri.toString();
  });
  afterAll(async () => {
    await relayed.relay?.close();
  });
  return relayed;
}

/**
 * For a test file: a service stack (test/helpers/service-stack.ts) whose store sits behind a relay
 * that can hold its answers, started before its tests and stopped after them.
 */
export function useRelayedServiceStack() {
  const relayed = useMongoRelay() as ReturnType<typeof useMongoRelay> & { stack: TestStack };
  beforeAll(async () => {
    relayed.stack = await startServiceStack({
      mongoUri: relayed.uri,
      temporalAddress: inject('temporalAddress'),
      workflowBundlePath: inject('workflowBundlePath'),
    });
  });
  afterAll(async () => {
    mongoose.set('debug', false);
    await relayed.stack?.stop();
  });
  return relayed;
}

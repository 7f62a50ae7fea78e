// Free ports for the local servers and test stacks: distinct, and drawn below the kernel's ephemeral
// range, where no outgoing connection can take one between the draw and the listen.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, freePorts } from '../../../src/local/servers';

const listenOn = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePorts', () => {
  it('answers distinct ports below 32768 that a server can then listen on', async () => {
    const ports = await freePorts(7);
    expect(new Set(ports).size).toBe(7);
    for (const port of [...ports, await freePort()]) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(32_768);
    }
    const servers = await Promise.all(ports.map(listenOn));
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('passes over a port that is taken', async () => {
    // Hold the ports it answered and ask again: none of the held ones comes back.
    const first = await freePorts(20);
    const held = await Promise.all(first.map(listenOn));
    try {
      const again = await freePorts(20);
      expect(again.filter((p) => first.includes(p))).toEqual([]);
    } finally {
      await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
    }
  });
});

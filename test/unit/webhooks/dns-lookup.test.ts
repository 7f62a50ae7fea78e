// The resolver the SSRF guard uses for public hostnames, against a DNS server on loopback: it answers
// from DNS records, and a name server that never answers costs a time limit, never libuv's threads.
import { pbkdf2 } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { dnsLookup } from '../../../src/webhooks/ssrf-guard';

const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close();
});

/**
 * A DNS server on a loopback UDP port: `answer` gives a queried name's A record (null: none, and no
 * AAAA record either), or `silent` for a question it never answers.
 */
async function dnsServer(answer: (name: string, type: 'A' | 'AAAA') => string | null | 'silent'): Promise<string> {
  const socket = createSocket('udp4');
  sockets.push(socket);
  socket.on('message', (query, peer) => {
    // The question: labels from byte 12 to a zero byte, then QTYPE and QCLASS.
    let at = 12;
    const labels: string[] = [];
    while (query[at]! > 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('ascii'));
      at += query[at]! + 1;
    }
    const questionEnd = at + 5;
    const type = query.readUInt16BE(at + 1) === 1 ? 'A' : 'AAAA';
    const given = answer(labels.join('.'), type);
    if (given === 'silent') return;
    const address = type === 'A' ? given : null;
    const header = Buffer.from(query.subarray(0, 12));
    header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address ? 1 : 0, 6);
    header.writeUInt32BE(0, 8);
    const record = Buffer.alloc(16);
    if (address) {
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(1, 2); // A
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(4, 10);
      address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    }
    socket.send(
      Buffer.concat([header, query.subarray(12, questionEnd), address ? record : Buffer.alloc(0)]),
      peer.port,
      peer.address,
    );
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(socket.address() as AddressInfo).port}`;
}

/** How long a task on libuv's thread pool (a key derivation) waits and runs, in ms. */
async function threadPoolTaskMs(): Promise<number> {
  const started = performance.now();
  await new Promise((resolve, reject) =>
    pbkdf2('secret', 'salt', 1, 32, 'sha256', (err, key) => (err ? reject(err) : resolve(key))),
  );
  return performance.now() - started;
}

describe('dnsLookup', () => {
  it("answers a name's A records from its name server", async () => {
    const server = await dnsServer((name) => (name === 'hooks.example.com' ? '93.184.216.34' : null));
    const lookup = dnsLookup({ servers: [server], timeoutMs: 500, tries: 1 });
    expect(await lookup('hooks.example.com')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    await expect(lookup('nothing.example.com')).rejects.toMatchObject({ code: expect.any(String) });
  });

  it('gives up on a name server that never answers within its time limit, leaving the thread pool free', async () => {
    const server = await dnsServer(() => 'silent');
    const lookup = dnsLookup({ servers: [server], timeoutMs: 300, tries: 1 });
    const started = performance.now();
    // More lookups at once than libuv has threads (4): with getaddrinfo these would hold them all.
    const lookups = Array.from({ length: 8 }, (_, i) =>
      lookup(`a${i}.slow.example.com`).then(
        () => 'resolved',
        (err: NodeJS.ErrnoException) => err.code,
      ),
    );
    expect(await threadPoolTaskMs()).toBeLessThan(1_000);
    expect(await Promise.all(lookups)).toEqual(Array(8).fill('ETIMEOUT'));
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('names a name server that did not answer over a name that has no address of one kind', async () => {
    // No A record, and no answer at all for AAAA: the timeout is what the refusal reports.
    const server = await dnsServer((_name, type) => (type === 'A' ? null : 'silent'));
    const lookup = dnsLookup({ servers: [server], timeoutMs: 300, tries: 1 });
    await expect(lookup('half.example.com')).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });
});

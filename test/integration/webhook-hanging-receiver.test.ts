// A webhook receiver that takes requests and never answers: its attempts run on a task queue of their
// own, with their own slots, so they hold back neither the calls nor more attempts than those slots,
// and no more of those slots than its team's cap, so other teams' webhooks go out meanwhile.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiClient, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
let receiver: http.Server;
const sockets = new Set<Socket>();
let hanging = 0;
let mostHanging = 0;

beforeAll(async () => {
  // Three activity slots for the calls, three for webhook attempts, of which a team may hold two:
  // before, the attempts took the calls' slots, up to 15 s each, and the calls waited behind them.
  stack = await startTestStack({
    env: {
      WORKER_MAX_CONCURRENT_ACTIVITIES: '3',
      WEBHOOK_MAX_CONCURRENT_ATTEMPTS: '3',
      WEBHOOK_MAX_ATTEMPTS_PER_TEAM: '2',
      WEBHOOK_RETRY_DELAYS: '100ms',
    },
  });
  api = apiClient(stack.baseUrl, stack.team.key);
  receiver = http.createServer((req, res) => {
    hanging += 1;
    mostHanging = Math.max(mostHanging, hanging);
    res.on('close', () => {
      hanging -= 1;
    });
  });
  receiver.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  // Hung attempts end at once, not at their 15 s deadline, so the worker stops promptly.
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

it("a receiver that never answers holds back no call, and only as many attempts as its team's cap", async () => {
  const { port } = receiver.address() as AddressInfo;
  const hook = await api.post('/v1/webhooks', {
    teamId: stack.team.teamId,
    url: `http://127.0.0.1:${port}/hangs`,
    subscribedEvents: ['*'],
    method: 'POST',
  });
  expect(hook.status).toBe(200);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const created = await api.post('/v1/phoneCalls', seededCallBody(stack.team, `+1415555${8200 + i}`));
    expect(created.status).toBe(201);
    ids.push(created.body.data._id as string);
  }
  // Each call's stream sends its first event and hangs 15 s; the calls meanwhile run to their end.
  await eventually(
    async () => {
      const reads = await Promise.all(ids.map((id) => api.get(`/v1/phoneCalls/${id}`)));
      return reads.every((read) => read.body.data?.status === 'completed') ? true : undefined;
    },
    30_000,
    'every call to complete while its webhooks hang',
  );
  // The receiver was sent attempts, never more than its team's two at a time.
  expect(mostHanging).toBe(2);
});

it("another team's webhooks go out while the first team's attempts hang", async () => {
  // The first team's four streams still have attempts hanging (15 s each) or waiting for its cap.
  await eventually(async () => (hanging === 2 ? true : undefined), 20_000, "the first team's cap of attempts to hang");
  const other = await stack.seedTeam('Prompt receiver');
  const otherApi = apiClient(stack.baseUrl, other.key);
  const prompt = await startReceiver();
  try {
    const hook = await otherApi.post('/v1/webhooks', {
      teamId: other.teamId,
      url: `${prompt.url}/prompt`,
      subscribedEvents: ['phoneCall.queued'],
      method: 'POST',
    });
    expect(hook.status).toBe(200);
    const createdAt = Date.now();
    const created = await otherApi.post('/v1/phoneCalls', seededCallBody(other, '+14155558299'));
    expect(created.status).toBe(201);
    // Without the cap the first team's attempts took every slot, and this one waited up to 15 s.
    const arrived = await eventually(async () => prompt.received.find((r) => r.path === '/prompt'), 20_000);
    expect(arrived.at - createdAt).toBeLessThan(5_000);
    expect(mostHanging).toBe(2);
  } finally {
    await prompt.close();
  }
});

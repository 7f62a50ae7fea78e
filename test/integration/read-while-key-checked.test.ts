// A read-only request with a key this API process found valid before runs while the key is checked
// again (src/api/auth.ts): its store reads go out before the check's answer is back, and its answer
// waits for the check. The store sits behind a relay that holds its answers, so what was sent before
// any answer came back is seen without depending on timing.
import mongoose from 'mongoose';
import { expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/admin/commands';
import { apiClient } from '../helpers/http';
import { seededCallBody, type SeededTeam } from '../helpers/stack';
import { useRelayedServiceStack } from '../helpers/tcp-relay';

const relayed = useRelayedServiceStack();

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString();

/** A team with a call due tomorrow: its client (the team's own key) and the call's path. */
async function teamWithCall(
  name: string,
): Promise<{ team: SeededTeam; api: ReturnType<typeof apiClient>; path: string }> {
  const team = await relayed.stack.seedTeam(name);
  const api = apiClient(relayed.stack.baseUrl, team.key);
  const created = await api.post(
    '/v1/phoneCalls',
    seededCallBody(team, '+14155550140', { callDelayedUntil: tomorrow() }),
  );
  expect(created.status).toBe(201);
  return { team, api, path: `/v1/phoneCalls/${created.body.data._id}` };
}

/**
 * Sends `request` with the store's answers held until the commands in `awaited` have been sent (or a
 * second has passed: one that is not sent), then lets them through; answers the response and every
 * command sent while held.
 */
async function whileHeld<T>(awaited: string[], request: () => Promise<T>): Promise<{ answer: T; sent: string[] }> {
  const sent: string[] = [];
  let seen: () => void = () => undefined;
  const allSeen = new Promise<void>((resolve) => (seen = resolve));
  mongoose.set('debug', (collection: string, method: string) => {
    sent.push(`${collection}.${method}`);
    if (awaited.every((command) => sent.includes(command))) seen();
  });
  relayed.relay.hold();
  try {
    const answering = request();
    await Promise.race([allSeen, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    const heldSent = [...sent];
    relayed.relay.release();
    return { answer: await answering, sent: heldSent };
  } finally {
    relayed.relay.release();
    mongoose.set('debug', false);
  }
}

it('reads while the key is checked, and answers once the check passes', async () => {
  const { team, api, path } = await teamWithCall('Reads');

  // The key's first request in this process waits for its check before it reads.
  const key = await createKey({ team: team.teamId, scopes: 'calls:read' });
  const first = await whileHeld(['apikeys.findOne', 'phonecalls.findOne'], () => api.get(path, { key: key.key }));
  expect(first.answer.status).toBe(200);
  expect(first.sent).toContain('apikeys.findOne');
  expect(first.sent).not.toContain('phonecalls.findOne');

  // Its next read goes out beside the check, before any answer came back.
  const next = await whileHeld(['apikeys.findOne', 'phonecalls.findOne'], () => api.get(path, { key: key.key }));
  expect(next.answer.status).toBe(200);
  expect(next.answer.body).toEqual(first.answer.body);
  expect(next.sent).toEqual(expect.arrayContaining(['apikeys.findOne', 'teams.findOne', 'phonecalls.findOne']));

  // A change never runs ahead of its key's check: a create still waits for it.
  const writer = await createKey({ team: team.teamId, scopes: 'calls:read,calls:write' });
  expect((await api.get(path, { key: writer.key })).status).toBe(200);
  const write = await whileHeld(['apikeys.findOne', 'calltemplates.find'], () =>
    api.post('/v1/phoneCalls', seededCallBody(team, '+14155550141', { callDelayedUntil: tomorrow() }), {
      key: writer.key,
    }),
  );
  expect(write.answer.status).toBe(201);
  expect(write.sent).toContain('apikeys.findOne');
  expect(write.sent).not.toContain('calltemplates.find');

  // The same key id with another secret is not taken for the key: checked first, then 401.
  const forged = key.key.slice(0, -4) + (key.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  const wrong = await whileHeld(['apikeys.findOne', 'phonecalls.findOne'], () => api.get(path, { key: forged }));
  expect(wrong.answer.status).toBe(401);
  expect(wrong.sent).not.toContain('phonecalls.findOne');
});

it('answers 401, and nothing of the read, when the key was revoked before the request', async () => {
  const { team, api, path } = await teamWithCall('Revoked reads');
  const key = await createKey({ team: team.teamId, scopes: 'calls:read' });
  expect((await api.get(path, { key: key.key })).status).toBe(200);
  await revokeKey({ keyId: key.keyId });

  const revoked = await whileHeld(['apikeys.findOne', 'phonecalls.findOne'], () => api.get(path, { key: key.key }));
  // The read ran beside the check; the check's answer decides.
  expect(revoked.sent).toEqual(expect.arrayContaining(['apikeys.findOne', 'phonecalls.findOne']));
  expect(revoked.answer.status).toBe(401);
  expect(revoked.answer.body).toEqual({
    error: { statusCode: 401, message: ['the API key is invalid, revoked or expired'], error: 'Unauthorized' },
    payload: {},
  });
});

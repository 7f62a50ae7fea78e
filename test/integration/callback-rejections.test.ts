// Provider callbacks that cannot be verified, and the address their rejection is logged with:
// a call whose team's credentials were removed or cannot be opened is answered 401 (never a 500),
// and X-Forwarded-For is believed only with TRUST_PROXY, which leaves the callback URL a Twilio
// signature covers (built on PUBLIC_BASE_URL) as it was.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secret-box';
import { Team } from '../../src/data/models/team';
import { createLogger } from '../../src/logger';
import { createApiApp, listen } from '../../src/main/api';
import { callbackUrlFor } from '../../src/telephony/callback-url';
import { twilioSignature } from '../../src/telephony/twilio';
import { apiClient, eventually } from '../helpers/http';
import { seededCallBody, startTestStack, type SeededTeam, type TestStack } from '../helpers/stack';

interface LogLine {
  msg: string;
  level: number;
  callId?: string;
  ip?: string;
  reason?: string;
}

const lines: LogLine[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
    done();
  },
});

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ env: { LOG_LEVEL: 'info' }, logDestination: sink });
});
afterAll(async () => {
  await stack?.stop();
});

const FORGED = 'bm90IGEgc2lnbmF0dXJl';

/** A Twilio call of `team`, scheduled an hour ahead so that nothing but this test sends its callbacks. */
async function scheduledTwilioCall(team: SeededTeam, to: string): Promise<string> {
  const res = await apiClient(stack.baseUrl, team.key).post(
    '/v1/phoneCalls',
    seededCallBody(team, to, {
      telephonyProvider: 'twilio',
      phoneNumberId: team.phoneNumberIds.twilio,
      callDelayedUntil: new Date(Date.now() + 3_600_000).toISOString(),
    }),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data._id as string;
}

function postCallback(
  baseUrl: string,
  callId: string,
  params: URLSearchParams,
  signature: string,
  headers: Record<string, string> = {},
) {
  return fetch(callbackUrlFor(baseUrl, 'twilio', callId), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, ...headers },
    body: params.toString(),
  });
}

const ringing = (team: SeededTeam) =>
  new URLSearchParams({
    AccountSid: team.twilio.accountSid,
    CallSid: `CA${randomBytes(16).toString('hex')}`,
    CallStatus: 'ringing',
    Timestamp: new Date().toUTCString(),
  });

const linesFor = (callId: string) => lines.filter((line) => line.callId === callId);
const unhandled = () => lines.filter((line) => line.msg === 'unhandled error');

describe('a callback for a call whose team has no usable credentials', () => {
  it('is a 401 when the credentials were removed after the call was made', async () => {
    const team = await stack.seedTeam('Credentials removed');
    const id = await scheduledTwilioCall(team, '+14155557101');
    await Team.updateOne({ _id: team.teamId }, { $set: { providerSettings: [] } });

    const res = await postCallback(stack.baseUrl, id, ringing(team), FORGED);
    expect(res.status).toBe(401);
    const rejected = await eventually(async () =>
      linesFor(id).find((line) => line.msg === 'telephony callback rejected: no usable credentials to verify it'),
    );
    expect(rejected.level).toBe(40); // warn
    expect(rejected.reason).toBe(`team ${team.teamId} has no twilio credentials`);
    expect(unhandled()).toEqual([]);
  });

  it('is a 401 when the stored credentials cannot be opened, and the log names no secret', async () => {
    const team = await stack.seedTeam('Credentials unreadable');
    const id = await scheduledTwilioCall(team, '+14155557102');
    // Sealed under a key this service does not hold (a key rotated away, or a restore from elsewhere).
    const foreign = createSecretBox(randomBytes(32).toString('base64'));
    const settings = (await Team.findById(team.teamId).lean())!.providerSettings.map((s) =>
      s.provider === 'twilio'
        ? { ...s, credentialsSealed: foreign.seal(JSON.stringify({ provider: 'twilio', twilio: team.twilio })) }
        : s,
    );
    await Team.updateOne({ _id: team.teamId }, { $set: { providerSettings: settings } });

    const res = await postCallback(stack.baseUrl, id, ringing(team), FORGED);
    expect(res.status).toBe(401);
    const rejected = await eventually(async () =>
      linesFor(id).find((line) => line.msg === 'telephony callback rejected: no usable credentials to verify it'),
    );
    expect(rejected.reason).toMatch(/^the stored credentials could not be opened/);
    expect(JSON.stringify(linesFor(id))).not.toContain(team.twilio.authToken);
    expect(unhandled()).toEqual([]);
  });

  it('is a 401 when a remembered adapter refuses it and the current credentials are gone', async () => {
    const team = await stack.seedTeam('Credentials removed while remembered');
    const id = await scheduledTwilioCall(team, '+14155557103');
    // The first callback makes the API remember the team's adapter.
    expect((await postCallback(stack.baseUrl, id, ringing(team), FORGED)).status).toBe(401);
    await Team.updateOne({ _id: team.teamId }, { $set: { providerSettings: [] } });

    // The remembered adapter refuses the signature; the fresh lookup finds no credentials.
    const res = await postCallback(stack.baseUrl, id, ringing(team), FORGED);
    expect(res.status).toBe(401);
    await eventually(async () =>
      linesFor(id).find((line) => line.msg === 'telephony callback rejected: no usable credentials to verify it'),
    );
    expect(linesFor(id).filter((line) => line.msg === 'telephony callback rejected: malformed')).toEqual([]);
    expect(unhandled()).toEqual([]);
  });
});

describe('the address a rejected callback is logged with', () => {
  const badSignatureIp = async (callId: string) =>
    (
      await eventually(async () =>
        linesFor(callId).find((line) => line.msg === 'telephony callback rejected: bad signature'),
      )
    ).ip;

  it("is the connection's own by default, whatever X-Forwarded-For says", async () => {
    const id = await scheduledTwilioCall(stack.team, '+14155557104');
    const res = await postCallback(stack.baseUrl, id, ringing(stack.team), FORGED, {
      'x-forwarded-for': '203.0.113.7',
    });
    expect(res.status).toBe(401);
    expect(stack.config.TRUST_PROXY).toBe(false);
    expect(await badSignatureIp(id)).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it('is the one the proxy appended with TRUST_PROXY, and a signed callback still verifies behind it', async () => {
    // The API behind a reverse proxy: providers call PUBLIC_BASE_URL, the proxy forwards to this server.
    const behindProxy = await listen(
      createApiApp({
        config: { ...stack.config, TRUST_PROXY: true },
        logger: createLogger('info', 'test', { destination: sink }),
        temporal: stack.temporal,
      }),
      0,
      '127.0.0.1',
    );
    try {
      const internalUrl = `http://127.0.0.1:${(behindProxy.address() as AddressInfo).port}`;
      const proxyHeaders = {
        // The first entry is whatever the client sent; the proxy appended the last.
        'x-forwarded-for': '198.51.100.23, 203.0.113.7',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'proxy.example',
      };
      const id = await scheduledTwilioCall(stack.team, '+14155557105');
      const forged = await postCallback(internalUrl, id, ringing(stack.team), FORGED, proxyHeaders);
      expect(forged.status).toBe(401);
      expect(await badSignatureIp(id)).toBe('203.0.113.7');

      // Signed over the public URL the provider called, whatever host and protocol the proxy names.
      const publicUrl = callbackUrlFor(stack.config.PUBLIC_BASE_URL, 'twilio', id);
      const params = ringing(stack.team);
      const signed = await postCallback(
        internalUrl,
        id,
        params,
        twilioSignature(stack.team.twilio.authToken, publicUrl, params),
        proxyHeaders,
      );
      expect(signed.status).toBe(204);
    } finally {
      behindProxy.close();
    }
  });
});

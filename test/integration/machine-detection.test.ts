// Answering-machine detection through the API and the emulator, for each provider: a machine hung up
// on, a message left after a greeting with and without a beep, a fax, a person with a long greeting
// who is never taken for a machine, detection off as before, and a machine-answered call redialled.
// The template settings' refusals are the CLI's (admin-cli.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTemplate } from '../../src/admin/commands';
import { PROVIDERS, type ProviderName } from '../../src/contracts/providers';
import { phoneCallReadViewSchema } from '../../src/schemas/responses';
import { apiClient, eventually } from '../helpers/http';
import { startReceiver } from '../helpers/receiver';
import { seededCallBody, startTestStack, type SeededTeam, type TestStack } from '../helpers/stack';

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  // At 10x rather than the suite's 50x: a machine left without instructions hangs up 30 s after its
  // greeting, 3 s of wall time here, within which the service must have hung up on it. At 50x and
  // 25x (0.6 and 1.2 s) a loaded 2-core machine sometimes took longer, and the machine hung up first.
  stack = await startTestStack({ speedFactor: 0.1 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const TERMINAL = ['completed', 'busy', 'noAnswer', 'failed', 'cancelled'];
const MESSAGE = 'Hi {{firstName}}, this is Ada from Acme Dental about your check-up. Please call us back on 555 0100.';
const FILLED = 'Hi Lin, this is Ada from Acme Dental about your check-up. Please call us back on 555 0100.';

/** The emulator's answering outcomes by last four digits (src/emulator/scenarios.ts). */
const MACHINE_BEEP = '6200';
const MACHINE_SILENCE = '6201';
const FAX = '6202';
const LONG_GREETING = '6203';

/** Columns that a person who said nothing would still fill (`callbackRequested` no, `sentiment` neutral). */
const RESULT_COLUMNS = ['interested', 'callbackRequested', 'sentiment', 'summary', 'duration'];
/** What a call a machine answered says: nothing, one empty value per column. */
const NO_RESULTS = RESULT_COLUMNS.map((columnName) => ({ columnName, value: '' }));

/** A team whose template detects machines as `mode` says; `redial` adds a policy on noAnswer (1 s apart, or as given). */
async function amdTeam(name: string, mode: 'off' | 'hangUp' | 'leaveMessage', redial: boolean | string = false) {
  const team = await stack.seedTeam(name);
  const { callTemplateId } = await createTemplate({
    team: team.teamId,
    name: `AMD ${mode}`,
    prompt: 'Hello {{firstName}}, this is Ada from Acme Dental. Would you like to book your check-up?',
    requiredVariables: 'firstName',
    machineDetection: mode,
    resultColumns: RESULT_COLUMNS,
    // One phrase of the message left, one of the machine's greeting (MACHINE_GREETING).
    tags: ['callUsBack=call us back', 'greeting=leave a message'],
    ...(mode === 'leaveMessage' ? { voicemailMessage: MESSAGE } : {}),
    ...(redial ? { redialOn: 'noAnswer', redials: '1', redialSpacing: redial === true ? '1s' : redial } : {}),
  });
  const client = apiClient(stack.baseUrl, team.key);
  const call = async (to: string, provider: ProviderName, extra: Record<string, unknown> = {}) => {
    const res = await client.post(
      '/v1/phoneCalls',
      seededCallBody({ ...team, templateId: callTemplateId } as SeededTeam, to, {
        telephonyProvider: provider,
        record: true,
        ...extra,
      }),
    );
    expect(res.status).toBe(201);
    const id = res.body.data._id as string;
    const ended = await eventually(
      async () => {
        const read = phoneCallReadViewSchema.parse((await client.get(`/v1/phoneCalls/${id}`)).body.data);
        return TERMINAL.includes(read.status) ? read : undefined;
      },
      60_000,
      `call ${id} to end`,
    );
    const transcript = (await client.get(`/v1/transcripts?phoneCallId=${id}`)).body.data as {
      speaker: string;
      text: string;
    }[];
    return { call: ended, transcript };
  };
  return { team, templateId: callTemplateId, client, call };
}

/** A number per test and provider ending in `lastFour`, so that the emulator's per-number counts stay apart. */
const numberFor = (provider: ProviderName, lastFour: string, slot: number) =>
  `+14155${slot}${PROVIDERS.indexOf(provider) + 1}${lastFour}`;

const emulated = (to: string) => stack.emulator.calls().filter((c) => c.to.replace(/\D/g, '') === to.slice(1));

// The cases run at the same time, five at once (it.concurrent, Vitest's maxConcurrency): each has its
// own team, number and receiver path on the file's one stack. The file took 66 s one case at a time,
// 23-25 s this way alone, and passed beside the rest of the timing group with three CPU hogs.
describe('answering-machine detection', () => {
  it.concurrent.each(PROVIDERS)(
    'hangs up on a machine: noAnswer, answering-machine, no transcript (%s)',
    async (provider) => {
      const { call } = await amdTeam(`AMD hang up ${provider}`, 'hangUp');
      const to = numberFor(provider, MACHINE_BEEP, 1);
      const hook = {
        url: `${receiver.url}/amd-${provider}`,
        subscribedEvent: 'phoneCall.noAnswer',
        secret: 'amd webhook secret',
      };
      const { call: ended, transcript } = await call(to, provider, { phoneCallWebhooks: [hook] });
      expect([ended.status, ended.statusExtraInfo?.statusCode, ended.answeredBy]).toEqual([
        'noAnswer',
        'answering-machine',
        'machine',
      ]);
      expect(ended.callStartedAt).toBeDefined();
      expect(ended.attempts.map((a) => [a.status, a.statusCode, a.answeredBy])).toEqual([
        ['noAnswer', 'answering-machine', 'machine'],
      ]);
      // The greeting is nobody's words: nothing is stored, no results come of it.
      expect(transcript).toEqual([]);
      expect(ended.resultValues).toEqual(NO_RESULTS);
      expect(ended.customTagsHitOnCall).toEqual([]);
      expect(ended.fixedMeetingTime).toBeUndefined();
      const [line] = emulated(to);
      expect(line).toMatchObject({ answeredBy: 'machine', end: { hungUpBy: 'caller' } });
      expect(line!.spoken.filter((u) => u.speaker === 'agent').map((u) => u.text)).not.toContain(FILLED);
      const delivered = await eventually(async () => receiver.at(`/amd-${provider}`)[0]);
      expect(JSON.parse(delivered.body).data).toMatchObject({ answeredBy: 'machine', status: 'noAnswer' });
    },
  );

  it.concurrent.each(PROVIDERS)('leaves the message after a greeting with a beep (%s)', async (provider) => {
    const { call } = await amdTeam(`AMD message beep ${provider}`, 'leaveMessage');
    const to = numberFor(provider, MACHINE_BEEP, 2);
    const { call: ended, transcript } = await call(to, provider);
    expect([ended.status, ended.statusExtraInfo?.statusCode, ended.answeredBy]).toEqual([
      'completed',
      'voicemail-left',
      'machine',
    ]);
    // Only the message left is stored, as the agent's words; the greeting is not.
    expect(transcript.map((u) => [u.speaker, u.text])).toEqual([['agent', FILLED]]);
    expect(ended.recordingUrl).toBeDefined();
    expect(ended.resultValues).toEqual(NO_RESULTS);
    // A tag is hit anywhere in the transcript, whoever spoke (decisions.md): the message's, not the greeting's.
    expect(ended.customTagsHitOnCall).toEqual(['callUsBack']);
    const [line] = emulated(to);
    expect(line!.spoken.at(-1)).toMatchObject({ speaker: 'agent', text: FILLED });
    expect(line!.end?.outcome).toBe('completed');
  });

  it.concurrent.each(PROVIDERS)('leaves the message after a greeting that ends in silence (%s)', async (provider) => {
    const { call } = await amdTeam(`AMD message silence ${provider}`, 'leaveMessage');
    const { call: ended, transcript } = await call(numberFor(provider, MACHINE_SILENCE, 3), provider);
    expect([ended.status, ended.statusExtraInfo?.statusCode]).toEqual(['completed', 'voicemail-left']);
    expect(transcript.map((u) => u.text)).toEqual([FILLED]);
  });

  it.concurrent.each(PROVIDERS)('hangs up on a fax even when a message is to be left (%s)', async (provider) => {
    const { call } = await amdTeam(`AMD fax ${provider}`, 'leaveMessage');
    const to = numberFor(provider, FAX, 4);
    const { call: ended } = await call(to, provider);
    // Twilio tells a fax apart; Vonage and Telnyx report it as a machine.
    expect([ended.status, ended.statusExtraInfo?.statusCode, ended.answeredBy]).toEqual([
      'noAnswer',
      'answering-machine',
      provider === 'twilio' ? 'fax' : 'machine',
    ]);
    expect(emulated(to)[0]!.spoken.some((u) => u.text === FILLED)).toBe(false);
  });

  it.concurrent.each(PROVIDERS)('never takes a person with a long greeting for a machine (%s)', async (provider) => {
    const { call } = await amdTeam(`AMD long greeting ${provider}`, 'hangUp');
    const { call: ended, transcript } = await call(numberFor(provider, LONG_GREETING, 5), provider);
    expect([ended.status, ended.statusExtraInfo?.statusCode, ended.answeredBy]).toEqual([
      'completed',
      'completed',
      'human',
    ]);
    expect(transcript[0]).toMatchObject({ speaker: 'human', text: expect.stringContaining('Riverside Dental') });
    expect(transcript.some((u) => u.speaker === 'human' && /Tuesday at 3pm/.test(u.text))).toBe(true);
    expect(ended.fixedMeetingTime).toBeDefined();
  });

  it.concurrent.each(PROVIDERS)(
    'with detection off, a greeting is taken for a person as before (%s)',
    async (provider) => {
      const { call } = await amdTeam(`AMD off ${provider}`, 'off');
      const to = numberFor(provider, MACHINE_BEEP, 6);
      const { call: ended, transcript } = await call(to, provider);
      expect([ended.status, ended.statusExtraInfo?.statusCode, ended.answeredBy]).toEqual([
        'completed',
        'completed',
        undefined,
      ]);
      expect(transcript[0]).toMatchObject({ speaker: 'human', text: expect.stringContaining('leave a message') });
      expect(emulated(to)[0]).toMatchObject({ machineDetection: null, answeredBy: null });
    },
  );

  it('redials a call a machine answered, as the policy says for noAnswer', async () => {
    const { call } = await amdTeam('AMD redial', 'hangUp', true);
    const to = numberFor('twilio', MACHINE_BEEP, 7);
    const { call: ended } = await call(to, 'twilio');
    expect(ended.attempts.map((a) => [a.attempt, a.statusCode, a.answeredBy])).toEqual([
      [1, 'answering-machine', 'machine'],
      [2, 'answering-machine', 'machine'],
    ]);
    expect(stack.emulator.callsTo(to)).toBe(2);
  });

  it('a call queued again for its redial keeps nothing of the attempt a machine answered: no recording, no results', async () => {
    const { team, templateId, client } = await amdTeam('AMD redial later', 'hangUp', '1h');
    const to = numberFor('twilio', MACHINE_BEEP, 8);
    const created = await client.post(
      '/v1/phoneCalls',
      seededCallBody({ ...team, templateId } as SeededTeam, to, { record: true }),
    );
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    const waiting = await eventually(
      async () => {
        const read = phoneCallReadViewSchema.parse((await client.get(`/v1/phoneCalls/${id}`)).body.data);
        return read.status === 'queued' && read.attempts.length === 1 ? read : undefined;
      },
      60_000,
      'the call to wait for its redial',
    );
    expect(waiting.attempts[0]).toMatchObject({ statusCode: 'answering-machine', answeredBy: 'machine' });
    expect(waiting.statusExtraInfo?.statusCode).toBe('waiting-to-redial');
    // The provider recorded the greeting, and the attempt's capture stored it: not the next attempt's.
    expect(emulated(to)[0]?.hasRecording).toBe(true);
    expect(waiting.recordingUrl).toBeUndefined();
    expect(waiting.resultValues).toEqual([]);
    expect(waiting.customTagsHitOnCall).toEqual([]);
    expect(waiting.fixedMeetingTime).toBeUndefined();
    // Not left to wait its hour.
    expect((await client.delete(`/v1/phoneCalls/${id}`)).status).toBe(200);
  });
});

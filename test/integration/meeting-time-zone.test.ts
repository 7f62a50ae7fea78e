// The meeting time a callee names is read on the callee's clock, through the API, the worker and the
// emulator: the emulator's meeting-tuesday callee says "Tuesday at 3pm" to a template kept in New
// York's zone, as the `npm start` demo's is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTemplate } from '../../src/admin/commands';
import { numberForScenario, scenarioFor } from '../../src/emulator';
import { apiClient, callReaching } from '../helpers/http';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

let stack: TestStack;
let api: ReturnType<typeof apiClient>;
let templateId: string;
beforeAll(async () => {
  stack = await startTestStack();
  api = apiClient(stack.baseUrl, stack.team.key);
  ({ callTemplateId: templateId } = await createTemplate({
    team: stack.team.teamId,
    name: 'New York appointment setter',
    prompt: 'Hello {{firstName}}, this is Ada from Acme Dental. Could we book your check-up?',
    requiredVariables: 'firstName',
    resultColumns: ['meetingTime'],
    timeZone: 'America/New_York',
  }));
});
afterAll(async () => {
  await stack?.stop();
});

/** The call's stored meeting time, once the call has ended. */
async function meetingTimeOfCall(to: string, extra: Record<string, unknown> = {}) {
  const res = await api.post('/v1/phoneCalls', seededCallBody({ ...stack.team, templateId }, to, extra));
  expect(res.status).toBe(201);
  const id = res.body.data._id as string;
  const call = await callReaching(api, id, 'completed', 60_000, `call ${id} to complete`);
  expect(call.resultValues).toEqual([{ columnName: 'meetingTime', value: call.fixedMeetingTime }]);
  // "Tuesday" is the next one: within a week of the call.
  const ahead = Date.parse(call.fixedMeetingTime) - Date.parse(call.callStartedAt);
  expect(ahead).toBeGreaterThan(0);
  expect(ahead).toBeLessThanOrEqual(7 * 86_400_000);
  return call.fixedMeetingTime as string;
}

/** What a wall clock in the zone shows at the instant, e.g. "Tue 15:00". */
function wallClock(iso: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(iso));
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('weekday')} ${part('hour')}:${part('minute')}`;
}

describe('a meeting time the callee names', () => {
  it("is read in the zone of the callee's number: 3pm Pacific for a San Francisco number", async () => {
    // The walk-through's demo number.
    const to = '+14155550007';
    expect(scenarioFor(to).id).toBe('meeting-tuesday');
    const meeting = await meetingTimeOfCall(to);
    expect(wallClock(meeting, 'America/Los_Angeles')).toBe('Tue 15:00');
  });

  it('is read in the calleeTimeZone given on create, over the number', async () => {
    const meeting = await meetingTimeOfCall(numberForScenario('meeting-tuesday', '+1415558'), {
      calleeTimeZone: 'America/Chicago',
    });
    expect(wallClock(meeting, 'America/Chicago')).toBe('Tue 15:00');
  });

  it("is read in the template's zone for a number in several zones (toll-free)", async () => {
    const meeting = await meetingTimeOfCall(numberForScenario('meeting-tuesday', '+1800555'));
    expect(wallClock(meeting, 'America/New_York')).toBe('Tue 15:00');
  });
});

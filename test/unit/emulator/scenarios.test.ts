import { describe, expect, it } from 'vitest';
import {
  MACHINE_GREETING,
  MACHINE_OUTCOMES,
  numberForScenario,
  outcomeFor,
  planCall,
  scenarioFor,
  SCENARIOS,
  speakingSeconds,
} from '../../../src/emulator/scenarios';

describe('outcomeFor', () => {
  it.each([
    ['+14155551486', 'busy'],
    ['+14155551408', 'no-answer'],
    ['+1 (415) 555-1404', 'refused'],
    ['+14155551500', 'drop-after-answer'],
    ['+14155551200', 'silent'],
    ['+14155551440', 'stays-on-line'],
    ['+14155556200', 'machine-beep'],
    ['+14155556201', 'machine-no-beep'],
    ['+14155556202', 'fax'],
    ['+14155556203', 'long-greeting-human'],
    ['+14155552671', 'conversation'],
    ['+441486', 'busy'],
  ])('%s -> %s', (number, outcome) => {
    expect(outcomeFor(number)).toBe(outcome);
  });
});

describe('scenarios', () => {
  it('are picked deterministically by number, formatting aside', () => {
    expect(scenarioFor('+1 415 555 2671').id).toBe(scenarioFor('+14155552671').id);
  });

  it('cover meetings at spoken times and the phrases results look for', () => {
    const human = SCENARIOS.flatMap((s) => s.turns.map(([line]) => line)).join('\n');
    expect(human).toMatch(/Tuesday at 3pm works for me/);
    expect(human).toMatch(/how about tomorrow at 10:30/i);
    expect(human).toMatch(/not interested/);
    expect(human).toMatch(/call me back later/);
    expect(human).toMatch(/send me an email/i);
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(SCENARIOS.length);
  });

  it('numberForScenario gives a number that reaches that scenario as a conversation', () => {
    for (const { id } of SCENARIOS.filter((s) => s.id !== 'long-greeting')) {
      const number = numberForScenario(id);
      expect(scenarioFor(number).id).toBe(id);
      expect(outcomeFor(number)).toBe('conversation');
      expect(number).not.toMatch(/620\d$/);
    }
  });

  it('keeps the long greeting to its own number: numberForScenario refuses it', () => {
    expect(scenarioFor('+14155556203').id).toBe('long-greeting');
    expect(() => numberForScenario('long-greeting')).toThrow(/6203/);
  });
});

describe('planCall', () => {
  const opening = 'Hello Grace, this is Ada from Acme Dental.';

  it('opens with the given line, alternates speakers and hangs up after the last word', () => {
    const number = numberForScenario('meeting-tuesday');
    const plan = planCall({ ringTimeoutSeconds: 60, to: number, openingLine: opening });
    expect(plan.scenarioId).toBe('meeting-tuesday');
    expect(plan.utterances[0]).toMatchObject({ speaker: 'agent', text: opening });
    expect(plan.utterances.map((u) => u.speaker)).toEqual([
      'agent',
      'human',
      'agent',
      'human',
      'agent',
      'human',
      'agent',
    ]);
    plan.utterances.slice(1).forEach((u, i) => {
      const previous = plan.utterances[i];
      expect(u.startSeconds).toBeGreaterThanOrEqual(previous.startSeconds + previous.durationSeconds);
    });
    const last = plan.utterances[plan.utterances.length - 1];
    expect(plan.hangupSeconds).toBeGreaterThan(last.startSeconds + last.durationSeconds);
    expect(plan.ringSeconds).toBeGreaterThanOrEqual(2);
    expect(plan.ringSeconds).toBeLessThanOrEqual(4);
    expect(planCall({ ringTimeoutSeconds: 60, to: number, openingLine: opening })).toEqual(plan);
  });

  it('has nobody speak on the human side for a silent callee, and nothing said when never answered', () => {
    expect(
      planCall({ ringTimeoutSeconds: 60, to: '+14155551200', openingLine: opening }).utterances.every(
        (u) => u.speaker === 'agent',
      ),
    ).toBe(true);
    expect(planCall({ ringTimeoutSeconds: 60, to: '+14155551486', openingLine: opening })).toMatchObject({
      utterances: [],
      hangupSeconds: 0,
    });
    // An unanswered call rings until the dial's ring timeout (the provider's default when it gave none).
    expect(planCall({ ringTimeoutSeconds: 45, to: '+14155551408', openingLine: opening }).ringSeconds).toBe(45);
    expect(planCall({ ringTimeoutSeconds: 45, to: '+14155559401', openingLine: opening }).ringSeconds).toBeLessThan(5);
  });

  it('holds the opening line until the verdict when detection holds the call plan (Vonage detect modes)', () => {
    const call = (detectionHoldsCallPlan: boolean) =>
      planCall({
        ringTimeoutSeconds: 60,
        to: '+14155559401',
        openingLine: opening,
        detectMachines: true,
        detectionHoldsCallPlan,
      });
    const asynchronous = call(false);
    const held = call(true);
    expect(asynchronous.utterances[0]).toMatchObject({ speaker: 'agent', startSeconds: 0.8 });
    expect(held.utterances[0]).toMatchObject({ speaker: 'agent', startSeconds: 3.3 });
    expect(held.detection).toEqual(asynchronous.detection);
  });

  it('has the person on 1440 answer the opening line, then stay on the line with nobody hanging up', () => {
    const plan = planCall({ ringTimeoutSeconds: 60, to: '+14155551440', openingLine: opening });
    expect(plan.utterances.map((u) => [u.speaker, u.text])).toEqual([
      ['agent', opening],
      ['human', 'Hold on a second, let me grab a pen.'],
    ]);
    expect(plan.hangupSeconds).toBe(Infinity);
  });

  it('drops the call shortly after the opening line for 1500', () => {
    const plan = planCall({ ringTimeoutSeconds: 60, to: '+14155551500', openingLine: opening });
    expect(plan.utterances).toHaveLength(1);
    expect(plan.hangupSeconds).toBeGreaterThan(plan.utterances[0].durationSeconds);
  });

  it('times speech at a conversational pace', () => {
    expect(speakingSeconds('one two three four five six seven eight nine ten')).toBeCloseTo(4.1, 1);
  });
});

describe('planCall with answering-machine detection', () => {
  const opening = 'Hello Grace, this is Ada from Acme Dental.';
  const greetingOver = 0.8 + speakingSeconds(MACHINE_GREETING);
  const plan = (to: string, detectMachines: boolean) =>
    planCall({ ringTimeoutSeconds: 60, to, openingLine: opening, detectMachines });

  it('names the machines', () => {
    expect([...MACHINE_OUTCOMES].sort()).toEqual(['fax', 'machine-beep', 'machine-no-beep']);
  });

  it('has a machine greet, get detected while it still speaks, beep, then give up waiting', () => {
    const beep = plan('+14155556200', true);
    expect(beep.utterances).toEqual([
      {
        speaker: 'human',
        text: MACHINE_GREETING,
        startSeconds: 0.8,
        durationSeconds: speakingSeconds(MACHINE_GREETING),
      },
    ]);
    expect(beep.detection).toEqual({ result: 'machine', atSeconds: 4.3 });
    expect(beep.greetingEnd).toEqual({ beep: true, atSeconds: expect.closeTo(greetingOver + 0.4, 5) });
    expect(beep).toMatchObject({ hangupSeconds: expect.closeTo(greetingOver + 30.4, 5), hungUpBy: 'callee' });

    const silence = plan('+14155556201', true);
    expect(silence.greetingEnd).toEqual({ beep: false, atSeconds: expect.closeTo(greetingOver + 2, 5) });
    expect(silence.hangupSeconds).toBeCloseTo(greetingOver + 32, 5);
  });

  it('without detection, has the agent speak after the beep and hang up', () => {
    const beep = plan('+14155556200', false);
    expect(beep).toMatchObject({ detection: null, greetingEnd: null, hungUpBy: 'caller' });
    expect(beep.utterances.map((u) => u.speaker)).toEqual(['human', 'agent']);
    const [, agent] = beep.utterances;
    expect(agent).toMatchObject({ text: opening, startSeconds: expect.closeTo(greetingOver + 0.9, 5) });
    expect(beep.hangupSeconds).toBeCloseTo(agent.startSeconds + agent.durationSeconds + 1, 5);
  });

  it('has a fax say nothing, get detected at 2.5 s, never end a greeting and hang up at 20 s', () => {
    expect(plan('+14155556202', true)).toMatchObject({
      utterances: [],
      detection: { result: 'fax', atSeconds: 2.5 },
      greetingEnd: null,
      hangupSeconds: 20,
      hungUpBy: 'callee',
    });
    expect(plan('+14155556202', false)).toMatchObject({ detection: null, hangupSeconds: 20, hungUpBy: 'callee' });
  });

  it('has the long greeting waited out and named human, then a conversation that books Tuesday', () => {
    const long = plan('+14155556203', true);
    const [greeting, agent] = long.utterances;
    expect(greeting).toMatchObject({ speaker: 'human', startSeconds: 0.8 });
    expect(greeting.durationSeconds).toBeGreaterThan(4);
    expect(agent).toMatchObject({ speaker: 'agent', text: opening });
    expect(agent.startSeconds).toBeGreaterThan(greeting.startSeconds + greeting.durationSeconds);
    expect(long.utterances.map((u) => u.text)).toContain('Tuesday at 3pm works for me.');
    expect(long).toMatchObject({ scenarioId: 'long-greeting', greetingEnd: null, hungUpBy: 'caller' });
    expect(long.detection).toEqual({ result: 'human', atSeconds: expect.closeTo(0.8 + greeting.durationSeconds, 5) });
    expect(plan('+14155556203', false).utterances).toEqual(long.utterances);
  });

  it('names people within 2.5 s, a silent line unknown, and leaves conversations as they were', () => {
    const number = numberForScenario('meeting-tuesday');
    expect(plan(number, true)).toEqual({
      ...plan(number, false),
      detection: { result: 'human', atSeconds: 2.5 },
    });
    expect(plan('+14155551200', true).detection).toEqual({ result: 'unknown', atSeconds: 2.5 });
    expect(plan('+14155551500', true).detection).toEqual({ result: 'human', atSeconds: 2.5 });
    expect(plan('+14155551486', true).detection).toBeNull();
    expect(plan(number, false).detection).toBeNull();
  });
});

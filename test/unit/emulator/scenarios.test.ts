import { describe, expect, it } from 'vitest';
import {
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
    for (const { id } of SCENARIOS) {
      const number = numberForScenario(id);
      expect(scenarioFor(number).id).toBe(id);
      expect(outcomeFor(number)).toBe('conversation');
    }
  });
});

describe('planCall', () => {
  const opening = 'Hello Grace, this is Ada from Acme Dental.';

  it('opens with the given line, alternates speakers and hangs up after the last word', () => {
    const number = numberForScenario('meeting-tuesday');
    const plan = planCall({ to: number, openingLine: opening });
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
    expect(planCall({ to: number, openingLine: opening })).toEqual(plan);
  });

  it('has nobody speak on the human side for a silent callee, and nothing said when never answered', () => {
    expect(planCall({ to: '+14155551200', openingLine: opening }).utterances.every((u) => u.speaker === 'agent')).toBe(
      true,
    );
    expect(planCall({ to: '+14155551486', openingLine: opening })).toMatchObject({ utterances: [], hangupSeconds: 0 });
    expect(planCall({ to: '+14155551408', openingLine: opening }).ringSeconds).toBe(30);
  });

  it('drops the call shortly after the opening line for 1500', () => {
    const plan = planCall({ to: '+14155551500', openingLine: opening });
    expect(plan.utterances).toHaveLength(1);
    expect(plan.hangupSeconds).toBeGreaterThan(plan.utterances[0].durationSeconds);
  });

  it('times speech at a conversational pace', () => {
    expect(speakingSeconds('one two three four five six seven eight nine ten')).toBeCloseTo(4.1, 1);
  });
});

import { describe, expect, it } from 'vitest';
import { computeCallResults } from '../../../src/results';
import type { Utterance } from '../../../src/results/text';

const human = (text: string): Utterance => ({ speaker: 'human', text });
const agent = (text: string): Utterance => ({ speaker: 'agent', text });

const template = {
  customTags: [
    { name: 'pricing', triggerPhrases: ['price', 'pricing', 'how much'] },
    { name: 'meeting', triggerPhrases: ['works for me', 'sounds good'] },
    { name: 'competitor', triggerPhrases: ['Acmé Corp'] },
  ],
  resultColumns: [
    'meetingTime',
    'Interested',
    'callback requested',
    'email',
    'sentiment',
    'tags',
    'budget',
    'name',
    'duration',
  ],
};

describe('computeCallResults', () => {
  it('fills tags, meeting time and every result column from one conversation', () => {
    const utterances = [
      agent('Hello José, this is Ava from Example Ltd. Would you like a short demo of our scheduling tool?'),
      human('Maybe. How much does it cost? We use ACME corp today.'),
      agent("Pricing starts at 20 dollars a month. What's your budget?"),
      human('Around 50 a month.'),
      agent('Would Thursday at 2pm suit you for a demo?'),
      human('Yes, that works for me. My email is jose at example dot com.'),
      agent('Great, see you Thursday at 2pm.'),
    ];
    const results = computeCallResults(template, utterances, {
      callTime: new Date('2026-03-02T15:00:00.000Z'),
      timeZone: 'America/New_York',
      nameOfHuman: 'José',
      callDurationSeconds: 83.5,
    });
    expect(results).toEqual({
      customTagsHitOnCall: ['pricing', 'meeting', 'competitor'],
      optedOut: false,
      fixedMeetingTime: '2026-03-05T19:00:00.000Z',
      resultValues: [
        { columnName: 'meetingTime', value: '2026-03-05T19:00:00.000Z' },
        { columnName: 'Interested', value: 'yes' },
        { columnName: 'callback requested', value: 'no' },
        { columnName: 'email', value: 'jose@example.com' },
        { columnName: 'sentiment', value: 'positive' },
        { columnName: 'tags', value: 'pricing, meeting, competitor' },
        { columnName: 'budget', value: 'Around 50 a month.' },
        { columnName: 'name', value: 'José' },
        { columnName: 'duration', value: '83.5' },
      ],
    });
  });

  it('gives empty results for a call where nobody answers the agent', () => {
    const results = computeCallResults(template, [agent('Hello? Is anyone there?')], {
      callTime: new Date('2026-03-02T15:00:00.000Z'),
    });
    expect(results.customTagsHitOnCall).toEqual([]);
    expect(results.fixedMeetingTime).toBeNull();
    expect(Object.fromEntries(results.resultValues.map((v) => [v.columnName, v.value]))).toEqual({
      meetingTime: '',
      Interested: 'unknown',
      'callback requested': 'no',
      email: '',
      sentiment: 'neutral',
      tags: '',
      budget: '',
      name: '',
      duration: '',
    });
  });

  it('reads the meeting time in UTC when no time zone is given', () => {
    const results = computeCallResults(
      { customTags: [], resultColumns: ['meeting time'] },
      [human('Tomorrow at 10am works')],
      { callTime: new Date('2026-03-02T15:00:00.000Z') },
    );
    expect(results.fixedMeetingTime).toBe('2026-03-03T10:00:00.000Z');
    expect(results.resultValues).toEqual([{ columnName: 'meeting time', value: '2026-03-03T10:00:00.000Z' }]);
  });
});

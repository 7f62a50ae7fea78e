import { describe, expect, it } from 'vitest';
import { computeCallResults } from '../../../src/results';
import { askedNotToBeCalled, OPT_OUT_TAG } from '../../../src/results/opt-out';
import type { Utterance } from '../../../src/results/text';

const human = (text: string): Utterance => ({ speaker: 'human', text });
const agent = (text: string): Utterance => ({ speaker: 'agent', text });

describe('askedNotToBeCalled', () => {
  it.each([
    'Stop calling me.',
    'Please take me off your list.',
    "Don't call again.",
    'No, don’t call me again!',
    'DO NOT CALL ME ANYMORE',
    "I'm not interested so stop calling me",
    'Put me on your do not call list, please.',
    'Remove my number from your system.',
    'Never call me again.',
    "Not interested. Just don't call me again",
    'I want to unsubscribe.',
    'Please remove me from your calling list.',
    'Remove me from your database',
    'Remove me from all lists please',
    'Please remove me from the system.',
    'Remove me from this.',
    'remove me from any future calls',
    'Remove me from your marketing list',
    "Please don't call this number anymore.",
    'I asked you not to call me again.',
    "Don't contact me again.",
    "I don't want any more calls from you.",
    'Remove this number from your list.',
    'Do not phone here any more',
    "Why don't you stop calling me?",
    "If you don't stop calling me I'll report you.",
    "I don't want you to call me again.",
    "I don't want to be contacted anymore.",
  ])('hears a request in %j', (text) => {
    expect(askedNotToBeCalled([agent('Hello, this is Ada.'), human(text)])).toBe(true);
  });

  it.each([
    "I didn't say stop calling me.",
    "You don't need to take me off your list.",
    "No need to remove me from anything, I'm happy to hear from you.",
    "I'm not asking you to stop calling.",
    "Don't call me back today, I'll be in meetings.",
    "Sorry, I'm not interested.",
    'Call me again next week.',
    "Don't call me at work.",
    'Can you remove me from the meeting invite? My colleague will go instead.',
    "I didn't ask you not to call me again.",
    "Don't call me at work again, call my mobile.",
    'I told him not to call here again.',
    "People don't phone anymore, they text.",
    "The phones don't ring anymore since we moved.",
    "I don't want you to stop calling, I like the reminders.",
  ])('hears no request in %j', (text) => {
    expect(askedNotToBeCalled([agent('Hello, this is Ada.'), human(text)])).toBe(false);
  });

  it("counts only the human's words", () => {
    expect(askedNotToBeCalled([agent("I'll take you off our list and stop calling."), human('Thanks, bye.')])).toBe(
      false,
    );
  });

  it('takes a yes to the agent offering to stop as a request, and a no as none', () => {
    const offer = agent('Would you like us to stop calling you?');
    expect(askedNotToBeCalled([offer, human('Yes, please.')])).toBe(true);
    expect(askedNotToBeCalled([offer, human('No, no, it is fine.')])).toBe(false);
    expect(askedNotToBeCalled([agent('Is Tuesday good?'), human('Yes, please.')])).toBe(false);
  });
});

describe('askedNotToBeCalled: reviewed cases', () => {
  it("counts an offer to stop only when it is the agent's last question", () => {
    const agentText =
      'Hi, this is Ada from Bright Dental. You can opt out of these calls at any time. Would you like to book your free check-up?';
    expect(askedNotToBeCalled([agent(agentText), human('Yes, sure!')])).toBe(false);
  });

  it('does not take "please don\'t" as a yes to an offer to stop', () => {
    const offer = agent('Shall I remove you from our list?');
    expect(askedNotToBeCalled([offer, human("Please don't, I want to hear about offers")])).toBe(false);
  });

  it('needs a list after "take me off"', () => {
    const text = 'Can you take me off the Tuesday slot and put me on Thursday at 3pm instead?';
    expect(askedNotToBeCalled([agent('Hello, this is Ada.'), human(text)])).toBe(false);
    expect(askedNotToBeCalled([agent('Hello, this is Ada.'), human('Take me off the calling list.')])).toBe(true);
  });

  it.each([
    'Do not call me ever again',
    'Do not ever call me again',
    "Don't call this number again",
    "Don't call here again",
    "I'm not interested stop calling me",
    "Don't ever call me",
  ])('hears a request in %j', (text) => {
    expect(askedNotToBeCalled([agent('Hello, this is Ada.'), human(text)])).toBe(true);
  });
});

describe('computeCallResults', () => {
  it(`adds ${OPT_OUT_TAG} to the tags hit, once, and says the callee opted out`, () => {
    const utterances = [agent('Hello, this is Ada.'), human('Not interested, stop calling me.')];
    const options = { callTime: new Date('2026-11-23T10:00:00Z') };
    const untagged = computeCallResults({ customTags: [], resultColumns: ['tags'] }, utterances, options);
    expect(untagged.optedOut).toBe(true);
    expect(untagged.customTagsHitOnCall).toEqual([OPT_OUT_TAG]);
    expect(untagged.resultValues).toEqual([{ columnName: 'tags', value: OPT_OUT_TAG }]);
    const template = { customTags: [{ name: OPT_OUT_TAG, triggerPhrases: ['stop calling'] }], resultColumns: [] };
    expect(computeCallResults(template, utterances, options).customTagsHitOnCall).toEqual([OPT_OUT_TAG]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { findFixedMeetingTime } from '../../../src/results/meeting-time';
import type { Utterance } from '../../../src/results/text';
import { SCENARIOS } from '../../../src/emulator/scenarios';

const human = (text: string): Utterance => ({ speaker: 'human', text });
const agent = (text: string): Utterance => ({ speaker: 'agent', text });

// Monday 2 March 2026, 10:00 in New York (EST, UTC-5). US daylight saving starts on Sunday 8 March.
const MONDAY_CALL = new Date('2026-03-02T15:00:00.000Z');
const NEW_YORK = 'America/New_York';

function meetingIn(utterances: Utterance[], timeZone = NEW_YORK, callTime = MONDAY_CALL): string | null {
  return findFixedMeetingTime(utterances, { callTime, timeZone });
}

describe('findFixedMeetingTime: the human names and agrees to a time', () => {
  it.each([
    ['Tuesday at 3pm works for me', '2026-03-03T20:00:00.000Z'],
    ['How about tomorrow at 10:30?', '2026-03-03T15:30:00.000Z'],
    ['how about tomorrow at 10:30', '2026-03-03T15:30:00.000Z'],
    // after the change to daylight saving time: 9:00 EDT is 13:00 UTC
    ['Sure, next Monday 9 am', '2026-03-09T13:00:00.000Z'],
    ["Let's say the 5th at noon", '2026-03-05T17:00:00.000Z'],
    ['Tuesday at 3 sounds good', '2026-03-03T20:00:00.000Z'],
    ['Wednesday at 10am is fine', '2026-03-04T15:00:00.000Z'],
    ["That's fine, Thursday at 4:30 pm", '2026-03-05T21:30:00.000Z'],
    ['Yes, Friday at 11', '2026-03-06T16:00:00.000Z'],
    ["I can do Wednesday at 2 o'clock", '2026-03-04T19:00:00.000Z'],
    ['Half past four tomorrow works', '2026-03-03T21:30:00.000Z'],
    ['quarter to five on Friday works', '2026-03-06T21:45:00.000Z'],
    ["Let's do Thursday at four", '2026-03-05T21:00:00.000Z'],
    ['Thursday at three thirty pm suits me', '2026-03-05T20:30:00.000Z'],
    ['Tuesday, March 10 at 3pm is perfect', '2026-03-10T19:00:00.000Z'],
    ['on the 20th at 3pm please', '2026-03-20T19:00:00.000Z'],
    ['Monday the 9th at 10 am sounds good', '2026-03-09T14:00:00.000Z'],
    ["Let's go with the twenty-first at 2pm", '2026-03-21T18:00:00.000Z'],
    ['How about 3pm EST on Friday', '2026-03-06T20:00:00.000Z'],
    ['Tomorrow at noon works', '2026-03-03T17:00:00.000Z'],
    ['Noon tomorrow is great', '2026-03-03T17:00:00.000Z'],
    ['Tuesday at 3pm.', '2026-03-03T20:00:00.000Z'],
    ['Um, Tuesday at 3pm I guess', '2026-03-03T20:00:00.000Z'],
    ['Sure, 4pm today', '2026-03-02T21:00:00.000Z'],
    // 9 o'clock has passed at 10:00, so it is tomorrow's
    ['at 9 works', '2026-03-03T14:00:00.000Z'],
    ["I'm free at 3pm", '2026-03-02T20:00:00.000Z'],
    ['Around 3', '2026-03-02T20:00:00.000Z'],
    ['OK, in two hours then', '2026-03-02T17:00:00.000Z'],
    ['Can we do 8 in the evening on Wednesday?', '2026-03-05T01:00:00.000Z'],
    ["Let's do 07:30 on Friday", '2026-03-06T12:30:00.000Z'],
    ['No problem, Thursday at 11 is fine', '2026-03-05T16:00:00.000Z'],
    ["Why not, I don't mind Friday at 10am", '2026-03-06T15:00:00.000Z'],
    ['Tuesday at 3pm? Sure.', '2026-03-03T20:00:00.000Z'],
    ['TUESDAY AT 3PM WORKS', '2026-03-03T20:00:00.000Z'],
    // The emulator's meeting-next-monday callee (after "Sure." in a clause of its own).
    ['Sure. Next Monday at 9am would be ideal.', '2026-03-09T13:00:00.000Z'],
    ['Thursday at 4 would be best', '2026-03-05T21:00:00.000Z'],
    ['Friday at 10am is convenient', '2026-03-06T15:00:00.000Z'],
    ['Wednesday at 2pm seems suitable', '2026-03-04T19:00:00.000Z'],
  ])('%j -> %s', (text, expected) => {
    expect(meetingIn([human(text)])).toBe(expected);
  });
});

describe('findFixedMeetingTime: refusals and mentions that are not agreements', () => {
  it.each([
    "I can't do Tuesday at 3pm",
    'I cannot do Tuesday at 3pm',
    'Not Tuesday at 3pm',
    'No, Tuesday at 3pm is not possible',
    "Tuesday at 3pm doesn't work for me",
    "I'm busy Tuesday at 3pm",
    "I'm not available on Wednesday at 10am",
    'Tuesday at 3pm is bad for me',
    "I won't be around on Friday at 11",
    'Neither Monday nor Tuesday at 3 works',
    "I'm out of the office Thursday at 2pm",
    'Tuesday at 3pm is not ideal',
    "Monday at 9 wouldn't be best for me",
    "Friday at 10am isn't convenient",
    // a time mentioned without agreeing to it
    'My boss is in on Tuesday at 3pm',
    // the past
    'last Tuesday at 3pm was fine',
    'Yesterday at 3pm worked',
    // a day without a time is not a fixed time
    'Friday afternoon works',
    'Tuesday works for me',
    // numbers that are not times
    'I have two kids at home',
    'At one point I was interested',
    'Not interested, thanks',
    '',
  ])('%j -> null', (text) => {
    expect(meetingIn([human(text)])).toBeNull();
  });

  it('refuses both days of "Tuesday or Wednesday" after a negation', () => {
    expect(meetingIn([human("I can't do Tuesday or Wednesday at 3pm")])).toBeNull();
  });

  it('takes the day that is preferred, not the one it is preferred to', () => {
    expect(meetingIn([human('Wednesday at 4 rather than Tuesday at 3')])).toBe('2026-03-04T21:00:00.000Z');
    expect(meetingIn([human('Thursday at 11 is better than Friday at 11')])).toBe('2026-03-05T16:00:00.000Z');
  });

  it('takes the agreed clause after a refused one', () => {
    expect(meetingIn([human("I can't do Tuesday, but Wednesday at 3 works")])).toBe('2026-03-04T20:00:00.000Z');
    expect(meetingIn([human('Not Tuesday; Wednesday at 3pm is good')])).toBe('2026-03-04T20:00:00.000Z');
  });
});

describe('findFixedMeetingTime: the agent proposes, the human answers', () => {
  const proposal = agent('Would Thursday at 2pm suit you?');
  const thursdayAt2 = '2026-03-05T19:00:00.000Z';

  it.each([
    'Yes, that works',
    'Yes',
    'Sure.',
    'Okay',
    'Yeah, sounds good',
    'Perfect, see you then',
    'That works for me',
    "That's fine",
    'No problem',
    'Thursday works',
    'Yes, Thursday at 2 is great',
    'Yes please, my boss is back on Monday',
    "Good question. Yes, that's fine",
  ])('%j agrees to the proposed time', (reply) => {
    expect(meetingIn([proposal, human(reply)])).toBe(thursdayAt2);
  });

  it.each([
    'No, sorry.',
    "I can't, sorry",
    "That doesn't work for me",
    "I'm busy then",
    'Not Thursday',
    'Yes, but not Thursday',
    'Hmm, let me think about it',
    'Who is this?',
    'Good question.',
    'Great question, let me look at my calendar',
  ])('%j does not agree', (reply) => {
    expect(meetingIn([proposal, human(reply)])).toBeNull();
  });

  it.each([
    ['How about 11 instead?', '2026-03-05T16:00:00.000Z'],
    ['Could we do 4 instead?', '2026-03-05T21:00:00.000Z'],
    ['Can we make it 4?', '2026-03-05T21:00:00.000Z'],
    ['Friday would be better', '2026-03-06T19:00:00.000Z'],
    ['How about Friday instead?', '2026-03-06T19:00:00.000Z'],
    ['No, but Friday at 10 works', '2026-03-06T15:00:00.000Z'],
  ])('a counter-proposal %j takes what it leaves out from the proposal -> %s', (reply, expected) => {
    expect(meetingIn([proposal, human(reply)])).toBe(expected);
  });

  it('lets the human give the time for a day the agent asked about', () => {
    expect(meetingIn([agent('Can we meet Thursday?'), human('Yes, at 2pm')])).toBe(thursdayAt2);
    expect(meetingIn([agent('What time on Thursday suits you?'), human('Around 3')])).toBe('2026-03-05T20:00:00.000Z');
  });

  it('keeps the proposal until the human speaks, even across agent utterances', () => {
    expect(meetingIn([proposal, agent('It only takes twenty minutes.'), human('Okay')])).toBe(thursdayAt2);
  });

  it('drops the proposal once the human has answered something else', () => {
    expect(
      meetingIn([proposal, human('Who is this?'), agent('This is Ava from Acme.'), human('Oh, okay.')]),
    ).toBeNull();
  });

  it('gives a second agent proposal without a time the time of the first', () => {
    expect(meetingIn([proposal, agent('Or would Friday suit you better?'), human('Yes')])).toBe(
      '2026-03-06T19:00:00.000Z',
    );
  });

  it('does not read an agent statement as a proposal', () => {
    expect(meetingIn([agent('Our office opens at 9am.'), human('Okay.')])).toBeNull();
  });

  it('does not take a refused agent mention as the proposal', () => {
    const utterances = [agent("Monday at 10am isn't possible, but how about Tuesday at 11am?"), human('Sure')];
    expect(meetingIn(utterances)).toBe('2026-03-03T16:00:00.000Z');
  });

  it('ignores what the agent says when the human never agrees', () => {
    expect(meetingIn([agent('Would Thursday at 2pm suit you?'), agent('Great, see you Thursday at 2pm!')])).toBeNull();
  });
});

describe('findFixedMeetingTime: over a conversation', () => {
  it('takes the latest agreement', () => {
    const utterances = [human('Tuesday at 3pm works'), agent('Great.'), human('Actually, Wednesday at 10am is better')];
    expect(meetingIn(utterances)).toBe('2026-03-04T15:00:00.000Z');
  });

  it('takes a later agreement to an agent proposal over an earlier one', () => {
    const utterances = [
      agent('Would Thursday at 2pm suit you?'),
      human('Yes'),
      agent('Sorry, that slot has just gone. Would Friday at 9am work instead?'),
      human('Sure, that works'),
    ];
    expect(meetingIn(utterances)).toBe('2026-03-06T14:00:00.000Z');
  });

  it('withdraws an agreement the human later refuses', () => {
    const utterances = [human('Tuesday at 3pm works'), agent('Lovely.'), human("Sorry, I can't do Tuesday after all")];
    expect(meetingIn(utterances)).toBeNull();
  });

  it('keeps an agreement when another day is refused', () => {
    const utterances = [human('Tuesday at 3pm works'), agent('Lovely.'), human("I can't do Friday though")];
    expect(meetingIn(utterances)).toBe('2026-03-03T20:00:00.000Z');
  });

  it('reads a time alone against the day under discussion', () => {
    const utterances = [
      agent('Is Wednesday any good for you?'),
      human('Wednesday is good'),
      agent('What time?'),
      human('Say 11am'),
    ];
    expect(meetingIn(utterances)).toBe('2026-03-04T16:00:00.000Z');
  });

  it('is null for an empty conversation or one without times', () => {
    expect(meetingIn([])).toBeNull();
    expect(meetingIn([agent('Hello, is this John?'), human('Yes, speaking.'), agent('Thanks, goodbye.')])).toBeNull();
  });
});

describe('findFixedMeetingTime: time zones', () => {
  it.each([
    ['America/New_York', '2026-03-03T15:00:00.000Z'],
    ['Europe/Paris', '2026-03-03T09:00:00.000Z'],
    ['UTC', '2026-03-03T10:00:00.000Z'],
    ['Asia/Kolkata', '2026-03-03T04:30:00.000Z'],
    ['Asia/Kathmandu', '2026-03-03T04:15:00.000Z'],
    // 15:00 UTC is already 02:00 on Tuesday in Sydney, so "tomorrow" is Wednesday there
    ['Australia/Sydney', '2026-03-03T23:00:00.000Z'],
  ])('"Tomorrow at 10am works" in %s -> %s', (timeZone, expected) => {
    expect(meetingIn([human('Tomorrow at 10am works')], timeZone)).toBe(expected);
  });

  it('gives the same phrase different instants in New York and Paris', () => {
    const words = [agent('Would Thursday at 2pm suit you?'), human('Yes, that works')];
    const newYork = meetingIn(words, 'America/New_York');
    const paris = meetingIn(words, 'Europe/Paris');
    expect(newYork).toBe('2026-03-05T19:00:00.000Z');
    expect(paris).toBe('2026-03-05T13:00:00.000Z');
  });

  it('defaults to UTC', () => {
    expect(findFixedMeetingTime([human('Tomorrow at 10am works')], { callTime: MONDAY_CALL })).toBe(
      '2026-03-03T10:00:00.000Z',
    );
  });

  it.each([
    // New York springs forward on 8 March 2026: the call is in EST, the meeting in EDT
    ['America/New_York', '2026-03-06T15:00:00.000Z', '2026-03-09T13:00:00.000Z'],
    // Paris springs forward on 29 March 2026
    ['Europe/Paris', '2026-03-27T10:00:00.000Z', '2026-03-30T07:00:00.000Z'],
    // New York falls back on 1 November 2026: the call is in EDT, the meeting in EST
    ['America/New_York', '2026-10-30T14:00:00.000Z', '2026-11-02T14:00:00.000Z'],
    // Sydney leaves daylight saving on 5 April 2026
    ['Australia/Sydney', '2026-04-02T23:00:00.000Z', '2026-04-05T23:00:00.000Z'],
  ])('across a daylight-saving change in %s (call %s) "Monday at 9am works" -> %s', (timeZone, call, expected) => {
    expect(meetingIn([human('Monday at 9am works')], timeZone, new Date(call))).toBe(expected);
  });

  it('moves a time skipped by the spring-forward change forward by the gap', () => {
    const fridayCall = new Date('2026-03-06T15:00:00.000Z');
    expect(meetingIn([human('Sunday at 2:30 am works')], NEW_YORK, fridayCall)).toBe('2026-03-08T07:30:00.000Z');
  });

  it('keeps a zone named in the words', () => {
    expect(meetingIn([human('Friday at 3pm PST works')], 'Europe/Paris')).toBe('2026-03-06T23:00:00.000Z');
  });

  it('refuses an unknown time zone', () => {
    expect(() => meetingIn([human('Tomorrow at 10am works')], 'Mars/Olympus_Mons')).toThrow(RangeError);
  });

  it('refuses an invalid call time', () => {
    expect(() => findFixedMeetingTime([], { callTime: new Date('nonsense') })).toThrow(RangeError);
  });

  describe('whatever the zone of the machine', () => {
    const original = process.env.TZ;
    afterEach(() => {
      if (original === undefined) delete process.env.TZ;
      else process.env.TZ = original;
    });

    it.each(['Asia/Tokyo', 'America/Los_Angeles', 'Europe/London'])('gives the same answer with TZ=%s', (tz) => {
      process.env.TZ = tz;
      expect(meetingIn([human('Sure, next Monday 9 am')])).toBe('2026-03-09T13:00:00.000Z');
      expect(meetingIn([human('Tomorrow at 10am works')], 'Europe/Paris')).toBe('2026-03-03T09:00:00.000Z');
    });
  });
});

describe('findFixedMeetingTime: reviewed cases (call on Friday 6 March 2026, 10:00 New York)', () => {
  const FRIDAY_CALL = new Date('2026-03-06T15:00:00.000Z');
  const ask = agent('When would suit you for a call with our advisor?');

  it.each([
    ['Tomorrow morning at 7:30 works', '2026-03-07T12:30:00.000Z'],
    ['Tuesday morning at 7', '2026-03-10T11:00:00.000Z'],
    ['7:30 tomorrow morning', '2026-03-07T12:30:00.000Z'],
    ['Tuesday at 7', '2026-03-10T23:00:00.000Z'],
  ])('reads a bare hour said with "morning" as the morning: %j -> %s', (reply, expected) => {
    expect(meetingIn([ask, human(reply)], NEW_YORK, FRIDAY_CALL)).toBe(expected);
  });

  it.each(['Perhaps another time', "Maybe, I'll let you know", 'OK, just send me an email about it'])(
    'a put-off %j does not agree to the proposed time',
    (reply) => {
      const proposal = agent('Would Tuesday at 3pm work for a quick demo?');
      expect(meetingIn([proposal, human(reply)], NEW_YORK, FRIDAY_CALL)).toBeNull();
    },
  );

  it('takes back a time the same turn refuses', () => {
    const reply = human("Tuesday at 3pm? Hmm, no, that doesn't work for me");
    expect(meetingIn([agent('When would suit you?'), reply], NEW_YORK, FRIDAY_CALL)).toBeNull();
    expect(meetingIn([agent('When would suit you?'), human('Tuesday at 3pm? No.')], NEW_YORK, FRIDAY_CALL)).toBeNull();
  });

  it('keeps a time when a later clause refuses something else', () => {
    const reply = human("Tuesday at 3pm works, but I can't stay long");
    expect(meetingIn([agent('When would suit you?'), reply], NEW_YORK, FRIDAY_CALL)).toBe('2026-03-10T19:00:00.000Z');
  });
});

describe('findFixedMeetingTime: the agent offers more than one time', () => {
  const offer = agent('Would Tuesday at 3pm or Wednesday at 10am work better for you?');

  it.each([
    ['Tuesday works', '2026-03-03T20:00:00.000Z'],
    ['Wednesday please', '2026-03-04T15:00:00.000Z'],
    ['3pm please', '2026-03-03T20:00:00.000Z'],
    ['10am is better', '2026-03-04T15:00:00.000Z'],
  ])('completes %j from the offered slot on that day or at that time -> %s', (reply, expected) => {
    expect(meetingIn([offer, human(reply)])).toBe(expected);
  });

  it('takes the time of the last offer for a day none of them was on, as for a single one', () => {
    expect(meetingIn([offer, human('How about Thursday instead?')])).toBe('2026-03-05T15:00:00.000Z');
  });

  it('takes the zone of the offer whose day and time the answer names', () => {
    const zoned = agent('Would Tuesday at 3pm Eastern or Wednesday at 10am Pacific suit you?');
    expect(meetingIn([zoned, human('Tuesday at 3pm works')], 'Europe/London')).toBe('2026-03-03T20:00:00.000Z');
  });
});

describe('findFixedMeetingTime: a part of the day named against a proposal', () => {
  it.each(['Yes, but in the afternoon', 'The afternoon works better for me'])(
    '%j turns the proposed time down rather than agreeing to it',
    (reply) => {
      expect(meetingIn([agent('Would Tuesday at 10am work?'), human(reply)])).toBeNull();
    },
  );
});

describe('findFixedMeetingTime: a name chrono reads as a month', () => {
  it.each([
    [agent('Does tomorrow at 3pm work for you, April?'), human('Yes, perfect')],
    [agent('Would tomorrow at 3pm work for you?'), human('Yes. This is June.')],
  ])('keeps the time agreed: %j, %j', (proposal, reply) => {
    expect(meetingIn([proposal, reply])).toBe('2026-03-03T20:00:00.000Z');
  });
});

describe("findFixedMeetingTime: the emulator's conversations", () => {
  // What the demo's calls say (src/emulator/scenarios.ts), each meeting scenario with the time it fixes.
  const fixes: Record<string, string | null> = {
    'meeting-tuesday': '2026-03-03T20:00:00.000Z',
    'meeting-tomorrow': '2026-03-03T15:30:00.000Z',
    'meeting-next-monday': '2026-03-09T13:00:00.000Z',
    'long-greeting': '2026-03-03T20:00:00.000Z',
    'not-interested': null,
    'call-back-later': null,
    'send-email': null,
    'opt-out': null,
  };
  it.each(SCENARIOS.map((scenario) => [scenario.id, scenario] as const))('%s', (id, scenario) => {
    const said = [
      ...(scenario.greeting ? [human(scenario.greeting)] : []),
      ...scenario.turns.flatMap(([person, reply]) => [human(person), agent(reply)]),
    ];
    expect(Object.keys(fixes)).toContain(id);
    expect(meetingIn(said)).toBe(fixes[id]);
  });
});

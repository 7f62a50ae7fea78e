import { describe, expect, it } from 'vitest';
import { columnMeaning, fillResultValues, type ResultContext } from '../../../src/results/result-values';
import type { Utterance } from '../../../src/results/text';

const human = (text: string): Utterance => ({ speaker: 'human', text });
const agent = (text: string): Utterance => ({ speaker: 'agent', text });

function context(utterances: Utterance[], extra: Partial<ResultContext> = {}): ResultContext {
  return { utterances, customTagsHit: [], fixedMeetingTime: null, ...extra };
}

/** The value of one column. */
function value(column: string, ctx: ResultContext): string {
  const [entry] = fillResultValues([column], ctx);
  return entry.value;
}

describe('fillResultValues: shape', () => {
  it('gives exactly one entry per column, in template order, duplicates included', () => {
    const columns = ['summary', 'Meeting time', 'budget', 'summary', 'tags'];
    const values = fillResultValues(columns, context([human('Hi')]));
    expect(values.map((v) => v.columnName)).toEqual(columns);
  });

  it('gives nothing for a template without columns', () => {
    expect(fillResultValues([], context([human('Hi')]))).toEqual([]);
  });

  it('gives a string for every column, even with an empty transcript', () => {
    const columns = [
      'meetingTime',
      'interested',
      'callbackRequested',
      'email',
      'summary',
      'sentiment',
      'tags',
      'name',
      'duration',
      'budget',
    ];
    for (const entry of fillResultValues(columns, context([]))) expect(typeof entry.value).toBe('string');
  });
});

describe('columnMeaning: names are recognised whatever their case, spacing or accents', () => {
  it.each([
    ['meetingTime', 'meeting'],
    ['meeting time', 'meeting'],
    ['Meeting_Time', 'meeting'],
    ['MEETING-TIME', 'meeting'],
    ['fixedMeetingTime', 'meeting'],
    ['Appointment', 'meeting'],
    ['interested', 'interested'],
    ['Is Interested', 'interested'],
    ['callbackRequested', 'callback'],
    ['call back requested', 'callback'],
    ['Callback', 'callback'],
    ['email', 'email'],
    ['E-mail', 'email'],
    ['Email Address', 'email'],
    ['émail', 'email'],
    ['summary', 'summary'],
    ['Call Summary', 'summary'],
    ['sentiment', 'sentiment'],
    ['Mood', 'sentiment'],
    ['tags', 'tags'],
    ['custom_tags', 'tags'],
    ['name', 'name'],
    ['Name of human', 'name'],
    ['callDuration', 'duration'],
    ['budget', undefined],
    ['meeting notes', undefined],
  ])('%j -> %s', (column, meaning) => {
    expect(columnMeaning(column)).toBe(meaning);
  });
});

describe('meeting time column', () => {
  it.each(['meetingTime', 'meeting time', 'Appointment'])('%j is the agreed meeting time', (column) => {
    const ctx = context([human('Tuesday at 3pm works')], { fixedMeetingTime: '2026-03-03T20:00:00.000Z' });
    expect(value(column, ctx)).toBe('2026-03-03T20:00:00.000Z');
  });

  it('is empty without an agreed meeting', () => {
    expect(value('meetingTime', context([human('No thanks')]))).toBe('');
  });
});

describe('interested column', () => {
  it.each([
    [[human("Yes, I'm interested")], 'yes'],
    [[human('That sounds interesting, tell me more')], 'yes'],
    [[human('Sign me up!')], 'yes'],
    [[human("I'd like to hear more about it")], 'yes'],
    [[human("Sounds great, let's do it")], 'yes'],
    [[human("I'm not interested")], 'no'],
    [[human("I'm NOT really interested, sorry")], 'no'],
    [[human('No thanks')], 'no'],
    [[human('No, thank you.')], 'no'],
    [[human('Please remove me from your list')], 'no'],
    [[human("Don't call me again")], 'no'],
    [[human('Stop calling me')], 'no'],
    [[human("It's not for me")], 'no'],
    [[human("I'm not keen")], 'no'],
    // bare yes/no count only as an answer about interest
    [[agent('Would you be interested in a demo?'), human('Yes')], 'yes'],
    [[agent('Would you like to hear more?'), human('Yeah, sure')], 'yes'],
    [[agent('Would you be interested in a demo?'), human('No')], 'no'],
    [[agent('Would you be interested in a demo?'), human('Nope, not really')], 'no'],
    [[agent('Is this John?'), human('Yes')], 'unknown'],
    [[agent('Is this John?'), human('No')], 'unknown'],
    // the last signal wins
    [[human('Not interested'), agent('Not even for a free trial?'), human("Oh, well then I'm interested")], 'yes'],
    [[human("I'm interested"), agent('It costs 500 a month.'), human("Then I'm not interested")], 'no'],
    [[human('Hello?'), human('Who is this?')], 'unknown'],
    [[], 'unknown'],
    // a negation reaches within its clause only, and negates the positive phrases too
    [[human("No, no, I'm interested, go on")], 'yes'],
    [[human("I don't think I want that")], 'no'],
    [[human("I'm not too keen")], 'no'],
    [[human("Don't worry. I'd like to hear more")], 'yes'],
    [[human("Why don't you tell me more")], 'yes'],
    // a callee who opted out is not interested
    [[human('I want to unsubscribe.')], 'no'],
    [[agent('Would you like me to take you off our list?'), human('Yes please.')], 'no'],
  ])('%j -> %s', (utterances, expected) => {
    expect(value('interested', context(utterances))).toBe(expected);
  });

  it('is yes when a meeting was agreed and nothing else was said about interest', () => {
    const ctx = context([human('Tuesday at 3pm works')], { fixedMeetingTime: '2026-03-03T20:00:00.000Z' });
    expect(value('interested', ctx)).toBe('yes');
  });
});

describe('callbackRequested column', () => {
  it.each([
    [[human("I'm busy, can you call me back later?")], 'yes'],
    [[human('Call back tomorrow please')], 'yes'],
    [[human('Could you call-back next week?')], 'yes'],
    [[human('Try me again later')], 'yes'],
    [[human('Give me a call on Friday')], 'yes'],
    [[human('Ring me back in an hour')], 'yes'],
    [[human('Please get back to me next week')], 'yes'],
    [[agent('Shall I call you back later?'), human('Yes please')], 'yes'],
    [[agent('Would a callback tomorrow suit you?'), human('Sure')], 'yes'],
    [[agent('Shall I call you back later?'), human('No, no need')], 'no'],
    [[human("Don't call me back")], 'no'],
    [[human('Do not call me again')], 'no'],
    [[human('No need to call back, thanks')], 'no'],
    [[human('Call me back later'), agent('Of course.'), human("Actually, don't call me back, I'll email you")], 'no'],
    [[human('Tuesday at 3pm works')], 'no'],
    [[], 'no'],
    // declined in other words, or the callee will call
    [[human("You don't need to call me back.")], 'no'],
    [[human("I'll call back later.")], 'no'],
    [[human("I'll give you a call next week.")], 'no'],
    [[human("I can't talk now. Call me back tomorrow.")], 'yes'],
    // negations that ask or put off, not refuse
    [[human("Why don't you call me back tomorrow?")], 'yes'],
    [[human("Can't you call me back later?")], 'yes'],
    [[human('not now call me back later')], 'yes'],
    [[human("I'm ill, call me back next week")], 'yes'],
  ])('%j -> %s', (utterances, expected) => {
    expect(value('callbackRequested', context(utterances))).toBe(expected);
  });
});

describe('email column', () => {
  it.each([
    [[human('My email is john.smith@example.com')], 'john.smith@example.com'],
    [[human('Send it to John.Smith@Example.COM please.')], 'john.smith@example.com'],
    [[human('my email is john at example dot com')], 'john@example.com'],
    [[human('My e-mail is John at Example dot com.')], 'john@example.com'],
    [[human('email: john dot smith at example dot co dot uk')], 'john.smith@example.co.uk'],
    [[human('the address is mary underscore jones at mail dot example dot org')], 'mary_jones@mail.example.org'],
    [[human('email me at anne dash marie at example dot fr')], 'anne-marie@example.fr'],
    [[human('email? j o h n at gmail dot com')], 'john@gmail.com'],
    [[human('my email is jose99 at correo dot es')], 'jose99@correo.es'],
    [[human('My email is José at café dot com')], 'jose@cafe.com'],
    [[agent("What's your email address?"), human('It is peter at example dot com')], 'peter@example.com'],
    // corrections: the last address wins
    [[human('john@example.com'), human('sorry, my email is actually jsmith at example dot com')], 'jsmith@example.com'],
    // no address
    [[human('I work at acme dot com')], ''],
    [[human('Call me at 3 dot 30')], ''],
    [[human('meet me at the office')], ''],
    [[agent('Is your email john@example.com?'), human('Yes')], ''],
    [[], ''],
  ])('%j -> %j', (utterances, expected) => {
    expect(value('email', context(utterances))).toBe(expected);
  });
});

describe('sentiment column', () => {
  it.each([
    [[human('Great, thanks so much, that sounds perfect')], 'positive'],
    [[human("Yes, I'd love that")], 'positive'],
    [[human('No problem at all')], 'positive'],
    [[human('Not bad, actually')], 'positive'],
    [[human('This is a waste of my time, stop calling')], 'negative'],
    [[human('That is terrible and rude')], 'negative'],
    [[human('Not good, not good at all')], 'negative'],
    [[human('No thanks')], 'negative'],
    [[human("I'm not interested")], 'negative'],
    [[human('Hello? Who is this?')], 'neutral'],
    [[human('It is on Tuesday')], 'neutral'],
    [[agent('Great news, wonderful offer!'), human('Okay.')], 'neutral'],
    [[], 'neutral'],
    // a flip reaches within its clause only
    [[human("No, that's great!")], 'positive'],
    [[human('Not at all. Thanks, that is perfect')], 'positive'],
  ])('%j -> %s', (utterances, expected) => {
    expect(value('sentiment', context(utterances))).toBe(expected);
  });
});

describe('summary column', () => {
  it('states what the human agreed to and quotes them', () => {
    const ctx = context(
      [
        agent('Would Thursday at 2pm suit you?'),
        human('Yes, that works.'),
        agent('Great.'),
        human('My email is john at example dot com'),
      ],
      { fixedMeetingTime: '2026-03-05T19:00:00.000Z', nameOfHuman: 'John' },
    );
    expect(value('summary', ctx)).toBe(
      'John agreed to a meeting at 2026-03-05T19:00:00.000Z, gave the e-mail address john@example.com. ' +
        'Said: "Yes, that works. My email is john at example dot com"',
    );
  });

  it.each([
    [
      [human('Not interested, please remove me from your list')],
      'The callee is not interested. Said: "Not interested, please remove me from your list"',
    ],
    [
      [human('Busy now,\n call me back later')],
      'The callee asked to be called back. Said: "Busy now, call me back later"',
    ],
    [[human("Sounds good, I'm interested")], 'The callee is interested. Said: "Sounds good, I\'m interested"'],
    [[human('Hello?')], 'Said: "Hello?"'],
    [[agent('Hello, is anyone there?')], 'The callee did not speak.'],
    [[], 'The callee did not speak.'],
  ])('%j -> %j', (utterances, expected) => {
    expect(value('summary', context(utterances))).toBe(expected);
  });

  it('is one line, and shortens a long quote at a word', () => {
    const long = human(`${'word '.repeat(60)}\nand more\nlines`);
    const summary = value('summary', context([long]));
    expect(summary).not.toMatch(/\n/);
    expect(summary).toMatch(/^Said: "(word )+word…"$/);
    expect(summary.length).toBeLessThan(180);
  });
});

describe('tags, name and duration columns', () => {
  it.each([
    [['pricing', 'opt-out'], 'pricing, opt-out'],
    [['pricing'], 'pricing'],
    [[], ''],
  ])('tags %j -> %j', (tags, expected) => {
    expect(value('tags', context([], { customTagsHit: tags }))).toBe(expected);
  });

  it('gives the name of the human as given on the call', () => {
    expect(value('name', context([], { nameOfHuman: 'Zoë' }))).toBe('Zoë');
  });

  it('falls back to the answer to the agent asking for the name', () => {
    expect(value('name', context([agent('May I have your name?'), human('It is Ana.')]))).toBe('It is Ana.');
  });

  it.each([
    [42, '42'],
    [12.5, '12.5'],
    [0, '0'],
    [undefined, ''],
  ])('duration %s -> %j', (seconds, expected) => {
    expect(value('callDuration', context([], { callDurationSeconds: seconds }))).toBe(expected);
  });
});

describe('other columns: the human answer to the agent asking about it', () => {
  it.each([
    ['budget', [agent("What's your budget?"), human('About ten thousand.')], 'About ten thousand.'],
    ['Budget', [agent('And what BUDGET do you have in mind?'), human('Five k')], 'Five k'],
    ['budgetRange', [agent('What budget range are you considering?'), human('Between 5 and 10k')], 'Between 5 and 10k'],
    ['preferred_contact_method', [agent('What is your preferred contact method?'), human('Text me')], 'Text me'],
    [
      'company size',
      [agent('How big is your company? What size, roughly?'), human('Around 50 people')],
      'Around 50 people',
    ],
    ['employees', [agent('How many employees do you have?'), human('Twelve.')], 'Twelve.'],
    ['employee', [agent('How many employees do you have?'), human('Twelve.')], 'Twelve.'],
    ['Café', [agent('Which cafe do you run?'), human('The one on Main Street')], 'The one on Main Street'],
    // all the human says before the agent speaks again
    [
      'budget',
      [agent("What's your budget?"), human('Hmm.'), human('Maybe 5k.'), agent('Thanks.'), human('Bye')],
      'Hmm. Maybe 5k.',
    ],
    // a question is preferred over a statement mentioning the same words
    ['budget', [agent('We fit any budget.'), human('Great.'), agent('What budget do you have?'), human('3k')], '3k'],
    // the first question wins over a later confirmation
    [
      'budget',
      [agent("What's your budget?"), human('About 3k'), agent('So your budget is 3k?'), human('Yes')],
      'About 3k',
    ],
    // not asked, or not answered
    ['budget', [agent('Hello, is this John?'), human('Yes')], ''],
    ['budget', [human('My budget is 3k')], ''],
    ['budget', [agent("What's your budget?")], ''],
    ['budget', [agent("What's your budget?"), agent('Hello?')], ''],
    ['the', [agent('What is the plan?'), human('None')], ''],
  ])('%j in %j -> %j', (column, utterances, expected) => {
    expect(value(column, context(utterances))).toBe(expected);
  });
});

describe('reviewed cases', () => {
  it.each(["I wouldn't be interested", "I don't think I'm interested", 'Never been interested'])(
    'a negation before "interested" is a no: %j',
    (reply) => {
      expect(value('interested', context([agent('Hello, this is Ada.'), human(reply)]))).toBe('no');
    },
  );

  it.each(['Absolutely not', 'Not at all'])('%j to "are you interested?" is a no', (reply) => {
    expect(value('interested', context([agent('Are you interested in a free check-up?'), human(reply)]))).toBe('no');
  });

  it('no callback for a callee who says never to call again', () => {
    const ctx = context([agent('Hello, this is Ada.'), human('Never call me again.')]);
    expect(value('callbackRequested', ctx)).toBe('no');
    expect(value('summary', ctx)).not.toContain('asked to be called back');
  });

  it('answers a custom column from the question that names it, not from an earlier statement', () => {
    const utterances = [
      agent('Hi, this is Ada from Budget Helpers. We help families stick to a budget. Is now a good time?'),
      human('Sure, go ahead.'),
      agent('What is your monthly budget?'),
      human('About two thousand dollars.'),
    ];
    expect(value('budget', context(utterances))).toBe('About two thousand dollars.');
  });
});

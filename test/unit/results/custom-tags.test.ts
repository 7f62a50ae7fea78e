import { describe, expect, it } from 'vitest';
import { findCustomTagsHit } from '../../../src/results/custom-tags';
import type { Utterance } from '../../../src/results/text';

const human = (text: string): Utterance => ({ speaker: 'human', text });
const agent = (text: string): Utterance => ({ speaker: 'agent', text });

describe('findCustomTagsHit: one phrase against one utterance', () => {
  it.each([
    // case
    ['call back', 'Call back later!', true],
    ['CALL BACK', 'please call back', true],
    ['pricing', 'What about PRICING?', true],
    // accents, either side
    ['José', 'is jose there?', true],
    ['jose', 'Is José there?', true],
    ['café', 'meet at the CAFE', true],
    ['CAFE', 'meet at the café', true],
    ['résumé', 'send your RESUME', true],
    ['naïve', 'that is naive', true],
    ['Zürich', 'our Zurich office', true],
    ['straße', 'the main strasse', true],
    // whole words
    ['cat', 'which category is it?', false],
    ['cat', 'my cat, Tom', true],
    ['price', 'the prices went up', false],
    ['price', 'the price went up', true],
    ['call back', 'recall backups', false],
    ['back', 'callback', false],
    // punctuation and spacing between words
    ['call back', 'call-back please', true],
    ['call back', 'call... back', true],
    ['call back', 'call   back', true],
    ['call-back', 'I will call back', true],
    ['call back', 'callback', false],
    ['not interested', "I'm not, interested", true],
    ["don't call", 'dont call me', true],
    ['dont call', 'Don’t call me', true],
    ['e-mail', 'send an e mail', true],
    ['24/7', 'support 24 7', true],
    // punctuation next to the phrase
    ['budget', '(budget)', true],
    ['budget', '"Budget?"', true],
    // word order matters
    ['call back', 'back call', false],
    // empty and punctuation-only phrases never match
    ['', 'anything at all', false],
    ['  ', 'anything at all', false],
    ['!!', 'wow!!', false],
    // unspaced scripts match by characters
    ['会議', '明日の会議はどうですか', true],
    ['会議', '明日の会談はどうですか', false],
  ])('%j in %j: %s', (phrase, text, hit) => {
    const tags = [{ name: 'tag', triggerPhrases: [phrase] }];
    expect(findCustomTagsHit(tags, [human(text)])).toEqual(hit ? ['tag'] : []);
  });
});

describe('findCustomTagsHit: tags and transcripts', () => {
  const transcript = [
    agent('Hello, I am calling from Acme about our pricing.'),
    human('Not interested. Please remove me from your list.'),
    agent('Understood, sorry to bother you.'),
  ];

  it('hits a tag whoever spoke its phrase', () => {
    const tags = [
      { name: 'pricing', triggerPhrases: ['pricing'] },
      { name: 'opt-out', triggerPhrases: ['remove me'] },
      { name: 'apology', triggerPhrases: ['sorry'] },
    ];
    expect(findCustomTagsHit(tags, transcript)).toEqual(['pricing', 'opt-out', 'apology']);
  });

  it('returns tags in template order, not in spoken order', () => {
    const tags = [
      { name: 'apology', triggerPhrases: ['sorry'] },
      { name: 'pricing', triggerPhrases: ['pricing'] },
    ];
    expect(findCustomTagsHit(tags, transcript)).toEqual(['apology', 'pricing']);
  });

  it('hits a tag when any one of its phrases occurs', () => {
    const tags = [{ name: 'negative', triggerPhrases: ['no way', 'not interested', 'stop calling'] }];
    expect(findCustomTagsHit(tags, transcript)).toEqual(['negative']);
  });

  it('names each tag once, even when several phrases or a repeated name hit', () => {
    const tags = [
      { name: 'negative', triggerPhrases: ['not interested', 'remove me'] },
      { name: 'negative', triggerPhrases: ['sorry'] },
    ];
    expect(findCustomTagsHit(tags, transcript)).toEqual(['negative']);
  });

  it('does not join words across utterances', () => {
    const tags = [{ name: 'x', triggerPhrases: ['list understood'] }];
    expect(findCustomTagsHit(tags, transcript)).toEqual([]);
  });

  it.each([
    ['no tags', [], transcript, []],
    ['no utterances', [{ name: 'pricing', triggerPhrases: ['pricing'] }], [], []],
    ['a tag without phrases', [{ name: 'pricing', triggerPhrases: [] }], transcript, []],
  ])('%s: nothing is hit', (_label, tags, utterances, expected) => {
    expect(findCustomTagsHit(tags, utterances)).toEqual(expected);
  });
});

describe('findCustomTagsHit: scripts written without spaces', () => {
  it.each([
    ['สนใจ', 'ผมสนใจครับ'], // Thai
    ['ສົນໃຈ', 'ຂ້ອຍສົນໃຈຫຼາຍ'], // Lao
    ['ចាប់អារម្មណ៍', 'ខ្ញុំចាប់អារម្មណ៍ណាស់'], // Khmer
    ['စိတ်ဝင်စား', 'ကျွန်တော်စိတ်ဝင်စားပါတယ်'], // Burmese
  ])('finds %j inside %j', (phrase, text) => {
    expect(findCustomTagsHit([{ name: 'interested', triggerPhrases: [phrase] }], [human(text)])).toEqual([
      'interested',
    ]);
  });
});

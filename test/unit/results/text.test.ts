import { describe, expect, it } from 'vitest';
import { containsSequence, foldText, tokenize } from '../../../src/results/text';

describe('foldText', () => {
  it.each([
    ['José', 'jose'],
    ['CAFÉ', 'cafe'],
    ['Crème Brûlée', 'creme brulee'],
    ['Ångström', 'angstrom'],
    ['Straße', 'strasse'],
    ['Øresund', 'oresund'],
    ['Łódź', 'lodz'],
    ['ÆON', 'aeon'],
    ['İstanbul', 'istanbul'],
    ['ΆΘΗΝΑ', 'αθηνα'],
    ['ＦＵＬＬ ｗｉｄｔｈ', 'full width'],
    ['ﬁnance', 'finance'],
    ['don’t', "don't"],
  ])('%j -> %j', (text, folded) => {
    expect(foldText(text)).toBe(folded);
  });

  it('keeps the vowel signs other scripts are spelled with', () => {
    expect(foldText('नमस्ते')).toBe('नमस्ते');
  });
});

describe('tokenize', () => {
  it.each([
    ['Call back later!', ['call', 'back', 'later']],
    ['call-back', ['call', 'back']],
    ['  call,\tback ', ['call', 'back']],
    ["Don't worry, it's fine", ['dont', 'worry', 'its', 'fine']],
    ['O’Brien', ['obrien']],
    ['24/7 support', ['24', '7', 'support']],
    ['会議を予約', ['会', '議', 'を', '予', '約']],
    ['', []],
    ['?!', []],
  ])('%j -> %j', (text, tokens) => {
    expect(tokenize(text)).toEqual(tokens);
  });
});

describe('containsSequence', () => {
  it.each([
    [['a', 'b', 'c'], ['b', 'c'], true],
    [['a', 'b', 'c'], ['a', 'c'], false],
    [['a'], ['a', 'b'], false],
    [['a', 'b'], [], false],
  ])('%j contains %j: %s', (tokens, phrase, expected) => {
    expect(containsSequence(tokens, phrase)).toBe(expected);
  });
});

import { describe, expect, it } from 'vitest';
import rawCatalogue from '../../../src/voices/catalogue.json';
import { VOICE_CATALOGUE, findVoice, parseVoiceCatalogue } from '../../../src/voices/catalogue';

const valid = {
  id: 1,
  voiceName: 'Ava',
  gender: 'female',
  isRecommended: true,
  language: 'en-US',
  espeakVoice: 'en-us+f3',
  sampleText: 'Hello, this is Ava.',
};

/** A catalogue of twelve valid, distinct voices, with `change` applied to the first. */
function catalogueWith(change: Record<string, unknown>): unknown[] {
  const variants = ['f1', 'f2', 'f3', 'f4', 'f5', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'];
  return variants.map((variant, i) => ({
    ...valid,
    id: i + 1,
    voiceName: `Voice ${i + 1}`,
    espeakVoice: `en-us+${variant}`,
    ...(i === 0 ? change : {}),
  }));
}

describe('VOICE_CATALOGUE', () => {
  it('holds at least a dozen voices (decisions.md asks for a dozen; we ship 14 or more)', () => {
    expect(VOICE_CATALOGUE.length).toBeGreaterThanOrEqual(14);
  });

  it('is the data file, validated', () => {
    expect(VOICE_CATALOGUE).toEqual(rawCatalogue);
  });

  it('gives every voice a distinct id, name and espeak-ng voice, so each sounds different', () => {
    for (const key of ['id', 'voiceName', 'espeakVoice'] as const) {
      expect(new Set(VOICE_CATALOGUE.map((v) => v[key])).size).toBe(VOICE_CATALOGUE.length);
    }
  });

  it('keeps the letter case of gender as given, which varies between records', () => {
    const genders = new Set(VOICE_CATALOGUE.map((v) => v.gender));
    expect(genders.size).toBeGreaterThan(2);
    expect(new Set([...genders].map((g) => g.toLowerCase()))).toEqual(new Set(['female', 'male']));
  });

  it('recommends some voices and not others', () => {
    const recommended = VOICE_CATALOGUE.filter((v) => v.isRecommended).length;
    expect(recommended).toBeGreaterThan(0);
    expect(recommended).toBeLessThan(VOICE_CATALOGUE.length);
  });

  it('speaks several languages, each voice with an espeak-ng voice of its own language', () => {
    expect(new Set(VOICE_CATALOGUE.map((v) => v.language.split('-')[0])).size).toBeGreaterThanOrEqual(4);
    for (const v of VOICE_CATALOGUE) {
      expect(v.espeakVoice.split(/[-+]/)[0]).toBe(v.language.split('-')[0].toLowerCase());
    }
  });

  it('cannot be changed by a caller', () => {
    expect(Object.isFrozen(VOICE_CATALOGUE)).toBe(true);
  });

  it.each(VOICE_CATALOGUE.map((v) => [v.id, v.voiceName, v.espeakVoice] as const))(
    'voice %i (%s) uses an espeak-ng voice with a variant: %s',
    (_id, _name, espeakVoice) => {
      expect(espeakVoice).toMatch(/^[a-z]{2,3}(-[a-z0-9]+)*\+[a-z]+\d*$/);
    },
  );
});

describe('findVoice', () => {
  it('finds a voice by id', () => {
    expect(findVoice(VOICE_CATALOGUE[0].id)).toBe(VOICE_CATALOGUE[0]);
  });

  it('is undefined for an unknown id', () => {
    expect(findVoice(9999)).toBeUndefined();
  });
});

describe('parseVoiceCatalogue', () => {
  it('accepts a valid catalogue, gender in any case', () => {
    expect(parseVoiceCatalogue(catalogueWith({ gender: 'FeMaLe' }))).toHaveLength(12);
    expect(parseVoiceCatalogue(catalogueWith({ gender: 'Neutral' }))).toHaveLength(12);
  });

  it.each([
    ['a missing field', { sampleText: undefined }, /0\.sampleText/],
    ['an unknown field', { pitch: 3 }, /pitch/],
    ['a fractional id', { id: 1.5 }, /0\.id/],
    ['a negative id', { id: -1 }, /0\.id/],
    ['an empty name', { voiceName: '  ' }, /0\.voiceName/],
    ['an unknown gender', { gender: 'robot' }, /0\.gender: gender must be one of female, male, neutral/],
    ['a non-boolean isRecommended', { isRecommended: 'yes' }, /0\.isRecommended/],
    ['a language that is not BCP 47', { language: 'english!' }, /0\.language: language must be a BCP 47 tag/],
    ['an espeak voice without a variant', { espeakVoice: 'en-us' }, /0\.espeakVoice/],
    [
      'an espeak voice in another language',
      { espeakVoice: 'fr-fr+f1' },
      /0\.espeakVoice: espeakVoice must speak the language/,
    ],
    ['a duplicate id', { id: 2 }, /1\.id: duplicate id 2/],
    ['a duplicate name', { voiceName: 'Voice 2' }, /1\.voiceName: duplicate voiceName/],
    ['a duplicate espeak voice', { espeakVoice: 'en-us+f2' }, /1\.espeakVoice: duplicate espeakVoice/],
  ])('refuses %s', (_label, change, message) => {
    expect(() => parseVoiceCatalogue(catalogueWith(change))).toThrow(message);
  });

  it('refuses fewer than twelve voices', () => {
    expect(() => parseVoiceCatalogue(catalogueWith({}).slice(0, 11))).toThrow(/invalid voice catalogue/);
  });

  it('refuses something that is not a list', () => {
    expect(() => parseVoiceCatalogue({ voices: [] })).toThrow(/invalid voice catalogue/);
  });

  it('lists every problem, not only the first', () => {
    const data = catalogueWith({ gender: 'robot', language: '!!' });
    expect(() => parseVoiceCatalogue(data)).toThrow(/gender.*language|language.*gender/);
  });
});

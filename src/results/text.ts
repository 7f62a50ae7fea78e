// Text folding and word splitting shared by the result rules, so that "case- and
// accent-insensitive, whole words" means the same thing for tags, meeting times and columns.

export type Speaker = 'agent' | 'human';

export interface Utterance {
  speaker: Speaker;
  text: string;
}

// The Combining Diacritical Marks blocks only: stripping every \p{M} would also delete the vowel
// signs that Devanagari, Thai or Arabic words are spelled with, turning different words into one.
// eslint-disable-next-line no-misleading-character-class -- ranges of combining marks, one code point at a time on purpose
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;

// Letters whose stroke or ligature is part of the code point, so decomposition leaves them whole.
const UNDECOMPOSABLE: Readonly<Record<string, string>> = {
  ø: 'o',
  đ: 'd',
  ł: 'l',
  ħ: 'h',
  ŧ: 't',
  ı: 'i',
  æ: 'ae',
  œ: 'oe',
  ß: 'ss',
  þ: 'th',
  ð: 'd',
};
const UNDECOMPOSABLE_PATTERN = new RegExp(`[${Object.keys(UNDECOMPOSABLE).join('')}]`, 'g');

const APOSTROPHES = /[\u2018\u2019\u02bc\u2032`´]/g;

/**
 * Lower-cases and removes accents: "José" -> "jose", "CAFÉ" -> "cafe", "Straße" -> "strasse".
 * NFKD rather than NFD so that ligatures and full-width letters ("ﬁ", "ＡＢＣ") fold as well.
 */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .toLowerCase()
    .replace(DIACRITICS, '')
    .replace(UNDECOMPOSABLE_PATTERN, (c) => UNDECOMPOSABLE[c] ?? c)
    .replace(APOSTROPHES, "'")
    .normalize('NFC');
}

// Chinese, Japanese, Thai, Lao, Khmer and Burmese are written without spaces between words: each
// character (vowel signs and tone marks included) is its own token, so a phrase matches inside a sentence.
const UNSPACED_SCRIPT_CHAR =
  /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}])/gu;
// A word is a run of letters, digits and the marks that belong to them; an apostrophe inside it
// ("don't", "o'clock") is dropped rather than splitting it, so "don't" and "dont" are one word.
const WORD = /[\p{L}\p{N}\p{M}]+(?:'[\p{L}\p{N}\p{M}]+)*/gu;

/** Folded words of `text`; every other character (spaces, hyphens, punctuation) only separates. */
export function tokenize(text: string): string[] {
  const spaced = foldText(text).replace(UNSPACED_SCRIPT_CHAR, ' $1 ');
  return Array.from(spaced.matchAll(WORD), (m) => m[0].replace(/'/g, ''));
}

/** Whether `phrase` occurs in `tokens` as consecutive whole words. */
export function containsSequence(tokens: readonly string[], phrase: readonly string[]): boolean {
  if (phrase.length === 0 || phrase.length > tokens.length) return false;
  outer: for (let i = 0; i + phrase.length <= tokens.length; i++) {
    for (let j = 0; j < phrase.length; j++) {
      if (tokens[i + j] !== phrase[j]) continue outer;
    }
    return true;
  }
  return false;
}

/** A list of phrases, tokenized once, that can be looked for in tokenized text. */
export class PhraseSet {
  private readonly phrases: string[][];

  constructor(phrases: readonly string[]) {
    this.phrases = phrases.map(tokenize).filter((p) => p.length > 0);
  }

  matches(tokens: readonly string[]): boolean {
    return this.phrases.some((p) => containsSequence(tokens, p));
  }

  /** Where in `tokens` a phrase of the set starts, each place once, in order. */
  startsIn(tokens: readonly string[]): number[] {
    const starts = new Set<number>();
    for (const p of this.phrases) {
      for (let i = 0; i + p.length <= tokens.length; i++) {
        if (p.every((word, j) => tokens[i + j] === word)) starts.add(i);
      }
    }
    return [...starts].sort((a, b) => a - b);
  }
}

// Punctuation and dashes between words end a clause: "No, no, I'm interested" has no "no" before
// "interested" in its clause. (Speech recognition's punctuation is all there is to go by.)
const CLAUSE_PUNCTUATION = /[.!?;,:]+|\s[-\u2013\u2014]+\s/u;

/** The folded words of each clause of `text`, clauses split at punctuation. */
export function clauseTokens(text: string): string[][] {
  return text
    .split(CLAUSE_PUNCTUATION)
    .map(tokenize)
    .filter((clause) => clause.length > 0);
}

/**
 * `tokens` with each occurrence of one of `phrases` replaced by a placeholder that matches no phrase:
 * one for the whole phrase, or with `keepPositions` one per word (for a rule that counts words back).
 */
export function withoutPhrases(
  tokens: readonly string[],
  phrases: readonly (readonly string[])[],
  keepPositions = false,
): string[] {
  const out = [...tokens];
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= out.length; i++) {
      if (!phrase.every((word, j) => out[i + j] === word)) continue;
      if (keepPositions) out.fill('_', i, i + phrase.length);
      else out.splice(i, phrase.length, '_');
    }
  }
  return out;
}

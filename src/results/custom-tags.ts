// Which of a call template's custom tags the conversation hit (decisions.md: "a custom tag is hit
// when its trigger phrase occurs anywhere in the transcript, whoever spoke it").
//
// Matching rules:
// - Case- and accent-insensitive: both sides go through foldText ("José" = "jose", "CAFÉ" = "café").
// - Whole words: the phrase must occur as consecutive whole words, so 'cat' does not hit "category"
//   and 'call back' hits "Call back later!".
// - Whitespace and punctuation between words do not matter: any run of them separates two words, so
//   'call back' matches "call-back", "call, back" and "call   back". Words joined without a
//   separator are one word: 'call back' does not match "callback" (that is a different word, and a
//   template that wants both lists both). An apostrophe inside a word is ignored ("don't" = "dont").
// - A phrase must occur within one utterance: words that end one speaker's turn and start the next
//   were never said together.
// - A phrase with no words in it (empty, or only punctuation) never matches.
// - Chinese and Japanese characters count as one word each, so such phrases match as substrings.
import { containsSequence, tokenize, type Utterance } from './text';

export interface CustomTag {
  name: string;
  triggerPhrases: string[];
}

/** Names of the tags hit, in template order, each once. */
export function findCustomTagsHit(
  tags: readonly CustomTag[],
  utterances: readonly Pick<Utterance, 'speaker' | 'text'>[],
): string[] {
  const spoken = utterances.map((u) => tokenize(u.text));
  const hit: string[] = [];
  for (const tag of tags) {
    if (hit.includes(tag.name)) continue;
    const isHit = tag.triggerPhrases.some((phrase) => {
      const words = tokenize(phrase);
      return spoken.some((tokens) => containsSequence(tokens, words));
    });
    if (isHit) hit.push(tag.name);
  }
  return hit;
}

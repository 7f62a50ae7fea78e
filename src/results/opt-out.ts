// Whether the callee asked not to be called again: the call then puts its number on the team's
// do-not-call list (activities/capture.ts) and shows the tag OPT_OUT_TAG in customTagsHitOnCall.
//
// Rules (deterministic words, as the other results):
// - Only the human's words count; the agent saying "we'll take you off our list" is not a request.
// - A request is an opt-out phrase ("stop calling me", "take me off your list", "don't call again",
//   "put me on your do not call list", "remove my number", "unsubscribe", ...) in a clause of a
//   human utterance (clauses split at . ! ? ; , and at "but", "and", "so", "just"), unless a negation stands before it
//   in that clause: "I didn't say stop calling", "you don't need to take me off your list", "no
//   need to remove me", "I'm not asking you to stop calling". The phrase's own "don't" ("don't call
//   again") is part of it, not a negation of it, and a lone "no" before it answers the agent
//   ("No, don't call me again" opts out).
// - A "yes" answering the agent's offer to stop ("Would you like us to stop calling you?",
//   "Shall I remove you from our list?") is a request too; "no" is not.
// - "Don't call me back" alone (a callback declined) and "don't call me at work" are not requests:
//   the phrases say "again", "anymore", "ever", a list, or stopping, outright.
import { PhraseSet, containsSequence, tokenize, type Utterance } from './text';

export const OPT_OUT_TAG = 'optOut';

const OPT_OUT = [
  'stop calling',
  'stop ringing',
  'quit calling',
  'stop contacting',
  "don't call again",
  "don't call me again",
  "don't call us again",
  "don't ever call",
  "don't call me ever",
  "don't call anymore",
  "don't call me anymore",
  "don't call any more",
  "don't call me any more",
  'do not call again',
  'do not call me again',
  'do not call me anymore',
  'do not call me any more',
  'do not call list',
  'never call me again',
  'never call again',
  'never call here again',
  'no more calls',
  'take me off',
  'take my number off',
  'remove me from',
  'remove my number',
  'delete my number',
  'put me on your do not call',
  'add me to your do not call',
  'unsubscribe',
  'opt out',
  'lose my number',
].map(tokenize);

// Words that, before the phrase in its clause, say the callee is not asking for it.
const NEGATIONS = new PhraseSet([
  'not',
  'never',
  "don't",
  'do not',
  "didn't",
  'did not',
  "doesn't",
  "won't",
  "wouldn't",
  "isn't",
  "aren't",
  "wasn't",
  'no need',
  'nobody',
  'without',
]);

const OFFERS_TO_STOP = new PhraseSet([
  'stop calling you',
  'take you off',
  'remove you from',
  'remove your number',
  'do not call list',
  "don't call you again",
  'not call you again',
  'no more calls',
  'opt out',
  'unsubscribe',
]);
const YES = new PhraseSet(['yes', 'yeah', 'yep', 'please', 'sure', 'absolutely', 'definitely', 'please do']);
const NO = new PhraseSet(['no', 'nope', 'nah', 'not really', 'no thanks']);

const CLAUSE_BREAK =
  /[.!?;,]+|\s[-\u2013\u2014]+\s|(?<![\p{L}\p{N}])(?:but|however|although|though|and|so|just)(?![\p{L}\p{N}])/giu;

/** Where `phrase` starts in `tokens`, or -1. */
function indexOfSequence(tokens: readonly string[], phrase: readonly string[]): number {
  for (let i = 0; i + phrase.length <= tokens.length; i++) {
    if (phrase.every((word, j) => tokens[i + j] === word)) return i;
  }
  return -1;
}

function clauseAsks(clause: string): boolean {
  const tokens = tokenize(clause);
  return OPT_OUT.some((phrase) => {
    const at = indexOfSequence(tokens, phrase);
    return at >= 0 && !NEGATIONS.matches(tokens.slice(0, at));
  });
}

/** Whether the human asked, anywhere in the call, not to be called again. */
export function askedNotToBeCalled(utterances: readonly Pick<Utterance, 'speaker' | 'text'>[]): boolean {
  let offer = false;
  for (const u of utterances) {
    if (u.speaker === 'agent') {
      offer = OFFERS_TO_STOP.matches(tokenize(u.text));
      continue;
    }
    if (u.text.split(CLAUSE_BREAK).some(clauseAsks)) return true;
    if (offer) {
      const opening = tokenize(u.text).slice(0, 3);
      if (YES.matches(opening) && !NO.matches(opening) && !containsSequence(opening, ['no', 'problem'])) return true;
    }
    offer = false;
  }
  return false;
}

// Whether the callee asked not to be called again: the call then puts its number on the team's
// do-not-call list (activities/capture.ts) and shows the tag OPT_OUT_TAG in customTagsHitOnCall.
//
// Rules (deterministic words, as the other results):
// - Only the human's words count; the agent saying "we'll take you off our list" is not a request.
// - A request is an opt-out phrase ("stop calling me", "take me off your list", "don't call again",
//   "don't contact this number anymore", "I asked you not to call me again", "put me on your do not
//   call list", "remove my number", "unsubscribe", ...) in a clause of a
//   human utterance (clauses split at . ! ? ; , and at "but", "and", "so", "just"), unless a negation stands before it
//   in that clause: "I didn't say stop calling", "you don't need to take me off your list", "no
//   need to remove me", "I'm not asking you to stop calling". The phrase's own "don't" ("don't call
//   again") is part of it, not a negation of it, and a lone "no" before it answers the agent
//   ("No, don't call me again" opts out); nor is "not interested" a negation ("I'm not interested
//   stop calling me"). "do not" is read as "don't", and "ever" is skipped ("Do not ever call me again").
// - "take me off" counts only with a list ("take me off your list", not "take me off the Tuesday slot"),
//   and "remove me from" only with where numbers are kept, or nothing after it ("remove me from your
//   calling list", "from the system", "from this"; not "remove me from the meeting invite").
// - A "yes" answering the agent's offer to stop, when that offer is the agent's last question
//   ("Would you like us to stop calling you?", "Shall I remove you from our list?"), is a request
//   too; "no", "please don't" and a yes to a later question ("You can opt out at any time. Would
//   you like a check-up?") are not.
// - "Why don't you stop calling me?" and "If you don't stop calling me…" ask it: their "don't" is no
//   negation of the request. Nor is the "don't" of "I don't want you to call me again".
// - "Don't call me back" alone (a callback declined) and "don't call me at work" are not requests:
//   the phrases say "again", "anymore", "ever", a list, or stopping, outright.
import { PhraseSet, containsSequence, tokenize, withoutPhrases, type Utterance } from './text';

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
  "don't call this number again",
  "don't call my number again",
  "don't call here again",
  'never call this number again',
  'do not call again',
  'do not call me again',
  'do not call me anymore',
  'do not call me any more',
  'do not call list',
  'never call me again',
  'never call again',
  'never call here again',
  'no more calls',
  ...['your', 'the', 'this'].flatMap((which) =>
    ['', 'calling ', 'call ', 'mailing '].map((kind) => `take me off ${which} ${kind}list`),
  ),
  'take my number off',
  'remove my number',
  'delete my number',
  'put me on your do not call',
  'add me to your do not call',
  'unsubscribe',
  'opt out',
  'lose my number',
  'remove this number',
  'delete this number',
  'take this number off',
  // "Don't call this number anymore", "don't contact me again", "I asked you not to call me again":
  // a call or contact, to whom or where, then "again" or "anymore" outright. Told to "you" only ("I
  // told him not to call here again" is about someone else), and naming whom but for "call" ("the
  // phones don't ring anymore" asks nothing).
  ...['call', 'contact', 'ring', 'phone'].flatMap((verb) =>
    [...(verb === 'call' ? [''] : []), 'me ', 'us ', 'this number ', 'my number ', 'here '].flatMap((whom) =>
      ['again', 'anymore', 'any more'].flatMap((again) => [
        `don't ${verb} ${whom}${again}`,
        `you not to ${verb} ${whom}${again}`,
      ]),
    ),
  ),
  "don't want any more calls",
  "don't want anymore calls",
  "don't want more calls",
  // "I don't want you to call me again", "I don't want to be contacted anymore".
  ...['call', 'contact', 'ring', 'phone'].flatMap((verb) =>
    ['', 'me ', 'us ', 'this number ', 'my number ', 'here '].flatMap((whom) =>
      ['again', 'anymore', 'any more'].map((again) => `don't want you to ${verb} ${whom}${again}`),
    ),
  ),
  ...['called', 'contacted', 'rung', 'phoned'].flatMap((done) =>
    ['again', 'anymore', 'any more'].map((again) => `don't want to be ${done} ${again}`),
  ),
].map((phrase) => normalized(tokenize(phrase)));

// "remove me from" asks to stop only when what follows is where the caller keeps numbers ("remove me
// from all your lists", "from the system", "from future calls") or nothing more ("remove me from
// this"); not "remove me from the meeting invite". Looked for within a few words after it.
const REMOVE_FROM = normalized(tokenize('remove me from'));
const REMOVE_FROM_WHERE = new Set([
  'list',
  'lists',
  'database',
  'system',
  'records',
  'contacts',
  'calls',
  'number',
  'numbers',
  'directory',
  'dialer',
  'register',
]);
const REMOVE_FROM_THIS = new Set(['this', 'it', 'that', 'there', 'here']);
const REMOVE_FROM_REACH = 5;

/** Where "remove me from" asks to stop calling in `words`, or -1. */
function indexOfRemoveFrom(words: readonly string[]): number {
  const at = indexOfSequence(words, REMOVE_FROM);
  if (at < 0) return -1;
  const after = words.slice(at + REMOVE_FROM.length);
  if (after.slice(0, REMOVE_FROM_REACH).some((word) => REMOVE_FROM_WHERE.has(word))) return at;
  const rest = after.filter((word) => word !== 'please');
  return rest.length === 0 || (rest.length === 1 && REMOVE_FROM_THIS.has(rest[0]!)) ? at : -1;
}

// Phrases built from negation words that do not negate a request after them: "I'm not interested
// stop calling me" (speech recognition leaves out the comma) is a request, and so are "Why don't you
// stop calling me?" and "If you don't stop calling me I'll report you".
const NOT_NEGATIONS = [
  'not interested',
  'no thanks',
  'no thank you',
  'not now',
  'not today',
  'not a good time',
  "why don't you",
  "if you don't",
].map((phrase) => normalized(tokenize(phrase)));

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

// Looked for in the agent's last question only, in words normalized as the requests are.
const OFFERS_TO_STOP = new PhraseSet([
  'stop calling you',
  'take you off',
  'remove you from',
  'remove your number',
  "don't call list",
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

/** "do not" as "don't", so that each phrase covers both spellings. */
function normalized(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    if (token === 'not' && out[out.length - 1] === 'do') out[out.length - 1] = 'dont';
    else out.push(token);
  }
  return out;
}

/** Where `phrase` starts in `tokens`, or -1. */
function indexOfSequence(tokens: readonly string[], phrase: readonly string[]): number {
  for (let i = 0; i + phrase.length <= tokens.length; i++) {
    if (phrase.every((word, j) => tokens[i + j] === word)) return i;
  }
  return -1;
}

function clauseAsks(clause: string): boolean {
  const tokens = withoutPhrases(normalized(tokenize(clause)), NOT_NEGATIONS);
  // "ever" only stresses: "don't ever call me again" is "don't call me again". The phrases that
  // contain it ("don't call me ever") are still looked for in the words as spoken.
  const variants = [tokens, tokens.filter((t) => t !== 'ever')];
  const asksAt = (words: readonly string[], at: number) => at >= 0 && !NEGATIONS.matches(words.slice(0, at));
  return variants.some(
    (words) =>
      asksAt(words, indexOfRemoveFrom(words)) ||
      OPT_OUT.some((phrase) => asksAt(words, indexOfSequence(words, phrase))),
  );
}

/** Whether the agent's last question offers to stop calling ("…opt out any time. Want a demo?" does not). */
function offersToStop(agentText: string): boolean {
  const questions = agentText.match(/[^.!?]*\?/g);
  const last = questions?.[questions.length - 1];
  return last !== undefined && OFFERS_TO_STOP.matches(normalized(tokenize(last)));
}

/** Whether an answer to an offer to stop says yes: "Yes, please", not "Please don't" or "No". */
function acceptsOffer(answer: string): boolean {
  const opening = tokenize(answer).slice(0, 3);
  if (NO.matches(opening) || opening.includes('dont') || containsSequence(opening, ['no', 'problem'])) return false;
  return YES.matches(opening);
}

/** Whether the human asked, anywhere in the call, not to be called again. */
export function askedNotToBeCalled(utterances: readonly Pick<Utterance, 'speaker' | 'text'>[]): boolean {
  let offer = false;
  for (const u of utterances) {
    if (u.speaker === 'agent') {
      offer = offersToStop(u.text);
      continue;
    }
    if (u.text.split(CLAUSE_BREAK).some(clauseAsks)) return true;
    if (offer && acceptsOffer(u.text)) return true;
    offer = false;
  }
  return false;
}

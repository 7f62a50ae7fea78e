// Fills a call template's result columns from the conversation: one value per column, in order.
// Deterministic word rules, no language model: a value is only given when the words support it.
//
// A column's meaning is found from its name folded to letters and digits ("Meeting time",
// "meetingTime" and "meeting_time" are all "meetingtime"). Recognised meanings:
//   meeting     meetingTime, meeting, fixedMeetingTime, appointment, appointmentTime, meetingDate:
//               the agreed meeting time (ISO 8601 UTC), else ''.
//   interested  interested, interest, isInterested: 'yes' / 'no' / 'unknown'. Explicit phrases
//               count wherever the human says them ("I'm interested", "tell me more", "not
//               interested", "no thanks", "remove me from your list"); a bare yes or no counts
//               when it answers an agent utterance about interest ("Would you like...?"), as do
//               "absolutely not" and "not at all"; a negation up to three words before
//               "interested" makes it a no ("I wouldn't be interested"). The last
//               such signal wins; with none, an agreed meeting means 'yes', else 'unknown'.
//   callback    callbackRequested, callback, callbackRequest, wantsCallback, callMeBack: 'yes' when
//               the human asks to be called back ("call me back", "try me later", "give me a call
//               tomorrow") or says yes to the agent offering it; 'no' otherwise, after "don't
//               call me back" or "never call", and whenever the callee opted out. The last signal wins.
//   email       email, emailAddress, eMail: the last e-mail address the human said, written
//               ("john@example.com") or spoken ("john dot smith at example dot co dot uk", letters
//               spelled one by one are joined: "j o h n at gmail dot com"), lower-cased; else ''.
//               A spoken one counts only when the human or the agent's question before it talks
//               of an e-mail or address, so "I work at acme dot com" gives no address.
//   summary     summary, callSummary, notes: one line from the human's side: the facts above that
//               hold, then the start of what the human said, quoted.
//   sentiment   sentiment, mood: 'positive' / 'negative' / 'neutral' from a small word list over
//               the human's words; a word after "not", "no", "never"... counts the other way
//               ("not good" is negative, "no problem" positive).
//   tags        tags, customTags, tagsHit, customTagsHit: the custom tags hit, joined with ', '.
//   name        name, nameOfHuman, humanName, contactName: the callee's name as given on the call,
//               else the human's answer to the agent asking for it (as for other columns below).
//   duration    duration, callDuration, durationSeconds, callDurationSeconds: seconds, else ''.
// Any other column is answered by what the human said right after the agent asked about it: the
// first agent question (a sentence ending in '?') containing all the column's words (camelCase,
// spaces, '_' and '-' split them; "the", "your"... are ignored; a plural 's' is tolerated), else
// the first agent utterance containing them, and the human's utterances after it until the agent
// speaks again. No such question or no reply gives ''.
import { askedNotToBeCalled } from './opt-out';
import { PhraseSet, clauseTokens, containsSequence, foldText, tokenize, withoutPhrases, type Utterance } from './text';

export interface ResultValue {
  columnName: string;
  value: string;
}

export interface ResultContext {
  utterances: readonly Utterance[];
  customTagsHit: readonly string[];
  fixedMeetingTime: string | null;
  nameOfHuman?: string;
  callDurationSeconds?: number;
}

type Meaning = 'meeting' | 'interested' | 'callback' | 'email' | 'summary' | 'sentiment' | 'tags' | 'name' | 'duration';

const MEANINGS: ReadonlyArray<[Meaning, readonly string[]]> = [
  ['meeting', ['meetingtime', 'meeting', 'fixedmeetingtime', 'appointment', 'appointmenttime', 'meetingdate']],
  ['interested', ['interested', 'interest', 'isinterested']],
  ['callback', ['callbackrequested', 'callback', 'callbackrequest', 'wantscallback', 'callmeback']],
  ['email', ['email', 'emailaddress']],
  ['summary', ['summary', 'callsummary', 'notes']],
  ['sentiment', ['sentiment', 'mood']],
  ['tags', ['tags', 'customtags', 'tagshit', 'customtagshit']],
  ['name', ['name', 'nameofhuman', 'humanname', 'contactname']],
  ['duration', ['duration', 'callduration', 'durationseconds', 'calldurationseconds']],
];

export function normaliseColumnName(columnName: string): string {
  return foldText(columnName).replace(/[^\p{L}\p{N}]+/gu, '');
}

/** The recognised meaning of a column name, if any. */
export function columnMeaning(columnName: string): Meaning | undefined {
  const key = normaliseColumnName(columnName);
  return MEANINGS.find(([, names]) => names.includes(key))?.[0];
}

export function fillResultValues(columns: readonly string[], ctx: ResultContext): ResultValue[] {
  return columns.map((columnName) => ({ columnName, value: valueFor(columnName, ctx) }));
}

function valueFor(columnName: string, ctx: ResultContext): string {
  switch (columnMeaning(columnName)) {
    case 'meeting':
      return ctx.fixedMeetingTime ?? '';
    case 'interested':
      return interest(ctx);
    case 'callback':
      return callbackRequested(ctx.utterances);
    case 'email':
      return spokenEmail(ctx.utterances) ?? '';
    case 'summary':
      return summary(ctx);
    case 'sentiment':
      return sentiment(ctx.utterances);
    case 'tags':
      return ctx.customTagsHit.join(', ');
    case 'name':
      return ctx.nameOfHuman ?? answerTo(columnName, ctx.utterances);
    case 'duration':
      return ctx.callDurationSeconds === undefined ? '' : String(ctx.callDurationSeconds);
    case undefined:
      return answerTo(columnName, ctx.utterances);
  }
}

// ---------------------------------------------------------------------------------------------
// Shared: a human utterance and the agent utterance it answers

interface Turn {
  text: string;
  tokens: string[];
  /** The same words, clause by clause (split at punctuation): where a negation can reach. */
  clauses: string[][];
  /** Tokens of the agent's last utterance before this one, if any. */
  prompt: string[];
}

function humanTurns(utterances: readonly Utterance[]): Turn[] {
  const turns: Turn[] = [];
  let prompt: string[] = [];
  for (const u of utterances) {
    if (u.speaker === 'agent') prompt = tokenize(u.text);
    else turns.push({ text: u.text, tokens: tokenize(u.text), clauses: clauseTokens(u.text), prompt });
  }
  return turns;
}

/** How far before a word a negation of it can stand: "I wouldn't be interested". */
const NEGATION_REACH = 3;

// Negation words that ask rather than refuse ("Why don't you call me back?", "Can't you tell me
// more?") or put off ("not now, call me back later", the comma lost by speech recognition).
const ASKING_NEGATIONS = [
  "why don't you",
  'why not',
  "can't you",
  "couldn't you",
  "won't you",
  'not now',
  'not right now',
  'not today',
  'not a good time',
].map(tokenize);

/**
 * Whether a phrase of `phrases` is said in one of `clauses`: 'said', 'negated' when a word of
 * `negations` stands within NEGATION_REACH words before each place it is said in its clause
 * ("I don't think I want that", "you don't need to call me back"), else undefined.
 */
function saidInClauses(
  clauses: readonly string[][],
  phrases: PhraseSet,
  negations: ReadonlySet<string>,
): 'said' | 'negated' | undefined {
  let found: 'said' | 'negated' | undefined;
  for (const spoken of clauses) {
    const clause = withoutPhrases(spoken, ASKING_NEGATIONS, true);
    for (const at of phrases.startsIn(clause)) {
      if (!clause.slice(Math.max(0, at - NEGATION_REACH), at).some((w) => negations.has(w))) return 'said';
      found = 'negated';
    }
  }
  return found;
}

const YES = new PhraseSet([
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'ok',
  'okay',
  'absolutely',
  'definitely',
  'of course',
  'please',
  'certainly',
  'why not',
]);
const NO = new PhraseSet([
  'no',
  'nope',
  'nah',
  'not really',
  'no thanks',
  'no thank you',
  'absolutely not',
  'definitely not',
  'certainly not',
  'of course not',
  'not at all',
]);

/** 'yes' or 'no' when the turn opens with one (its first three words), else undefined. */
function yesOrNo(tokens: string[]): 'yes' | 'no' | undefined {
  const opening = tokens.slice(0, 3);
  if (NO.matches(opening) && !containsSequence(opening, ['no', 'problem'])) return 'no';
  if (YES.matches(opening)) return 'yes';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// interested

const NOT_INTERESTED = new PhraseSet([
  'not interested',
  'not really interested',
  'not very interested',
  'not that interested',
  'no longer interested',
  'never interested',
  'not keen',
  'not really keen',
  'no thanks',
  'no thank you',
  'not for me',
  "don't call",
  'do not call',
  'stop calling',
  'remove me',
  'take me off',
  'leave me alone',
  'not looking',
]);
const INTERESTED = new PhraseSet([
  'interested',
  'tell me more',
  'sign me up',
  'count me in',
  "i'd like",
  'i would like',
  'i want',
  'love to',
  "let's do it",
  'sounds interesting',
  'sounds good',
  'sounds great',
  'keen',
]);
const ASKS_INTEREST = new PhraseSet(['interest', 'interested', 'would you like', 'do you want', 'keen']);
// A negation up to three words before an interested phrase, in its clause, refuses it: "I wouldn't
// be interested", "I don't think I'm interested", "never been interested", "I don't think I want
// that", "I'm not too keen".
const INTEREST_NEGATIONS = new Set(
  'not no never dont doesnt didnt wouldnt wont isnt wasnt arent cant cannot couldnt hardly nobody'.split(' '),
);

function interest(ctx: ResultContext): string {
  // A callee who asked not to be called again is not interested, whatever else was said ("I want to
  // unsubscribe", or "Yes please" to "Would you like me to take you off our list?").
  if (askedNotToBeCalled(ctx.utterances)) return 'no';
  let signal: 'yes' | 'no' | undefined;
  for (const turn of humanTurns(ctx.utterances)) {
    const stated = NOT_INTERESTED.matches(turn.tokens)
      ? 'negated'
      : saidInClauses(turn.clauses, INTERESTED, INTEREST_NEGATIONS);
    if (stated) signal = stated === 'said' ? 'yes' : 'no';
    else if (ASKS_INTEREST.matches(turn.prompt)) signal = yesOrNo(turn.tokens) ?? signal;
  }
  return signal ?? (ctx.fixedMeetingTime ? 'yes' : 'unknown');
}

// ---------------------------------------------------------------------------------------------
// callbackRequested

const NO_CALLBACK = new PhraseSet([
  "don't call me back",
  'do not call me back',
  "don't call back",
  "don't call",
  'do not call',
  'no need to call',
  "don't ring",
  'stop calling',
  'no callback',
  'no call back',
  'never call',
]);
const CALLBACK = new PhraseSet([
  'call me back',
  'call back',
  'callback',
  'ring me back',
  'call me later',
  'call me tomorrow',
  'call me again',
  'call again',
  'call me next',
  'call me another time',
  'try me later',
  'try me again',
  'try again later',
  'give me a call',
  'give me a ring',
  'phone me',
  'get back to me',
  'reach me later',
  'call me in',
  'call me on',
  'call me at',
]);
// The callee will call: no call back asked for ("I'll call you back", "I will get back to you").
const CALLEE_WILL_CALL = new PhraseSet([
  "i'll call",
  'i will call',
  "i'll ring",
  'i will ring',
  "i'll phone",
  "i'll give you a call",
  "i'll give you a ring",
  "i'll get back to you",
  'i will get back to you',
  'let me call you back',
]);
const OFFERS_CALLBACK = new PhraseSet([
  'call you back',
  'callback',
  'call back',
  'call you later',
  'call you again',
  'ring you back',
  'get back to you',
]);

function callbackRequested(utterances: readonly Utterance[]): string {
  // A callee who asked not to be called again did not ask to be called back ("Never call me again").
  if (askedNotToBeCalled(utterances)) return 'no';
  let requested = false;
  for (const turn of humanTurns(utterances)) {
    // A clause in which the callee says they will call asks for nothing ("I'll call back later"); one
    // apart from it still may ("I'm ill, call me back next week").
    const calleeCalls = turn.clauses.filter((clause) => CALLEE_WILL_CALL.matches(clause));
    const others = turn.clauses.filter((clause) => !CALLEE_WILL_CALL.matches(clause));
    const asked = saidInClauses(others, CALLBACK, INTEREST_NEGATIONS);
    if (NO_CALLBACK.matches(turn.tokens)) requested = false;
    else if (asked) requested = asked === 'said';
    else if (calleeCalls.length > 0) requested = false;
    else if (OFFERS_CALLBACK.matches(turn.prompt)) {
      const answer = yesOrNo(turn.tokens);
      if (answer) requested = answer === 'yes';
    }
  }
  return requested ? 'yes' : 'no';
}

// ---------------------------------------------------------------------------------------------
// email

const WRITTEN_EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;
// Spoken: words joined by spoken or written separators, "at", then a domain with a "dot".
const SPOKEN_PART = '[a-z0-9]+';
const SPOKEN_SEPARATOR = '(?:\\s*[._-]\\s*|\\s+(?:dot|period|point|underscore|dash|hyphen)\\s+)';
const SPOKEN_EMAIL = new RegExp(
  `(?<![a-z0-9])${SPOKEN_PART}(?:${SPOKEN_SEPARATOR}${SPOKEN_PART})*\\s+at\\s+${SPOKEN_PART}(?:(?:\\s*\\.\\s*|\\s+dot\\s+)${SPOKEN_PART})*(?:\\s*\\.\\s*|\\s+dot\\s+)[a-z]{2,}(?![a-z0-9])`,
  'g',
);
const VALID_EMAIL = /^[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}$/u;

const TALKS_OF_EMAIL = new PhraseSet(['email', 'e mail', 'mail', 'address', 'inbox']);

function spokenEmail(utterances: readonly Utterance[]): string | undefined {
  let found: string | undefined;
  for (const turn of humanTurns(utterances)) {
    for (const m of turn.text.matchAll(WRITTEN_EMAIL)) found = m[0].toLowerCase();
    if (!TALKS_OF_EMAIL.matches(turn.tokens) && !TALKS_OF_EMAIL.matches(turn.prompt)) continue;
    const folded = joinSpelledLetters(foldText(turn.text));
    for (const m of folded.matchAll(SPOKEN_EMAIL)) {
      const address = m[0]
        .replace(/\s+at\s+/, '@')
        .replace(/\s+(?:dot|period|point)\s+/g, '.')
        .replace(/\s+underscore\s+/g, '_')
        .replace(/\s+(?:dash|hyphen)\s+/g, '-')
        .replace(/\s+/g, '');
      if (VALID_EMAIL.test(address)) found = address;
    }
  }
  return found;
}

/** "j o h n" -> "john": three or more single letters or digits in a row are one spelled word. */
function joinSpelledLetters(text: string): string {
  return text.replace(/(?<![a-z0-9])[a-z0-9](?:\s+[a-z0-9](?![a-z0-9])){2,}/g, (run) => run.replace(/\s+/g, ''));
}

// ---------------------------------------------------------------------------------------------
// sentiment

const POSITIVE = new Set(
  (
    'great good thanks thank love lovely perfect happy glad excellent wonderful awesome interested ' +
    'nice helpful appreciate appreciated fantastic brilliant amazing pleased sure yes excited ' +
    'fine definitely absolutely'
  ).split(' '),
);
const NEGATIVE = new Set(
  (
    'bad terrible awful hate annoyed annoying angry spam waste useless horrible rude scam unhappy ' +
    'disappointed frustrated frustrating stop worst problem problems complaint ridiculous ' +
    'upset harassment wrong'
  ).split(' '),
);
const FLIPS = new Set('not no never dont doesnt didnt isnt wasnt arent cant cannot wont nothing hardly'.split(' '));

function sentiment(utterances: readonly Utterance[]): string {
  let score = 0;
  for (const u of utterances) {
    if (u.speaker !== 'human') continue;
    // A flip reaches within its clause only: "No, that's great!" is positive.
    for (const tokens of clauseTokens(u.text)) {
      tokens.forEach((token, i) => {
        const weight = POSITIVE.has(token) ? 1 : NEGATIVE.has(token) ? -1 : 0;
        if (weight === 0) return;
        const flipped = tokens.slice(Math.max(0, i - NEGATION_REACH), i).some((t) => FLIPS.has(t));
        score += flipped ? -weight : weight;
      });
    }
  }
  return score > 0 ? 'positive' : score < 0 ? 'negative' : 'neutral';
}

// ---------------------------------------------------------------------------------------------
// summary

const SUMMARY_QUOTE_LENGTH = 160;

function summary(ctx: ResultContext): string {
  const said = ctx.utterances
    .filter((u) => u.speaker === 'human')
    .map((u) => u.text.replace(/\s+/g, ' ').trim())
    .filter((t) => t !== '')
    .join(' ');
  const who = ctx.nameOfHuman?.trim() || 'The callee';
  if (said === '') return `${who} did not speak.`;
  const facts: string[] = [];
  if (ctx.fixedMeetingTime) facts.push(`agreed to a meeting at ${ctx.fixedMeetingTime}`);
  const interested = interest(ctx);
  if (interested === 'yes' && !ctx.fixedMeetingTime) facts.push('is interested');
  if (interested === 'no') facts.push('is not interested');
  if (callbackRequested(ctx.utterances) === 'yes') facts.push('asked to be called back');
  const email = spokenEmail(ctx.utterances);
  if (email) facts.push(`gave the e-mail address ${email}`);
  const lead = facts.length > 0 ? `${who} ${facts.join(', ')}. ` : '';
  return `${lead}Said: "${truncate(said, SUMMARY_QUOTE_LENGTH)}"`;
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > max / 2 ? cut.slice(0, lastSpace) : cut).replace(/[\s,;:.-]+$/, '')}…`;
}

// ---------------------------------------------------------------------------------------------
// Any other column: the human's answer to the agent's question about it

const IGNORED_COLUMN_WORDS = new Set('the a an of your you is are to for in on and or what do does my our'.split(' '));

/** "budgetRange" -> ["budget", "range"]; "preferred_contact-method" -> three words. */
function columnWords(columnName: string): string[] {
  const spaced = columnName.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  return tokenize(spaced).filter((w) => !IGNORED_COLUMN_WORDS.has(w));
}

function mentionsWord(tokens: readonly string[], word: string): boolean {
  return tokens.some((t) => t === word || t === `${word}s` || t === `${word}es` || `${t}s` === word);
}

function answerTo(columnName: string, utterances: readonly Utterance[]): string {
  const words = columnWords(columnName);
  if (words.length === 0) return '';
  const hasWords = (text: string) => {
    const tokens = tokenize(text);
    return words.every((w) => mentionsWord(tokens, w));
  };
  const asking = utterances
    .map((u, index) => ({ u, index }))
    .filter(({ u }) => u.speaker === 'agent' && hasWords(u.text));
  // The words must be in the question itself: "We help with budgets. Is now a good time?" does
  // not ask about the budget. The first such question is the one answered; a later one is most
  // often a confirmation ("So your budget is 3k?").
  const chosen = asking.find(({ u }) => (u.text.match(/[^.!?]*\?/g) ?? []).some(hasWords)) ?? asking[0];
  if (!chosen) return '';
  const reply: string[] = [];
  for (const u of utterances.slice(chosen.index + 1)) {
    if (u.speaker === 'agent') break;
    if (u.text.trim() !== '') reply.push(u.text.replace(/\s+/g, ' ').trim());
  }
  return reply.join(' ');
}

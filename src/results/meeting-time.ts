// The meeting time the human agreed to during a call (`fixedMeetingTime`): which utterance fixes
// it. Days and times are found in the words by spoken-time.ts and placed on the callee's wall
// clock by time-zones.ts; everything is read relative to the call time in the callee's IANA zone.
//
// Rules:
// 1. A mention is a date and/or a time of day. A time of day needs a stated hour ("3pm", "noon",
//    "half past four"); "Friday afternoon" or "tomorrow" alone is a day, not a fixed time. A month
//    alone ("April", "June": as often a name) is neither.
// 2. A bare hour from 1 to 7 without am/pm ("at 3", "Thursday at 4") means the afternoon: nobody
//    books a call for 3 in the morning. "07:30" with a leading zero is read as written, and so is
//    an hour said with "morning" ("tomorrow morning at 7:30", "7:30 tomorrow morning").
// 3. Each mention is judged within its clause (clauses end at . ! ? ; , : dashes and at "but",
//    "however", "although", "though", "whereas", "otherwise", "unless"). It is refused when a
//    negation comes before it in the clause ("I can't do Tuesday", "not Tuesday", "rather than
//    Tuesday") or after it ("Tuesday doesn't work", "Tuesday is no good"); "Tuesday or Wednesday"
//    after a negation refuses both. Phrases such as "no problem", "why not", "don't mind" are
//    not negations. In the human's words, a later clause that refuses without naming a day or
//    time refuses the mentions before it ("Tuesday at 3pm? Hmm, no, that doesn't work for me").
// 4. A human mention that is not refused is agreed when its clause holds an agreeing or proposing
//    expression ("works for me", "sounds good", "yes", "sure", "let's", "how about", "I can do",
//    "that's fine", "is better", "would be ideal"...) or holds nothing but the time and filler
//    words: answering "When suits you?" with "Tuesday at 3pm." proposes that time, and proposing
//    counts as agreeing.
// 5. The agent proposes when its utterance holds a mention not refused and is a question or uses
//    a proposing word ("would", "how about", "suit", "book"...). The proposal stands until the
//    human next speaks. If that human utterance agrees (an agreeing expression and no negation
//    anywhere in it) without naming a time of its own, the proposed time is agreed. "maybe" and
//    "perhaps" do not agree to it, nor does "ok" with a put-off ("OK, just send me an email"), nor
//    "good question".
// 6. Missing parts are taken from the conversation: a human day without a time ("Thursday works",
//    "how about Friday instead?") takes the time of the standing proposal; a human time without a
//    day ("can we make it 4 instead?") takes the proposal's day, else the last day anyone named
//    without refusing it, else today in the callee's zone (tomorrow once that time has passed).
//    A proposal of several slots ("Tuesday at 3pm or Wednesday at 10am?") lends the one on the day
//    or at the time named ("Tuesday works", "10am is better"), else its last one. A time taken
//    from the proposal takes its zone; a human time without a zone answering a proposal that named
//    one is in that zone ("2pm Eastern?" "Can we make it 4?").
// 7. Only future times count: a mention at or before the call time, or introduced by "last",
//    "past" or "previous", is ignored.
// 8. A later human refusal of the agreed day or time ("actually I can't do Tuesday") withdraws it.
// 9. The most recent agreement in the conversation wins; none gives null.
//
// Time zones: a day and time agreed are placed in the callee's zone with the offset in force on
// that day (time-zones.ts says what happens in a daylight-saving gap or overlap). A zone named with
// the time ("3pm Eastern", "3pm EST") is used instead, on the same terms (spoken-zones.ts says which
// names count); an offset in the words ("3pm GMT+2") or a relative time ("in two hours") keeps the
// offset chrono read from them.
import type { Temporal } from 'temporal-polyfill';
import { parseZonedMentions, type ZonedMention, type ZonedSlot } from './spoken-zones';
import { PhraseSet, tokenize, withoutPhrases, type Utterance } from './text';
import { wallDateAt, wallTimeAtOffset, wallTimeToInstant } from './time-zones';

export interface MeetingTimeOptions {
  callTime: Date;
  /** IANA zone of the callee, e.g. 'America/New_York'. Default 'UTC'. */
  timeZone?: string;
}

/** ISO 8601 UTC (with milliseconds) of the meeting the human agreed to, or null. */
export function findFixedMeetingTime(utterances: readonly Utterance[], opts: MeetingTimeOptions): string | null {
  const call = callContext(opts);
  let agreed: Placed | null = null;
  /** The slots of the standing proposal, in the order offered ("Tuesday at 3pm or Wednesday at 10am?"). */
  let offers: ZonedSlot[] = [];
  let contextDate: ContextDate | null = null;

  for (const utterance of utterances) {
    if (utterance.text.trim() === '') continue;
    // A month named alone ("April", "June": as often a name) fixes nothing: it counts only in judging
    // its clause. A part of the day alone ("in the afternoon") still counts, as a counter-proposal.
    const mentions = assess(
      utterance.text,
      parseZonedMentions(utterance.text, opts.callTime, call.timeZone, utterance.speaker),
      utterance.speaker,
    ).filter(
      (m) => m.slot.date !== null || m.slot.time !== null || !MONTH_ALONE.test(utterance.text.slice(m.start, m.end)),
    );

    if (utterance.speaker === 'agent') {
      const offered = mentions.filter((m) => !m.negated);
      if (offered.length && isProposal(utterance.text)) {
        const before = offers[offers.length - 1] ?? null;
        offers = offered.map((m) => complete(m.slot, before, contextDate));
      }
    } else {
      for (const m of mentions) {
        if (m.negated && agreed && refuses(m.slot, agreed)) agreed = null;
      }
      const candidates = mentions
        .filter((m) => m.agreed)
        .map((m) => place(complete(m.slot, offerFor(m.slot, offers), contextDate), call))
        .filter((p): p is Placed => p !== null);
      const ownChoice = candidates[candidates.length - 1];
      const lastOffer = offers[offers.length - 1];
      if (ownChoice) {
        agreed = ownChoice;
      } else if (lastOffer && !mentions.some((m) => m.agreed) && utteranceAgrees(utterance.text)) {
        agreed = place(lastOffer, call) ?? agreed;
      }
      offers = [];
    }

    for (const m of mentions) {
      if (!m.negated && m.slot.date) contextDate = { date: m.slot.date, flexible: m.slot.weekdayFlexible };
    }
  }
  return agreed ? new Date(agreed.instant).toISOString() : null;
}

const MONTH_ALONE =
  /^\s*(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s*$/i;

interface CallContext {
  instant: number;
  timeZone: string;
  /** The call's day on the callee's wall clock. */
  today: Temporal.PlainDate;
}

function callContext(opts: MeetingTimeOptions): CallContext {
  const instant = opts.callTime.getTime();
  if (Number.isNaN(instant)) throw new RangeError('callTime is not a valid date');
  const timeZone = opts.timeZone ?? 'UTC';
  return { instant, timeZone, today: wallDateAt(instant, timeZone) };
}

// ---------------------------------------------------------------------------------------------
// Agreement and refusal

const NEGATIONS = new PhraseSet([
  'no',
  'not',
  'never',
  'nope',
  'nah',
  'cannot',
  "can't",
  "couldn't",
  "won't",
  "don't",
  "doesn't",
  "didn't",
  "isn't",
  "aren't",
  "wasn't",
  "wouldn't",
  "shouldn't",
  'unable',
  'unavailable',
  'busy',
  'impossible',
  'booked',
  'neither',
  'nor',
  'except',
  'instead of',
  'rather than',
  'than',
  'other than',
  'apart from',
  'conflict',
  'away',
  'out of town',
  'out of the office',
  'on vacation',
  'on holiday',
  'bad',
  'tough',
  'difficult',
  'tricky',
]);

// Negation words that point forward at the next mention ("Wednesday rather than Tuesday").
const FORWARD_NEGATIONS = [
  'instead of',
  'rather than',
  'other than',
  'apart from',
  'but not',
  'except',
  'not',
  'than',
].map(tokenize);

// Phrases built from negation words that agree.
const NOT_NEGATIONS = [
  'no problem',
  'no worries',
  'not a problem',
  'why not',
  'not bad',
  "can't wait",
  'cannot wait',
  "don't mind",
  'do not mind',
  "doesn't matter",
  'no doubt',
  'not at all',
  'never mind',
  'no rush',
].map(tokenize);

const AGREEMENT_WORDS = [
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'ok',
  'okay',
  'alright',
  'all right',
  'fine',
  'good',
  'great',
  'perfect',
  'excellent',
  'lovely',
  // "Next Monday at 9am would be ideal"; "not ideal", "wouldn't be best" are refusals (a negation).
  'ideal',
  'best',
  'convenient',
  'suitable',
  'works',
  'work',
  'suits',
  'suit',
  'sounds',
  'agreed',
  'agree',
  'deal',
  'absolutely',
  'definitely',
  'certainly',
  'of course',
  "let's",
  'lets',
  'let us',
  'how about',
  'what about',
  'can do',
  'could do',
  'can make',
  'could make',
  "i'll be",
  'i will be',
  'free',
  'available',
  'book',
  'schedule',
  'put me down',
  'see you',
  'go with',
  'go for',
  'say',
  'prefer',
  'better',
  'rather',
  'happy',
  'glad',
  'confirm',
  'confirmed',
  'correct',
  'count me in',
  "i'm in",
  'could we',
  'can we',
  'shall we',
  'we could',
  'we can',
  'make it',
  'maybe',
  'perhaps',
  'no problem',
  'no worries',
  'why not',
  "don't mind",
  'not at all',
  'no rush',
];
const AGREEMENTS = new PhraseSet(AGREEMENT_WORDS);
// Phrases built from agreeing words that do not agree: "Good question" answers without taking a time.
const NOT_AGREEMENTS = ['good question', 'great question', 'excellent question'].map(tokenize);

// Words that agree to a proposed time only when nothing puts it off (rule 5): "OK" but not "OK,
// just send me an email about it". "maybe" and "perhaps" never agree to a proposed time.
const WEAK_AGREEMENTS = ['ok', 'okay', 'alright', 'all right'];
const NOT_AGREEING_TO_PROPOSAL = ['maybe', 'perhaps'];
const FIRM_AGREEMENTS = new PhraseSet(
  AGREEMENT_WORDS.filter((w) => !WEAK_AGREEMENTS.includes(w) && !NOT_AGREEING_TO_PROPOSAL.includes(w)),
);
const WEAK_AGREEMENT = new PhraseSet(WEAK_AGREEMENTS);
const DEFLECTIONS = new PhraseSet([
  'send me',
  'email',
  'e mail',
  'mail me',
  'text me',
  'let you know',
  'get back to you',
  'another time',
  'some other time',
  'think about',
  'call me back',
  'call back',
  'later',
  'not sure',
]);

const FILLERS = new Set(
  (
    'um umm uh uhh er erm hmm hm mm ah oh well so then on at in the a this that it its is be i guess ' +
    'think suppose say please actually just like or and maybe perhaps probably around about instead again'
  ).split(' '),
);

const PROPOSALS = new PhraseSet([
  'would',
  'could',
  'can',
  'does',
  'do',
  'how about',
  'what about',
  'shall',
  'should',
  "let's",
  'suit',
  'suits',
  'work',
  'works',
  'free',
  'available',
  'book',
  'schedule',
  'put you down',
  'confirm',
  'see you',
  'pencil',
  'set up',
  'arrange',
]);

const CLAUSE_BREAK =
  /[.!?;]+(?=\s|$)|[,:]|\s[-\u2013\u2014]+\s|(?<![\p{L}\p{N}])(?:but|however|although|though|whereas|otherwise|unless)(?![\p{L}\p{N}])/giu;

interface Assessed extends ZonedMention {
  negated: boolean;
  agreed: boolean;
}

/** Removes the phrases that look negative but agree, so they are not read as refusals. */
function withoutNotNegations(tokens: string[]): string[] {
  return withoutPhrases(tokens, NOT_NEGATIONS);
}

function negates(text: string): boolean {
  return NEGATIONS.matches(withoutNotNegations(tokenize(text)));
}

function agrees(tokens: string[]): boolean {
  return AGREEMENTS.matches(withoutPhrases(tokens, NOT_AGREEMENTS));
}

/** Drops the negation words at the end of a gap that belong to the mention after it. */
function withoutTrailingForwardNegation(text: string): string[] {
  const tokens = withoutNotNegations(tokenize(text));
  let changed = true;
  while (changed) {
    changed = false;
    for (const phrase of FORWARD_NEGATIONS) {
      const tail = tokens.slice(tokens.length - phrase.length);
      if (tokens.length >= phrase.length && phrase.every((w, i) => tail[i] === w)) {
        tokens.splice(tokens.length - phrase.length);
        changed = true;
      }
    }
  }
  return tokens;
}

function assess(text: string, mentions: ZonedMention[], speaker: Utterance['speaker']): Assessed[] {
  const inMention = (i: number) => mentions.some((m) => i >= m.start && i < m.end);
  const breaks = [...text.matchAll(CLAUSE_BREAK)].filter((b) => !inMention(b.index ?? 0));
  const clauseOf = (m: ZonedMention): [number, number] => {
    let start = 0;
    let end = text.length;
    for (const b of breaks) {
      const at = b.index ?? 0;
      if (at + b[0].length <= m.start) start = at + b[0].length;
      else if (at >= m.end) {
        end = at;
        break;
      }
    }
    return [start, end];
  };

  const assessed: Assessed[] = [];
  mentions.forEach((m, i) => {
    const [start, end] = clauseOf(m);
    const prev = i > 0 && mentions[i - 1].end > start ? assessed[i - 1] : undefined;
    const next = i + 1 < mentions.length && mentions[i + 1].start < end ? mentions[i + 1] : undefined;
    const before = text.slice(prev ? prev.end : start, m.start);
    const after = text.slice(m.end, next ? next.start : end);
    let negated: boolean;
    if (prev && /^\s*(?:or|and|nor|&|\/)?\s*$/i.test(before)) {
      negated = prev.negated; // "I can't do Tuesday or Wednesday"
    } else {
      const afterNegates = next ? NEGATIONS.matches(withoutTrailingForwardNegation(after)) : negates(after);
      negated = negates(before) || afterNegates;
    }
    // What the clause says besides its mentions: nothing but fillers makes a bare answer.
    let rest = '';
    let cursor = start;
    for (const other of mentions.filter((o) => o.start >= start && o.end <= end)) {
      rest += `${text.slice(cursor, other.start)} `;
      cursor = other.end;
    }
    rest += text.slice(cursor, end);
    const bare = tokenize(rest).every((t) => FILLERS.has(t));
    // Cues are looked for in the whole clause: a mention may begin with one ("how about four").
    const cue = agrees(tokenize(text.slice(start, end)));
    assessed.push({ ...m, negated, agreed: !negated && (bare || cue) });
  });
  if (speaker === 'human') {
    // A later clause that refuses without naming another day or time takes back the times named
    // before it: "Tuesday at 3pm? Hmm, no, that doesn't work for me".
    const bounds = [0, ...breaks.flatMap((b) => [b.index ?? 0, (b.index ?? 0) + b[0].length]), text.length];
    for (let i = 0; i + 1 < bounds.length; i += 2) {
      const [start, end] = [bounds[i], bounds[i + 1]];
      const clause = text.slice(start, end);
      if (mentions.some((m) => m.start < end && m.end > start) || !refusesBack(clause)) continue;
      for (const m of assessed) {
        if (m.end <= start) Object.assign(m, { negated: true, agreed: false });
      }
    }
  }
  return assessed;
}

// A clause that takes back what came before it: a bare "no", or a negation about "that"/"it"/"this"
// ("that doesn't work for me"); not one about something else ("but I can't stay long").
const BARE_NO = new Set(['no', 'nope', 'nah', 'hmm', 'um', 'uh', 'oh', 'well', 'sorry', 'actually']);
const BACK_REFERENCES = new Set(['that', 'it', 'this', 'then', "that's", "it's", 'thats', 'its']);
function refusesBack(clause: string): boolean {
  const tokens = tokenize(clause);
  if (tokens.length === 0) return false;
  if (tokens.every((t) => BARE_NO.has(t)) && tokens.some((t) => t === 'no' || t === 'nope' || t === 'nah')) return true;
  return tokens.some((t) => BACK_REFERENCES.has(t)) && negates(clause);
}

/** Whether a human utterance agrees to the standing proposal (rule 5). */
function utteranceAgrees(text: string): boolean {
  const tokens = withoutPhrases(tokenize(text), NOT_AGREEMENTS);
  if (NEGATIONS.matches(withoutNotNegations(tokens))) return false;
  return FIRM_AGREEMENTS.matches(tokens) || (WEAK_AGREEMENT.matches(tokens) && !DEFLECTIONS.matches(tokens));
}

function isProposal(text: string): boolean {
  return text.includes('?') || PROPOSALS.matches(tokenize(text));
}

// ---------------------------------------------------------------------------------------------
// Completing and placing slots

interface ContextDate {
  date: Temporal.PlainDate;
  flexible: boolean;
}

interface Placed {
  instant: number;
  date: Temporal.PlainDate;
  time: Temporal.PlainTime;
}

/**
 * The offered slot a human mention answers: with several offered, the one on the day and at the time
 * it names ("Tuesday works" to "Tuesday at 3pm or Wednesday at 10am?", "3pm please", "Tuesday at
 * 3pm": then its zone is that offer's), else the last one offered.
 */
function offerFor(slot: ZonedSlot, offers: readonly ZonedSlot[]): ZonedSlot | null {
  const sameDate = (o: ZonedSlot) => slot.date !== null && o.date !== null && o.date.equals(slot.date);
  const sameTime = (o: ZonedSlot) => slot.time !== null && o.time !== null && o.time.equals(slot.time);
  const matching =
    slot.date && slot.time
      ? offers.find((o) => sameDate(o) && sameTime(o))
      : slot.date
        ? offers.find(sameDate)
        : slot.time
          ? offers.find(sameTime)
          : undefined;
  return matching ?? offers[offers.length - 1] ?? null;
}

/** Fills a missing day or time from the standing proposal or the day under discussion (rule 6). */
function complete(slot: ZonedSlot, proposal: ZonedSlot | null, context: ContextDate | null): ZonedSlot {
  let { date, weekdayFlexible, time, offsetMinutes, timeZone } = slot;
  if (!date && time) {
    if (proposal?.date) ({ date, weekdayFlexible } = proposal);
    else if (context) ({ date, flexible: weekdayFlexible } = context);
  }
  if (date && !time && proposal?.time) ({ time, offsetMinutes, timeZone } = proposal);
  else if (time && timeZone === null && offsetMinutes === null && proposal?.time) timeZone = proposal.timeZone;
  return { ...slot, date, time, weekdayFlexible, offsetMinutes, timeZone };
}

/** The instant of a wall time: at the offset the words state, else in the zone named, else the callee's. */
function instantOf(date: Temporal.PlainDate, time: Temporal.PlainTime, slot: ZonedSlot, call: CallContext): number {
  return slot.offsetMinutes === null
    ? wallTimeToInstant(date, time, slot.timeZone ?? call.timeZone)
    : wallTimeAtOffset(date, time, slot.offsetMinutes);
}

/** The instant of a slot with a time, if it is after the call. */
function place(slot: ZonedSlot, call: CallContext): Placed | null {
  const { time } = slot;
  if (!time) return null;
  let date = slot.date ?? call.today;
  let instant = instantOf(date, time, slot, call);
  if (!slot.date && instant <= call.instant) {
    date = date.add({ days: 1 });
    instant = instantOf(date, time, slot, call);
  }
  if (slot.weekdayFlexible) {
    // The parser chose the week before rule 2 moved the hour: take the first such weekday ahead.
    const weekEarlier = date.subtract({ days: 7 });
    const earlierInstant = instantOf(weekEarlier, time, slot, call);
    if (earlierInstant > call.instant) {
      date = weekEarlier;
      instant = earlierInstant;
    } else if (instant <= call.instant) {
      date = date.add({ days: 7 });
      instant = instantOf(date, time, slot, call);
    }
  }
  return instant > call.instant ? { instant, date, time } : null;
}

/** Whether a refused mention names the agreed meeting's day or time (rule 8). */
function refuses(slot: ZonedSlot, agreed: Placed): boolean {
  if (slot.date) {
    const sameDay = slot.weekdayFlexible
      ? slot.date.dayOfWeek === agreed.date.dayOfWeek
      : slot.date.equals(agreed.date);
    return sameDay && (!slot.time || slot.time.equals(agreed.time));
  }
  return slot.time !== null && slot.time.equals(agreed.time);
}

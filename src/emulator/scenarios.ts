// What happens on an emulated call: the outcome the destination number asks for (decisions.md
// "Provider emulator") and, for a conversation, which human the agent meets. All deterministic
// per number, so a test or a demo picks its outcome and its scenario by choosing the number.

export type Outcome = 'busy' | 'declined' | 'no-answer' | 'refused' | 'drop-after-answer' | 'silent' | 'conversation';

const OUTCOME_BY_LAST_FOUR: Record<string, Outcome> = {
  '1486': 'busy',
  // SIP 603 Decline: the callee refuses the call (never redialled).
  '1603': 'declined',
  '1408': 'no-answer',
  '1404': 'refused',
  '1500': 'drop-after-answer',
  '1200': 'silent',
};

export function digitsOf(number: string): string {
  return number.replace(/\D/g, '');
}

export function outcomeFor(number: string): Outcome {
  return OUTCOME_BY_LAST_FOUR[digitsOf(number).slice(-4)] ?? 'conversation';
}

export interface Scenario {
  id: string;
  /** Reached by numbers ending in these four digits only; the others are reached by number hash. */
  lastFour?: string;
  /** Each turn: what the human says, then how the agent answers it. */
  turns: readonly (readonly [human: string, agent: string])[];
}

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'meeting-tuesday',
    turns: [
      [
        'Hi, yes, speaking. What is this about?',
        "Thanks for picking up. I'd love to set up a short meeting to walk you through it. When would suit you?",
      ],
      [
        'Tuesday at 3pm works for me.',
        "Perfect, I've put you down for Tuesday at 3pm. You'll get a confirmation shortly.",
      ],
      ['Great, thanks. Bye.', 'Thank you for your time. Goodbye!'],
    ],
  },
  {
    id: 'meeting-tomorrow',
    turns: [
      [
        "Oh, hello. I'm a bit busy right now, but go on.",
        "I'll be quick. Could we schedule a short call to go over the details?",
      ],
      ['How about tomorrow at 10:30?', "Tomorrow at 10:30 works. I'll send you an invitation."],
      ['Sounds good.', 'Thanks so much. Have a great day, goodbye.'],
    ],
  },
  {
    id: 'meeting-next-monday',
    turns: [
      [
        "Yes, I've actually been meaning to look into that.",
        'Wonderful. Would you be open to a short meeting with one of our specialists?',
      ],
      ['Sure. Next Monday at 9am would be ideal.', "Great, next Monday at 9am it is. I'll send you the details."],
      ['Thank you.', 'Thank you, goodbye.'],
    ],
  },
  {
    id: 'not-interested',
    turns: [
      ["Sorry, I'm not interested.", 'I understand. Is there perhaps a better time to reach you in the future?'],
      ["No, really, I'm not interested. Thanks anyway.", "Of course. I'm sorry to have bothered you. Have a good day."],
    ],
  },
  {
    id: 'call-back-later',
    turns: [
      ["I'm driving at the moment. Can you call me back later?", 'Of course. Is there a time that suits you best?'],
      ["Just call me back later this week, I'm not sure yet.", 'Will do. Thank you, and drive safely.'],
    ],
  },
  {
    id: 'send-email',
    turns: [
      ['Could you just send me an email with the details?', 'Certainly. Is the address we have on file the best one?'],
      ["Yes, that's fine. Send me an email and I'll have a look.", "I'll send it right away. Thank you, goodbye."],
    ],
  },
  {
    // Numbers ending in 7867 ("STOP" on a keypad): the callee asks to go on the do-not-call list.
    id: 'opt-out',
    lastFour: '7867',
    turns: [
      [
        'Who is this? How did you get my number?',
        "I'm calling on behalf of the team that sent you our last offer. Do you have a minute?",
      ],
      [
        "No. I've had three of these calls this week. Take me off your list and stop calling me.",
        "I'm sorry for the trouble. I've noted that, and you won't be called again. Goodbye.",
      ],
    ],
  },
];

/** The scenarios picked by number hash: every one without digits of its own. */
const HASHED_SCENARIOS = SCENARIOS.filter((s) => s.lastFour === undefined);

/** FNV-1a over the number's digits: stable across runs and machines. */
export function numberHash(number: string): number {
  let hash = 0x811c9dc5;
  for (const char of digitsOf(number)) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export function scenarioFor(number: string): Scenario {
  const lastFour = digitsOf(number).slice(-4);
  return (
    SCENARIOS.find((s) => s.lastFour === lastFour) ?? HASHED_SCENARIOS[numberHash(number) % HASHED_SCENARIOS.length]!
  );
}

/**
 * A number that gets `scenarioId` and a completed conversation: `prefix` followed by digits
 * (tests and demos use it to pick a scenario).
 */
export function numberForScenario(scenarioId: string, prefix = '+1555010'): string {
  if (!SCENARIOS.some((s) => s.id === scenarioId)) throw new Error(`unknown scenario ${scenarioId}`);
  for (let n = 0; n < 100_000; n += 1) {
    const candidate = `${prefix}${String(n).padStart(4, '0')}`;
    if (outcomeFor(candidate) === 'conversation' && scenarioFor(candidate).id === scenarioId) return candidate;
  }
  throw new Error(`no number with prefix ${prefix} reaches scenario ${scenarioId}`);
}

export interface PlannedUtterance {
  speaker: 'agent' | 'human';
  text: string;
  /** Seconds from answer on the emulated clock. */
  startSeconds: number;
  durationSeconds: number;
}

export interface CallPlan {
  outcome: Outcome;
  scenarioId: string | null;
  /** How long the phone rings before it is answered, busy or given up on. */
  ringSeconds: number;
  utterances: PlannedUtterance[];
  /** When the call ends, in seconds from answer (0 when it is never answered). */
  hangupSeconds: number;
}

const NO_ANSWER_RING_SECONDS = 30;
const ANSWER_TO_FIRST_WORD_SECONDS = 0.8;
const SILENT_WAIT_SECONDS = 5;
const DROP_AFTER_OPENING_SECONDS = 2.5;

/** Roughly how long a sentence takes to say at a conversational 160 words per minute. */
export function speakingSeconds(text: string): number {
  const words = text.split(/\s+/).filter((w) => w.length > 0).length;
  return Math.round((0.4 + words / 2.7) * 100) / 100;
}

export function planCall(input: { to: string; openingLine: string }): CallPlan {
  const outcome = outcomeFor(input.to);
  const hash = numberHash(input.to);
  const jitter = (salt: number, spread: number): number =>
    (((((hash >>> salt) ^ (hash * (salt + 1))) >>> 0) % 1000) / 1000) * spread;
  const ringSeconds =
    outcome === 'no-answer'
      ? NO_ANSWER_RING_SECONDS
      : outcome === 'busy' || outcome === 'declined'
        ? 1.5 + jitter(3, 1)
        : 2 + jitter(5, 2);
  if (outcome === 'busy' || outcome === 'declined' || outcome === 'no-answer' || outcome === 'refused') {
    return { outcome, scenarioId: null, ringSeconds, utterances: [], hangupSeconds: 0 };
  }

  const utterances: PlannedUtterance[] = [];
  let clock = ANSWER_TO_FIRST_WORD_SECONDS;
  const say = (speaker: 'agent' | 'human', text: string, pauseBefore: number): void => {
    clock += pauseBefore;
    const durationSeconds = speakingSeconds(text);
    utterances.push({ speaker, text, startSeconds: Math.round(clock * 100) / 100, durationSeconds });
    clock += durationSeconds;
  };
  const opening = input.openingLine.trim().length > 0 ? input.openingLine.trim() : 'Hello, this is an automated call.';
  say('agent', opening, 0);

  let scenarioId: string | null = null;
  if (outcome === 'drop-after-answer') {
    clock += DROP_AFTER_OPENING_SECONDS;
  } else if (outcome === 'silent') {
    say('agent', 'Hello? Is anyone there?', SILENT_WAIT_SECONDS);
    say('agent', "It seems I can't hear you. I'll try again another time. Goodbye.", SILENT_WAIT_SECONDS - 1);
    clock += 1;
  } else {
    const scenario = scenarioFor(input.to);
    scenarioId = scenario.id;
    scenario.turns.forEach(([human, agent], i) => {
      say('human', human, 0.6 + jitter(i + 7, 0.8));
      say('agent', agent, 0.5 + jitter(i + 11, 0.6));
    });
    clock += 1;
  }
  return { outcome, scenarioId, ringSeconds, utterances, hangupSeconds: Math.round(clock * 100) / 100 };
}

// What happens on an emulated call: the outcome the destination number asks for (decisions.md
// "Provider emulator") and, for a conversation, which human the agent meets. All deterministic
// per number, so a test or a demo picks its outcome and its scenario by choosing the number.

export type Outcome =
  | 'busy'
  | 'declined'
  | 'no-answer'
  | 'refused'
  | 'drop-after-answer'
  | 'silent'
  | 'stays-on-line'
  | 'machine-beep'
  | 'machine-no-beep'
  | 'fax'
  | 'long-greeting-human'
  | 'conversation';

/**
 * Outcomes by the destination's last four digits; every other number reaches a conversation.
 *
 * | last four | outcome             | what answers                                                        |
 * |-----------|---------------------|---------------------------------------------------------------------|
 * | 1486      | busy                | nobody: the line is busy                                            |
 * | 1603      | declined            | nobody: the callee refuses the call (SIP 603, never redialled)      |
 * | 1408      | no-answer           | nobody: it rings until the dial's ring timeout (the provider's       |
 * |           |                     | default when the dial gives none)                                   |
 * | 1404      | refused             | nobody: the provider refuses the number when dialled                |
 * | 1500      | drop-after-answer   | a person, then the network drops the call after the opening line    |
 * | 1200      | silent              | a person who never says a word                                      |
 * | 1440      | stays-on-line       | a person who asks the agent to hold on and never comes back: nobody |
 * |           |                     | hangs up, so the caller or the provider's time limit ends the call  |
 * | 6200      | machine-beep        | an answering machine: a greeting, then the beep                     |
 * | 6201      | machine-no-beep     | an answering machine: a greeting, then silence                      |
 * | 6202      | fax                 | a fax machine: tones, no words, no greeting's end; it hangs up 20 s |
 * |           |                     | after answering                                                     |
 * | 6203      | long-greeting-human | a person who speaks first, at length (a detector must not take it   |
 * |           |                     | for a machine), then books Tuesday at 3pm                           |
 */
const OUTCOME_BY_LAST_FOUR: Record<string, Outcome> = {
  '1486': 'busy',
  '1603': 'declined',
  '1408': 'no-answer',
  '1404': 'refused',
  '1500': 'drop-after-answer',
  '1200': 'silent',
  '1440': 'stays-on-line',
  '6200': 'machine-beep',
  '6201': 'machine-no-beep',
  '6202': 'fax',
  '6203': 'long-greeting-human',
};

/** The outcomes an answering-machine detector (AMD) reports as a machine (a fax among them). */
export const MACHINE_OUTCOMES: ReadonlySet<Outcome> = new Set<Outcome>(['machine-beep', 'machine-no-beep', 'fax']);

/** What an answering-machine detector concludes (each provider words it its own way). */
export type MachineDetectionResult = 'human' | 'machine' | 'fax' | 'unknown';

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
  /** What the human says on answer, before the agent's opening line (the agent waits for it). */
  greeting?: string;
  /** Each turn: what the human says, then how the agent answers it. */
  turns: readonly (readonly [human: string, agent: string])[];
}

const MEETING_TUESDAY_TURNS: Scenario['turns'] = [
  [
    'Hi, yes, speaking. What is this about?',
    "Thanks for picking up. I'd love to set up a short meeting to walk you through it. When would suit you?",
  ],
  ['Tuesday at 3pm works for me.', "Perfect, I've put you down for Tuesday at 3pm. You'll get a confirmation shortly."],
  ['Great, thanks. Bye.', 'Thank you for your time. Goodbye!'],
];

export const SCENARIOS: readonly Scenario[] = [
  { id: 'meeting-tuesday', turns: MEETING_TUESDAY_TURNS },
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
  {
    // Numbers ending in 6203: a person whose greeting is as long as a machine's (outcome
    // long-greeting-human), so never reached through numberForScenario.
    id: 'long-greeting',
    lastFour: '6203',
    greeting:
      'Good afternoon, thank you for calling Riverside Dental, this is Maria speaking, how can I help you today?',
    // Past her greeting she talks like the meeting-tuesday callee, who otherwise opens with "speaking".
    turns: [['Oh, hello. What can I do for you?', MEETING_TUESDAY_TURNS[0]![1]], ...MEETING_TUESDAY_TURNS.slice(1)],
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
  const scenario = SCENARIOS.find((s) => s.id === scenarioId);
  if (!scenario) throw new Error(`unknown scenario ${scenarioId}`);
  if (scenario.lastFour && outcomeFor(scenario.lastFour) !== 'conversation') {
    throw new Error(
      `scenario ${scenarioId} is reached only by numbers ending in ${scenario.lastFour}, not a conversation`,
    );
  }
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

/** An answering-machine detector's verdict, and when it comes (seconds from answer). */
export interface PlannedDetection {
  result: MachineDetectionResult;
  atSeconds: number;
}

/** A machine's greeting is over: its beep sounds, or silence follows it (seconds from answer). */
export interface PlannedGreetingEnd {
  beep: boolean;
  atSeconds: number;
}

export interface CallPlan {
  outcome: Outcome;
  scenarioId: string | null;
  /** How long the phone rings before it is answered, busy or given up on. */
  ringSeconds: number;
  /** How long the provider lets it ring unanswered: the dial's timeout, else the provider's default. */
  ringTimeoutSeconds: number;
  utterances: PlannedUtterance[];
  /** Only when the dial asked for answering-machine detection (AMD). */
  detection: PlannedDetection | null;
  /** Only for a machine, and only with AMD. */
  greetingEnd: PlannedGreetingEnd | null;
  /**
   * When the call ends, in seconds from answer (0 when it is never answered; Infinity when nobody on
   * the line ends it, which leaves it to the caller or the provider's time limit).
   */
  hangupSeconds: number;
  /** Who ends it then; `network`: the call drops (a failure). */
  hungUpBy: 'caller' | 'callee' | 'network';
}

const ANSWER_TO_FIRST_WORD_SECONDS = 0.8;
const SILENT_WAIT_SECONDS = 5;
/** What the person who stays on the line says before they put the phone down. */
const HOLD_ON = 'Hold on a second, let me grab a pen.';
const DROP_AFTER_OPENING_SECONDS = 2.5;
const CALLER_HANGUP_AFTER_LAST_WORD_SECONDS = 1;
/** What the emulated answering machines say on answer (as the callee: providers transcribe that side). */
export const MACHINE_GREETING =
  "Hi, you've reached Sam. I can't take your call right now. Please leave a message after the tone.";
/** A detector names a machine this far into its greeting (or at the greeting's end, if sooner). */
const MACHINE_DETECTION_SECONDS = 3.5;
/** A detector names a person (or gives up on silence) by this time after answer. */
const HUMAN_DETECTION_SECONDS = 2.5;
const BEEP_AFTER_GREETING_SECONDS = 0.4;
/** The silence after a greeting without a beep before a detector calls the greeting over. */
const SILENCE_AFTER_GREETING_SECONDS = 2;
/** The pause before the agent speaks after someone else's words (or a machine's beep). */
const AGENT_AFTER_GREETING_SECONDS = 0.5;
/** A machine waiting for a message that never starts gives up this long after its greeting. */
const MACHINE_GIVES_UP_SECONDS = 30;
const FAX_HANGUP_SECONDS = 20;

/** Roughly how long a sentence takes to say at a conversational 160 words per minute. */
export function speakingSeconds(text: string): number {
  const words = text.split(/\s+/).filter((w) => w.length > 0).length;
  return Math.round((0.4 + words / 2.7) * 100) / 100;
}

function centiseconds(seconds: number): number {
  return Math.round(seconds * 100) / 100;
}

/** Utterances laid end to end on the clock from answer, with the pauses between them. */
class Script {
  readonly utterances: PlannedUtterance[] = [];
  clock = ANSWER_TO_FIRST_WORD_SECONDS;

  say(speaker: 'agent' | 'human', text: string, pauseBefore: number): PlannedUtterance {
    this.clock += pauseBefore;
    const utterance = { speaker, text, startSeconds: centiseconds(this.clock), durationSeconds: speakingSeconds(text) };
    this.utterances.push(utterance);
    this.clock += utterance.durationSeconds;
    return utterance;
  }
}

type AnsweredPlan = Omit<CallPlan, 'outcome' | 'ringSeconds' | 'ringTimeoutSeconds'>;
type Jitter = (salt: number, spread: number) => number;

export function planCall(input: {
  to: string;
  openingLine: string;
  detectMachines?: boolean;
  /**
   * Detection holds the call plan until its verdict (Vonage's `detect` and `detect_beep`): the person
   * answering hears nothing until then.
   */
  detectionHoldsCallPlan?: boolean;
  /** How long the provider lets an unanswered call ring: the dial's timeout, else its default. */
  ringTimeoutSeconds: number;
}): CallPlan {
  const outcome = outcomeFor(input.to);
  const hash = numberHash(input.to);
  const jitter: Jitter = (salt, spread) => (((((hash >>> salt) ^ (hash * (salt + 1))) >>> 0) % 1000) / 1000) * spread;
  const ringSeconds =
    outcome === 'no-answer'
      ? input.ringTimeoutSeconds
      : outcome === 'busy' || outcome === 'declined'
        ? 1.5 + jitter(3, 1)
        : 2 + jitter(5, 2);
  if (outcome === 'busy' || outcome === 'declined' || outcome === 'no-answer' || outcome === 'refused') {
    return {
      outcome,
      scenarioId: null,
      ringSeconds,
      ringTimeoutSeconds: input.ringTimeoutSeconds,
      utterances: [],
      detection: null,
      greetingEnd: null,
      hangupSeconds: 0,
      hungUpBy: outcome === 'no-answer' ? 'network' : 'callee',
    };
  }
  const opening = input.openingLine.trim().length > 0 ? input.openingLine.trim() : 'Hello, this is an automated call.';
  const detect = input.detectMachines === true;
  const answered = MACHINE_OUTCOMES.has(outcome)
    ? planMachine(outcome, opening, detect)
    : planPerson(outcome, input.to, opening, detect, detect && input.detectionHoldsCallPlan === true, jitter);
  return { outcome, ringSeconds, ringTimeoutSeconds: input.ringTimeoutSeconds, ...answered };
}

/**
 * A machine answers with its greeting. Without detection the agent takes the greeting for a
 * person and speaks after it; with detection the agent waits for the service's instruction (a
 * message to leave, or a hang-up) and, given none, the machine gives up.
 */
function planMachine(outcome: Outcome, opening: string, detect: boolean): AnsweredPlan {
  const script = new Script();
  if (outcome === 'fax') {
    // Its calling tones repeat until it hangs up: no beep and no silence, so no greeting's end
    // (Vonage's beep_timeout, at least 45 s after detection, would come after the hang-up too).
    if (!detect) script.say('agent', opening, 0);
    return {
      scenarioId: null,
      utterances: script.utterances,
      detection: detect ? { result: 'fax', atSeconds: HUMAN_DETECTION_SECONDS } : null,
      greetingEnd: null,
      hangupSeconds: FAX_HANGUP_SECONDS,
      hungUpBy: 'callee',
    };
  }
  const greeting = script.say('human', MACHINE_GREETING, 0);
  const greetingOver = greeting.startSeconds + greeting.durationSeconds;
  const beep = outcome === 'machine-beep';
  const greetingEnd = {
    beep,
    atSeconds: centiseconds(greetingOver + (beep ? BEEP_AFTER_GREETING_SECONDS : SILENCE_AFTER_GREETING_SECONDS)),
  };
  if (detect) {
    const detectedAt = Math.min(greeting.startSeconds + MACHINE_DETECTION_SECONDS, greetingOver);
    return {
      scenarioId: null,
      utterances: script.utterances,
      detection: { result: 'machine', atSeconds: centiseconds(detectedAt) },
      greetingEnd,
      hangupSeconds: centiseconds(greetingEnd.atSeconds + MACHINE_GIVES_UP_SECONDS),
      hungUpBy: 'callee',
    };
  }
  script.clock = greetingEnd.atSeconds;
  script.say('agent', opening, AGENT_AFTER_GREETING_SECONDS);
  return {
    scenarioId: null,
    utterances: script.utterances,
    detection: null,
    greetingEnd: null,
    hangupSeconds: centiseconds(script.clock + CALLER_HANGUP_AFTER_LAST_WORD_SECONDS),
    hungUpBy: 'caller',
  };
}

/** A person answers: the agent opens (unless the scenario's person greets first) and they talk. */
function planPerson(
  outcome: Outcome,
  to: string,
  opening: string,
  detect: boolean,
  held: boolean,
  jitter: Jitter,
): AnsweredPlan {
  const script = new Script();
  // Held until the verdict: a person who does not greet first hears silence until then.
  const beforeOpening = held ? HUMAN_DETECTION_SECONDS : 0;
  let scenario: Scenario | null = null;
  if (outcome === 'drop-after-answer') {
    script.say('agent', opening, beforeOpening);
    script.clock += DROP_AFTER_OPENING_SECONDS;
  } else if (outcome === 'stays-on-line') {
    script.say('agent', opening, beforeOpening);
    script.say('human', HOLD_ON, 0.6);
    // Nobody on the line hangs up: the caller does, or the provider's time limit ends the call.
    script.clock = Infinity;
  } else if (outcome === 'silent') {
    script.say('agent', opening, beforeOpening);
    script.say('agent', 'Hello? Is anyone there?', SILENT_WAIT_SECONDS);
    script.say('agent', "It seems I can't hear you. I'll try again another time. Goodbye.", SILENT_WAIT_SECONDS - 1);
    script.clock += CALLER_HANGUP_AFTER_LAST_WORD_SECONDS;
  } else {
    scenario = scenarioFor(to);
    if (scenario.greeting) script.say('human', scenario.greeting, 0);
    script.say('agent', opening, scenario.greeting ? AGENT_AFTER_GREETING_SECONDS : beforeOpening);
    scenario.turns.forEach(([human, agent], i) => {
      script.say('human', human, 0.6 + jitter(i + 7, 0.8));
      script.say('agent', agent, 0.5 + jitter(i + 11, 0.6));
    });
    script.clock += CALLER_HANGUP_AFTER_LAST_WORD_SECONDS;
  }
  return {
    scenarioId: scenario?.id ?? null,
    utterances: script.utterances,
    detection: detect ? personDetection(outcome, script.utterances, scenario?.greeting !== undefined) : null,
    greetingEnd: null,
    hangupSeconds: centiseconds(script.clock),
    hungUpBy: outcome === 'drop-after-answer' ? 'network' : 'caller',
  };
}

/** A person is named once they have spoken (or by 2.5 s); a long greeting is waited out, never a machine's. */
function personDetection(outcome: Outcome, utterances: PlannedUtterance[], greetsFirst: boolean): PlannedDetection {
  if (outcome === 'silent') return { result: 'unknown', atSeconds: HUMAN_DETECTION_SECONDS };
  const first = utterances.find((u) => u.speaker === 'human');
  const firstOver = first ? first.startSeconds + first.durationSeconds : HUMAN_DETECTION_SECONDS;
  return {
    result: 'human',
    atSeconds: centiseconds(greetsFirst ? firstOver : Math.min(HUMAN_DETECTION_SECONDS, firstOver)),
  };
}

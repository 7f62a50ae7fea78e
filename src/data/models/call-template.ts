import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { MACHINE_DETECTION_MODES } from '../../contracts/machine-detection';
import { REDIAL_OUTCOMES } from '../../contracts/redial';

const customTagSchema = new Schema(
  {
    name: { type: String, required: true },
    triggerPhrases: { type: [String], default: [] },
  },
  { _id: false },
);

const callingHoursRuleSchema = new Schema(
  {
    /** ISO weekdays, 1 = Monday ... 7 = Sunday. */
    days: { type: [Number], required: true },
    start: { type: String, required: true },
    end: { type: String, required: true },
  },
  { _id: false },
);

/** When callees may be rung, in their own time zone (src/calling-hours/calling-window.ts). */
const callingWindowSchema = new Schema(
  {
    rules: { type: [callingHoursRuleSchema], default: [] },
    skipDates: { type: [String], default: [] },
  },
  { _id: false },
);

/** Which unanswered outcomes are dialled again (src/contracts/redial.ts). */
const redialPolicySchema = new Schema(
  {
    on: { type: [String], enum: REDIAL_OUTCOMES, required: true },
    maxRedials: { type: Number, required: true },
    spacingSeconds: { type: Number, required: true },
  },
  { _id: false },
);

const callTemplateSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, ref: 'Team', required: true, index: true },
    name: { type: String, required: true },
    /** Prompt text; variables are written {{name}}. */
    prompt: { type: String, required: true },
    /** Every {{variable}} the prompt uses (derived from the prompt when the template is made). */
    variables: { type: [String], default: [] },
    /** Variables a call must give a value for. */
    requiredVariables: { type: [String], default: [] },
    resultColumns: { type: [String], default: [] },
    customTags: { type: [customTagSchema], default: [] },
    voiceId: { type: Number, default: null },
    /** A call that is answered but never reports an end is hung up after this long. */
    maxDurationSeconds: { type: Number, default: 900 },
    /** The callee's time zone for reading spoken meeting times (IANA). */
    timeZone: { type: String, default: 'UTC' },
    /** Absent: calls are placed at any hour. */
    callingWindow: { type: callingWindowSchema, default: null },
    /** Absent: one attempt per call. */
    redialPolicy: { type: redialPolicySchema, default: null },
    /** Answering-machine detection (src/contracts/machine-detection.ts). */
    machineDetection: { type: String, enum: MACHINE_DETECTION_MODES, default: 'off' },
    /** What `leaveMessage` speaks after a machine's greeting; {{variables}} like the prompt. */
    voicemailMessage: { type: String, default: null },
  },
  { timestamps: true },
);

export type CallTemplateDoc = InferSchemaType<typeof callTemplateSchema> & { _id: Types.ObjectId };
export const CallTemplate = model('CallTemplate', callTemplateSchema);

/** The distinct {{variable}} names a prompt uses, in order of first use. */
export function promptVariables(prompt: string): string[] {
  const names = [...prompt.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].map((m) => m[1]!);
  return [...new Set(names)];
}

// Where an optional variable without a value stood, while the sentence around it is tidied.
const GAP = '\u0000';

/**
 * Fills {{variable}} placeholders. A variable without a value (or with an empty one) is left out
 * with the space around it, so that the line still reads as a sentence: "Hello {{firstName}}, this
 * is Ada" without a name says "Hello, this is Ada", not "Hello , this is Ada".
 */
export function fillPrompt(prompt: string, values: ReadonlyArray<{ key: string; value: string }>): string {
  const byKey = new Map(values.map((v) => [v.key, v.value]));
  const filled = prompt
    .replaceAll(GAP, '')
    .replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => byKey.get(name) || GAP);
  if (!filled.includes(GAP)) return filled;
  // Joined piece by piece, without regular expressions: values may hold long runs of blanks.
  const pieces = filled.split(GAP);
  let line = pieces[0]!;
  for (let i = 1; i < pieces.length; i++) line = joinOverGap(line, pieces[i]!, i === pieces.length - 1);
  return line;
}

const isBlank = (char: string | undefined) => char === ' ' || char === '\t';

/** `before` and `after` joined where a variable without a value stood. */
function joinOverGap(before: string, after: string, last: boolean): string {
  let end = before.length;
  while (end > 0 && isBlank(before[end - 1])) end--;
  let start = 0;
  while (start < after.length && isBlank(after[start])) start++;
  const left = before.slice(0, end);
  let right = after.slice(start);
  const spaced = end < before.length || start > 0;
  if (left === '') {
    // The start of the line: "{{name}}, welcome" says "welcome".
    if (right && ',;:'.includes(right[0]!)) {
      let from = 1;
      while (from < right.length && isBlank(right[from])) from++;
      right = right.slice(from);
    }
    return right;
  }
  // Another gap follows: keep one space for what comes after it.
  if (right === '') return last ? left : left + (spaced ? ' ' : '');
  if (',.!?;:'.includes(right[0]!)) return left + right;
  return left + (spaced ? ' ' : '') + right;
}

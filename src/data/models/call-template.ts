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

/** A {{variable}} placeholder: a name of ASCII letters, digits and `_`, not starting with a digit. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The distinct {{variable}} names a prompt uses, in order of first use. */
export function promptVariables(prompt: string): string[] {
  const names = [...prompt.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  return [...new Set(names)];
}

/**
 * What in a prompt looks like a placeholder but is not one (`{{first-name}}`, `{{first name}}`,
 * `{{prénom}}`, `{{firstName}` with a brace missing, a brace beside a placeholder as in
 * `{{{firstName}}}`): never filled, it would be spoken as written. A spoken line has no braces.
 */
export function malformedPlaceholders(prompt: string): string[] {
  const rest = prompt.replace(PLACEHOLDER, ' ');
  return [...new Set([...rest.matchAll(/\{\{[^{}]{0,40}\}{0,2}|\}\}|[{}]/g)].map((m) => m[0]))];
}

// Where an optional variable without a value stood, while the sentence around it is tidied.
const GAP = '\u0000';

/**
 * Fills {{variable}} placeholders. A variable without a value (or with an empty or blank one) is left
 * out with the space around it, so that the line still reads as a sentence: "Hello {{firstName}}, this
 * is Ada" without a name says "Hello, this is Ada", not "Hello , this is Ada".
 */
export function fillPrompt(prompt: string, values: ReadonlyArray<{ key: string; value: string }>): string {
  const byKey = new Map(values.map((v) => [v.key, v.value]));
  const filled = prompt.replaceAll(GAP, '').replace(PLACEHOLDER, (_, name: string) => {
    const value = byKey.get(name);
    return value === undefined || value.trim() === '' ? GAP : value;
  });
  if (!filled.includes(GAP)) return filled;
  // Joined piece by piece into `out`, without regular expressions and trimming only what is dropped,
  // so the work stays linear in the line's length.
  const pieces = filled.split(GAP);
  const out: string[] = [pieces[0]!];
  for (let i = 1; i < pieces.length; i++) joinOverGap(out, pieces[i]!, i === pieces.length - 1);
  return out.join('');
}

const isBlank = (char: string | undefined) => char === ' ' || char === '\t';
const PUNCTUATION = ',.!?;:';
const PAUSES = ',;:';

/** The last character of `out`, dropping blank characters at its end when `trim` is set. */
function lastOf(out: string[], trim: boolean): { char: string | undefined; trimmed: boolean } {
  let trimmed = false;
  while (out.length) {
    let text = out[out.length - 1]!;
    let end = text.length;
    while (end > 0 && isBlank(text[end - 1])) end--;
    if (end < text.length) {
      trimmed = true;
      if (trim) out[out.length - 1] = text = text.slice(0, end);
    }
    if (end > 0) return { char: text[end - 1], trimmed };
    if (!trim) return { char: undefined, trimmed };
    out.pop();
  }
  return { char: undefined, trimmed };
}

/** Appends `after` to `out` where a variable without a value stood. */
function joinOverGap(out: string[], after: string, last: boolean): void {
  const { char: before, trimmed } = lastOf(out, true);
  let start = 0;
  while (start < after.length && isBlank(after[start])) start++;
  const spaced = trimmed || start > 0;
  let right = after.slice(start);
  const lineStart = before === undefined || before === '\n' || before === '\r';
  if (lineStart) {
    // The start of a line: "{{name}}, welcome" says "welcome".
    let from = 0;
    while (from < right.length && (PUNCTUATION.includes(right[from]!) || isBlank(right[from]))) from++;
    right = right.slice(from);
  } else if (right && PUNCTUATION.includes(right[0]!) && PAUSES.includes(before)) {
    // "Thanks, {{name}}!" says "Thanks!": the pause before the gap goes with it.
    const text = out[out.length - 1]!;
    out[out.length - 1] = text.slice(0, -1);
  } else if (right === '') {
    // Another gap or the end follows: keep one space for what comes after it.
    if (!last && spaced) out.push(' ');
    return;
  } else if (!PUNCTUATION.includes(right[0]!) && right[0] !== '\n' && right[0] !== '\r' && spaced) {
    out.push(' ');
  }
  out.push(right);
}

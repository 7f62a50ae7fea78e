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

/** Fills {{variable}} placeholders; a variable without a value is left empty. */
export function fillPrompt(prompt: string, values: ReadonlyArray<{ key: string; value: string }>): string {
  const byKey = new Map(values.map((v) => [v.key, v.value]));
  return prompt.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => byKey.get(name) ?? '');
}

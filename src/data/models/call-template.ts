import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

const customTagSchema = new Schema(
  {
    name: { type: String, required: true },
    triggerPhrases: { type: [String], default: [] },
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

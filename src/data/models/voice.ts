import { Schema, model, type InferSchemaType } from 'mongoose';

// The catalogue of synthetic voices, loaded from src/voices/catalogue.json at API start.
const voiceSchema = new Schema({
  id: { type: Number, required: true, unique: true },
  voiceName: { type: String, required: true },
  /** Stored as the source gives it: its letter case varies between records. */
  gender: { type: String, required: true },
  isRecommended: { type: Boolean, required: true },
  language: { type: String, required: true },
  espeakVoice: { type: String, required: true },
  sampleText: { type: String, required: true },
});

export type VoiceDoc = InferSchemaType<typeof voiceSchema>;
export const Voice = model('Voice', voiceSchema);

import { Voice } from '../data/models/voice';
import { VOICE_CATALOGUE } from './catalogue';

/**
 * Makes MongoDB's voices the catalogue file's: each upserted (one conditional write per voice; safe on
 * every start), and one the file no longer has removed, as `template create --voice-id` (which reads
 * the file) no longer takes it (before, GET /v1/voices went on listing it).
 */
export async function syncVoiceCatalogue(): Promise<void> {
  await Voice.bulkWrite(
    VOICE_CATALOGUE.map((voice) => ({
      updateOne: { filter: { id: voice.id }, update: { $set: { ...voice } }, upsert: true },
    })),
  );
  await Voice.deleteMany({ id: { $nin: VOICE_CATALOGUE.map((voice) => voice.id) } });
}

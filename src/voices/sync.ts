import { Voice } from '../data/models/voice';
import { VOICE_CATALOGUE } from './catalogue';

/** Upserts the catalogue file into MongoDB (one conditional write per voice; safe on every start). */
export async function syncVoiceCatalogue(): Promise<void> {
  await Voice.bulkWrite(
    VOICE_CATALOGUE.map((voice) => ({
      updateOne: { filter: { id: voice.id }, update: { $set: { ...voice } }, upsert: true },
    })),
  );
}

// The service's catalogue of synthetic voices (decisions.md "Voices"), kept in catalogue.json and
// checked here so that a bad edit to the data file fails at start-up and in the tests, not when
// a caller lists voices or a sample is rendered. `gender` keeps the letter case the source gives
// (the interface says it varies between records); compare it case-insensitively.
import { z } from 'zod';
import rawCatalogue from './catalogue.json';

const GENDERS = ['female', 'male', 'neutral'];

/** An espeak-ng voice with a variant, e.g. 'en-gb-scotland+f4': language, then '+' and variant. */
const ESPEAK_VOICE = /^[a-z]{2,3}(?:-[a-z0-9]+)*\+[a-z]+[0-9]*$/;

function isBcp47(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

const primaryLanguage = (tag: string) => tag.split(/[-+]/)[0].toLowerCase();

export const voiceSchema = z
  .strictObject({
    id: z.number().int().positive(),
    voiceName: z.string().trim().min(1),
    gender: z.string().refine((g) => GENDERS.includes(g.toLowerCase()), {
      error: `gender must be one of ${GENDERS.join(', ')} (any case)`,
    }),
    isRecommended: z.boolean(),
    language: z.string().refine(isBcp47, { error: 'language must be a BCP 47 tag' }),
    espeakVoice: z
      .string()
      .regex(ESPEAK_VOICE, { error: "espeakVoice must be an espeak-ng voice and variant, e.g. 'en-us+f3'" }),
    sampleText: z.string().trim().min(1),
  })
  .refine((v) => primaryLanguage(v.language) === primaryLanguage(v.espeakVoice), {
    error: 'espeakVoice must speak the language of the voice',
    path: ['espeakVoice'],
  });

export type CatalogueVoice = z.infer<typeof voiceSchema>;

/** At least a dozen voices (decisions.md), each id, name and espeak-ng voice used once. */
export const catalogueSchema = z
  .array(voiceSchema)
  .min(12)
  .superRefine((voices, ctx) => {
    for (const key of ['id', 'voiceName', 'espeakVoice'] as const) {
      const seen = new Set<unknown>();
      voices.forEach((voice, index) => {
        if (seen.has(voice[key])) {
          ctx.addIssue({ code: 'custom', message: `duplicate ${key} ${String(voice[key])}`, path: [index, key] });
        }
        seen.add(voice[key]);
      });
    }
  });

/** Parses catalogue data; throws with every problem listed when it is invalid. */
export function parseVoiceCatalogue(data: unknown): CatalogueVoice[] {
  const parsed = catalogueSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`invalid voice catalogue: ${problems.join('; ')}`);
  }
  return parsed.data;
}

export const VOICE_CATALOGUE: readonly CatalogueVoice[] = Object.freeze(parseVoiceCatalogue(rawCatalogue));

export function findVoice(id: number): CatalogueVoice | undefined {
  return VOICE_CATALOGUE.find((v) => v.id === id);
}

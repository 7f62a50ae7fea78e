// One utterance as the API and the `transcript.created` event show it, typed by its response schema.
import type { z } from 'zod';
import type { transcriptViewSchema } from '../schemas/responses';
import type { TranscriptDoc } from './models/transcript';

export type TranscriptView = z.output<typeof transcriptViewSchema>;

export function toTranscriptView(doc: TranscriptDoc): TranscriptView {
  return {
    _id: doc._id.toHexString(),
    teamId: doc.teamId.toHexString(),
    phoneCallId: doc.phoneCallId.toHexString(),
    text: doc.text,
    speaker: doc.speaker,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

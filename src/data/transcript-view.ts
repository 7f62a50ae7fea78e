import type { TranscriptDoc } from './models/transcript';

export type TranscriptView = ReturnType<typeof toTranscriptView>;
export function toTranscriptView(doc: TranscriptDoc) {
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

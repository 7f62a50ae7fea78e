import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

const transcriptSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, required: true },
    phoneCallId: { type: Schema.Types.ObjectId, required: true },
    text: { type: String, required: true },
    speaker: { type: String, enum: ['agent', 'human'], required: true },
    /** Position in the conversation; createdAt follows spoken order too. */
    sequence: { type: Number, required: true },
    // The UTC day, ten minutes and minute it was said in (`<team>:d:<n>`, `<team>:s:<n>`,
    // `<team>:m:<n>`): the keys a team-wide page reads it by (src/data/transcript-list.ts). Rows of
    // releases before these get them once, at an API's start.
    listDay: { type: String },
    listSlice: { type: String },
    listMinute: { type: String },
  },
  { timestamps: true },
);
transcriptSchema.index({ teamId: 1, phoneCallId: 1, createdAt: 1, _id: 1 });
// What a team-wide page read before parts of time, and the query the bench compares it with: kept so
// that databases made before and after agree.
transcriptSchema.index({ teamId: 1, createdAt: 1, _id: 1 });
transcriptSchema.index({ listDay: 1 });
transcriptSchema.index({ listSlice: 1 });
transcriptSchema.index({ listMinute: 1 });

export type TranscriptDoc = InferSchemaType<typeof transcriptSchema> & {
  _id: Types.ObjectId;
  createdAt: Date;
  updatedAt: Date;
};
export const Transcript = model('Transcript', transcriptSchema);

import { Schema, model } from 'mongoose';

// The parts of time that hold a team's transcript rows (src/data/transcript-list.ts): one document per
// UTC month with rows, under the team's root key; per day with rows, under its month; per ten minutes
// with rows, under its day. Written before the rows they name and never removed, so a page walking
// them misses no row.
const transcriptSliceSchema = new Schema(
  {
    /** `<team>:M:<month>`, `<team>:d:<day>` or `<team>:s:<slice>` (TRANSCRIPT_SLICE_KEYS). */
    _id: { type: String, required: true },
    /** The key of the part above: the team's root for a month, its month for a day, its day for a slice. */
    parent: { type: String, required: true },
    /** The first instant of the slice. */
    start: { type: Date, required: true },
    /**
     * A ten-minute slice's rows per call (call id in hex), as its last capture wrote them: an estimate
     * that plans how many slices a page reads at once, never what it returns (a deleted call's are
     * taken off; a transcript re-captured into other slices leaves its old counts behind).
     */
    counts: { type: Schema.Types.Mixed },
  },
  { versionKey: false },
);
transcriptSliceSchema.index({ parent: 1 });

export interface TranscriptSliceDoc {
  _id: string;
  parent: string;
  start: Date;
  counts?: Record<string, number>;
}
export const TranscriptSlice = model('TranscriptSlice', transcriptSliceSchema);

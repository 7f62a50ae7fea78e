import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

// A piece of a recording too large for one document (a call of more than about 9 minutes at 8 kHz):
// MongoDB and FerretDB take at most 16 MiB in one, and a refused write cost the call its transcript
// and results too. Each write of a recording writes its pieces under a generation of its own, numbered
// from 0, then points the recording at them (`chunkGen`, `chunkCount`): writes that overlap (a capture
// try past its timeout beside the next) never mix their pieces, nor remove the ones the recording names.
const recordingChunkSchema = new Schema({
  phoneCallId: { type: Schema.Types.ObjectId, required: true },
  gen: { type: String, required: true },
  n: { type: Number, required: true },
  data: { type: Buffer, required: true },
});
recordingChunkSchema.index({ phoneCallId: 1, gen: 1, n: 1 }, { unique: true });

export type RecordingChunkDoc = InferSchemaType<typeof recordingChunkSchema> & { _id: Types.ObjectId };
export const RecordingChunk = model('RecordingChunk', recordingChunkSchema);

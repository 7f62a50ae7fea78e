import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

// A call's recording, copied from the provider so that its URL keeps working after the provider
// deletes its copy. Served without the API key at /recordings/<token>.wav; the token is the secret.
const recordingSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, required: true },
    phoneCallId: { type: Schema.Types.ObjectId, required: true, unique: true },
    token: { type: String, required: true, unique: true },
    contentType: { type: String, required: true, default: 'audio/wav' },
    /** The audio, when it fits one document (RECORDING_CHUNK_BYTES at most); else in `chunkCount` RecordingChunks. */
    audio: { type: Buffer },
    /** The generation of RecordingChunks holding the audio, and how many pieces it has. */
    chunkGen: { type: String },
    chunkCount: { type: Number },
    /** Bytes of audio in all. */
    size: { type: Number },
  },
  { timestamps: true },
);

export type RecordingDoc = InferSchemaType<typeof recordingSchema> & { _id: Types.ObjectId };
export const Recording = model('Recording', recordingSchema);

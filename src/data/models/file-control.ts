import { Schema, model, type Types } from 'mongoose';

// The last control an operator gave a file (`POST /v1/phoneCalls/file/{fileId}/pause|resume|cancel`),
// kept so that it also reaches the calls of chunks still arriving: an import sends a file in several
// batch creates, and a control given while it runs acted only on the calls already written. One
// document per team and file, written whole by each control (the last one wins).
const fileControlSchema = new Schema(
  {
    /** `<teamId>:<fileId>`. */
    _id: { type: String, required: true },
    teamId: { type: Schema.Types.ObjectId, required: true },
    fileId: { type: String, required: true },
    state: { type: String, enum: ['paused', 'resumed', 'cancelled'], required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);

export const FileControl = model('FileControl', fileControlSchema);

export type FileState = 'paused' | 'resumed' | 'cancelled';

const idOf = (teamId: string | Types.ObjectId, fileId: string) => `${String(teamId)}:${fileId}`;

/** Keeps the file's control: the calls of its later chunks take it (fileStateOf). */
export async function setFileState(teamId: string, fileId: string, state: FileState): Promise<void> {
  await FileControl.replaceOne(
    { _id: idOf(teamId, fileId) },
    { teamId, fileId, state, updatedAt: new Date() },
    { upsert: true },
  );
}

/** The file's last control; `resumed` when it has none. */
export async function fileStateOf(teamId: string | Types.ObjectId, fileId: string): Promise<FileState> {
  const found = await FileControl.findById(idOf(teamId, fileId), { state: 1 }).lean();
  return (found?.state as FileState | undefined) ?? 'resumed';
}

/** Whether the file was ever given a control (a file all of whose calls were cancelled still has one). */
export async function fileControlled(teamId: string, fileId: string): Promise<boolean> {
  return (await FileControl.exists({ _id: idOf(teamId, fileId) })) !== null;
}

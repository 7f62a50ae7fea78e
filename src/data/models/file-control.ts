import { Schema, model, type Types } from 'mongoose';
import { upsertRacingInserts } from '../duplicate-key';

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

/**
 * How long a control reaches the file's later chunks: an import sends its chunks within minutes, and
 * a create with the same fileId long after (the same CSV imported again, its fileId a hash of its
 * content) is a new import, which a control of the last one does not hold back.
 */
export const FILE_CONTROL_REACH_MS = 24 * 60 * 60 * 1000;

export type FileState = 'paused' | 'resumed' | 'cancelled';

const idOf = (teamId: string | Types.ObjectId, fileId: string) => `${String(teamId)}:${fileId}`;

/** Keeps the file's control: the calls of its later chunks take it (fileStateOf). */
export async function setFileState(teamId: string, fileId: string, state: FileState): Promise<void> {
  const write = () =>
    FileControl.replaceOne(
      { _id: idOf(teamId, fileId) },
      { teamId, fileId, state, updatedAt: new Date() },
      { upsert: true },
    );
  // The first controls of a file at once race to insert its document.
  await upsertRacingInserts(write);
}

const reachingSince = () => new Date(Date.now() - FILE_CONTROL_REACH_MS);

/** The file's last control within FILE_CONTROL_REACH_MS; `resumed` when it has none. */
export async function fileStateOf(teamId: string | Types.ObjectId, fileId: string): Promise<FileState> {
  const found = await FileControl.findById(idOf(teamId, fileId), { state: 1, updatedAt: 1 }).lean();
  return found && found.updatedAt > reachingSince() ? (found.state as FileState) : 'resumed';
}

/** Whether the file was given a control within FILE_CONTROL_REACH_MS (its calls may all be cancelled). */
export async function fileControlled(teamId: string, fileId: string): Promise<boolean> {
  return (await FileControl.exists({ _id: idOf(teamId, fileId), updatedAt: { $gt: reachingSince() } })) !== null;
}

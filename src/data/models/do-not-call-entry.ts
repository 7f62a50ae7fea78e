import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

/** Who put a number on a team's do-not-call list. */
export const DNC_SOURCES = ['api', 'cli', 'callee'] as const;
export type DncSource = (typeof DNC_SOURCES)[number];

/**
 * One number a team must never call, with who listed it, why and when. One document per team and
 * number (the unique index), so adding a listed number again is a no-op that keeps the first entry.
 */
const doNotCallEntrySchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, ref: 'Team', required: true },
    /** E.164, normalised the way a call's `toPhoneNumber` is, so the two compare as strings. */
    phoneNumber: { type: String, required: true },
    reason: { type: String, default: '' },
    source: { type: String, enum: DNC_SOURCES, required: true },
    /** The API key that listed it (source `api`). */
    keyId: { type: Schema.Types.ObjectId, default: null },
    /** The call on which the callee asked not to be called again (source `callee`). */
    callId: { type: Schema.Types.ObjectId, default: null },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
doNotCallEntrySchema.index({ teamId: 1, phoneNumber: 1 }, { unique: true });
// A team's list page, newest first (do-not-call-store.ts): a range of this index on MongoDB, not a sort
// of the team's whole list. (FerretDB 1.x uses no such index; it sorts the team's entries in memory.)
doNotCallEntrySchema.index({ teamId: 1, createdAt: -1, _id: -1 });

export type DoNotCallEntryDoc = InferSchemaType<typeof doNotCallEntrySchema> & {
  _id: Types.ObjectId;
  createdAt: Date;
};
export const DoNotCallEntry = model('DoNotCallEntry', doNotCallEntrySchema, 'do_not_call_entries');

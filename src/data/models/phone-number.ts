import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { PROVIDERS } from '../../contracts/providers';

const phoneNumberSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, ref: 'Team', required: true, index: true },
    /** E.164. */
    number: { type: String, required: true },
    provider: { type: String, enum: PROVIDERS, required: true },
  },
  { timestamps: true },
);
phoneNumberSchema.index({ teamId: 1, number: 1 }, { unique: true });

export type PhoneNumberDoc = InferSchemaType<typeof phoneNumberSchema> & { _id: Types.ObjectId };
export const PhoneNumber = model('PhoneNumber', phoneNumberSchema);

import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { SCOPES } from '../../contracts/scopes';

const apiKeySchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, ref: 'Team', required: true, index: true },
    name: { type: String, default: '' },
    /** SHA-256 (hex) of the key's secret part; the plain key is shown once, at creation. */
    secretHash: { type: String, required: true },
    scopes: { type: [String], enum: SCOPES, required: true },
    expiresAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
  },
  { timestamps: true },
);

export type ApiKeyDoc = InferSchemaType<typeof apiKeySchema> & { _id: Types.ObjectId };
export const ApiKey = model('ApiKey', apiKeySchema);

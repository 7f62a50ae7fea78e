import { Schema, model, type InferSchemaType } from 'mongoose';
import { PROVIDERS } from '../../contracts/providers';

const providerSettingsSchema = new Schema(
  {
    provider: { type: String, enum: PROVIDERS, required: true },
    /** Numbers a call may be placed from when the request names none (E.164). */
    fromNumbers: { type: [String], default: [] },
    /** The provider's credentials, sealed with ENCRYPTION_KEY (src/crypto/secret-box.ts). */
    credentialsSealed: { type: String },
  },
  { _id: false },
);

/** Limits the team's pacer enforces; a missing value takes the service default (src/contracts/pacing.ts). */
const pacingSchema = new Schema(
  {
    maxConcurrentCalls: { type: Number },
    dialsPerSecond: {
      type: new Schema({ twilio: Number, vonage: Number, telnyx: Number }, { _id: false }),
      default: undefined,
    },
  },
  { _id: false },
);

const teamSchema = new Schema(
  {
    name: { type: String, required: true, trim: true },
    defaultProvider: { type: String, enum: PROVIDERS, required: true, default: 'twilio' },
    providerSettings: { type: [providerSettingsSchema], default: [] },
    pacing: { type: pacingSchema, default: undefined },
  },
  { timestamps: true },
);

export type TeamDoc = InferSchemaType<typeof teamSchema> & { _id: import('mongoose').Types.ObjectId };
export const Team = model('Team', teamSchema);

import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

const webhookSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, required: true },
    url: { type: String, required: true },
    subscribedEvents: { type: [String], required: true },
    method: { type: String, enum: ['GET', 'POST'], required: true },
    /** Sealed with ENCRYPTION_KEY; shown once, in the create answer. */
    secretSealed: { type: String, required: true },
    createAt: { type: Date },
    updatedAt: { type: Date },
  },
  // The interface spells the creation time `createAt` on webhooks.
  { timestamps: { createdAt: 'createAt', updatedAt: 'updatedAt' } },
);
webhookSchema.index({ teamId: 1 });

export type WebhookDoc = InferSchemaType<typeof webhookSchema> & { _id: Types.ObjectId };
export const Webhook = model('Webhook', webhookSchema);

import { Schema, model, type InferSchemaType, type Types } from 'mongoose';

const attemptSchema = new Schema(
  {
    attempt: { type: Number, required: true },
    attemptedAt: { type: Date, required: true },
    statusCode: { type: Number, default: null },
    durationMs: { type: Number, required: true },
    error: { type: String, default: null },
  },
  { _id: false },
);

/** A call has a few events per endpoint; a list of its deliveries stops here whatever happens. */
export const MAX_DELIVERIES_PER_CALL = 1_000;

// One document per event per endpoint, with every attempt made to deliver it.
const webhookDeliverySchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, required: true },
    phoneCallId: { type: Schema.Types.ObjectId, required: true },
    webhookId: { type: Schema.Types.ObjectId, default: null },
    endpointKey: { type: String, required: true },
    eventId: { type: String, required: true },
    eventType: { type: String, required: true },
    url: { type: String, required: true },
    method: { type: String, enum: ['GET', 'POST'], required: true },
    state: { type: String, enum: ['pending', 'delivered', 'failed', 'gone'], required: true },
    attempts: { type: [attemptSchema], default: [] },
    // The event as first sent (type, timestamp, data), kept so an operator can redeliver it.
    event: {
      type: new Schema(
        { type: { type: String }, timestamp: { type: String }, data: { type: Schema.Types.Mixed } },
        { _id: false },
      ),
      default: null,
    },
    /**
     * The order of the write that set `state`, `url` and `method` (deliveryWriteOrder in
     * webhook-store.ts); a write of a lower order only adds its attempt. Absent on records written
     * before it was kept.
     */
    writeOrder: { type: Number },
    /** How many redeliveries were started: each one's workflow id is numbered by it. */
    redeliveries: { type: Number, default: 0 },
  },
  { timestamps: true },
);
webhookDeliverySchema.index({ eventId: 1, endpointKey: 1 }, { unique: true });
webhookDeliverySchema.index({ teamId: 1, phoneCallId: 1 });

export type WebhookDeliveryDoc = InferSchemaType<typeof webhookDeliverySchema> & { _id: Types.ObjectId };
export const WebhookDelivery = model('WebhookDelivery', webhookDeliverySchema);

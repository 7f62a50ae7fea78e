import { Schema, model } from 'mongoose';

// One fixed window of one API key's requests, shared by every API process (src/api/rate-limit.ts).
// `_id` is `<keyId>:<s|m>:<window start in ms>`.
const rateLimitWindowSchema = new Schema(
  {
    _id: { type: String, required: true },
    count: { type: Number, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// MongoDB removes ended windows itself; on FerretDB (no TTL monitor) the limiter deletes them.
rateLimitWindowSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

export const RateLimitWindow = model('RateLimitWindow', rateLimitWindowSchema);

import { Schema, model } from 'mongoose';

// One API process's count in one fixed window of one API key's requests (src/api/rate-limit.ts): each
// process writes only its own document, and the window's total is the sum over them. `_id` is
// `<window>:<process>`, `window` is `<keyId>:<s|m>:<window start in ms>`.
const rateLimitWindowSchema = new Schema(
  {
    _id: { type: String, required: true },
    window: { type: String, required: true },
    count: { type: Number, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// On FerretDB the table holds only the windows of the last minutes (the limiter removes ended ones):
// read whole, it needs no index of its own there.
rateLimitWindowSchema.index({ window: 1 });
// MongoDB removes ended windows itself; on FerretDB (no TTL monitor) the limiter deletes them.
rateLimitWindowSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

export const RateLimitWindow = model('RateLimitWindow', rateLimitWindowSchema);

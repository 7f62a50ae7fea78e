// A batch of calls: how many one request may create, and what its controls do. Plain data, shared by
// the API's schemas and routes and the CLI's help (which must not load the database or Temporal code).
export const MAX_BATCH = 10_000;
/** The operations an Idempotency-Key of a create is kept under (its record's `scope`). */
export const BATCH_CREATE_SCOPE = 'POST /v1/phoneCalls/batch';
export const SINGLE_CREATE_SCOPE = 'POST /v1/phoneCalls';
export const BATCH_ACTIONS = ['pause', 'resume', 'cancel'] as const;
export type BatchAction = (typeof BATCH_ACTIONS)[number];

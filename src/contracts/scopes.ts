// What an API key may be allowed to do (decisions.md "Authentication and tenancy"): stored on each
// key, checked by every route, listed by the CLI's help. Plain data: no database or Temporal code
// loads with it.
export const SCOPES = [
  'calls:read',
  'calls:write',
  'webhooks:read',
  'webhooks:write',
  'voices:read',
  'transcripts:read',
  'dnc:read',
  'dnc:write',
] as const;
export type Scope = (typeof SCOPES)[number];

// A typed client of the public API, generated from its OpenAPI document (api-types.generated.ts,
// `npm run api-types`) over openapi-fetch: paths, parameters, bodies and answers are checked by the
// compiler against the document the server serves. The operator CLI and the tests use it.
import createClient from 'openapi-fetch';
import type { components, paths } from './api-types.generated';
import { API_KEY_HEADER } from '../contracts/api-key-header';

export type { components, paths };
export type ApiSchemas = components['schemas'];
export type ApiClient = ReturnType<typeof createApiClient>;

export interface ApiClientOptions {
  /** The API's base URL, e.g. http://localhost:3000. */
  baseUrl: string;
  /** The team's API key (`service-api-key`); left out for the public endpoints. */
  key?: string;
  /** Each request's time budget; none by default. */
  timeoutMs?: number;
}

export function createApiClient({ baseUrl, key, timeoutMs }: ApiClientOptions) {
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: key ? { [API_KEY_HEADER]: key } : {},
    ...(timeoutMs ? { fetch: (request: Request) => fetch(request, { signal: AbortSignal.timeout(timeoutMs) }) } : {}),
  });
}

/** The messages of an answer in the API's error shape (`{ error: { code, message: [...] } }`). */
export function errorMessages(error: unknown): string[] {
  const message = (error as { error?: { message?: unknown } } | undefined)?.error?.message;
  return Array.isArray(message) ? message.map(String) : [];
}

// The API as the operator commands reach it: the typed client (src/client) with the team's key, and
// every answer turned into either its data or an error carrying the API's own messages: a command
// error (exit code 2) when the API refuses the input, an ApiUnavailableError (exit code 1) when it
// cannot answer (README, "Operator command line").
import { createApiClient, errorMessages, type ApiClient } from '../client/api-client';
import { CommandError } from './command-error';

export interface ApiTarget {
  apiUrl: string;
  key: string | undefined;
}

export interface ApiCall {
  client: ApiClient;
  apiUrl: string;
}

/** The API is down, unreachable or failed (a 5xx): the same command may work later, unchanged. */
export class ApiUnavailableError extends Error {
  override readonly name = 'ApiUnavailableError';
}

export function apiFor(target: ApiTarget, timeoutMs = 30_000): ApiCall {
  if (!target.key) throw new CommandError('an API key is needed: --key KEY or OCO_API_KEY');
  // A malformed URL is refused input, not a server that cannot be reached.
  if (!isHttpUrl(target.apiUrl))
    throw new CommandError(
      `--api-url (or PUBLIC_BASE_URL) must be an http:// or https:// URL such as http://localhost:3000, got "${target.apiUrl}"`,
    );
  return { client: createApiClient({ baseUrl: target.apiUrl, key: target.key, timeoutMs }), apiUrl: target.apiUrl };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A request that got no answer; fetch's own message ("fetch failed") says why only in its cause. */
export function unreachable(api: ApiCall, err: unknown): ApiUnavailableError {
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return new ApiUnavailableError(`the API at ${api.apiUrl} cannot be reached: ${String(err)}${cause}`);
}

/** An error answer: a 4xx refuses the command's input, a 5xx is the server's failure. */
export function refusal(status: number, message: string): Error {
  return status >= 500 ? new ApiUnavailableError(message) : new CommandError(message);
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The answer of one request, sent once; unreachable or an error answer: thrown as above. */
export async function answerOf<T>(api: ApiCall, request: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await request;
  } catch (err) {
    throw unreachable(api, err);
  }
  if (answer.error !== undefined || answer.data === undefined) {
    const { status, statusText } = answer.response;
    throw refusal(status, `${status}: ${errorMessages(answer.error).join('; ') || statusText}`);
  }
  return answer.data;
}

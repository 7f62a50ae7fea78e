// The API as the operator commands reach it: the typed client (src/client) with the team's key, and
// every answer turned into either its data or a command error carrying the API's own messages.
import { createApiClient, errorMessages, type ApiClient } from '../client/api-client';
import { CommandError } from './commands';

export interface ApiTarget {
  apiUrl: string;
  key: string | undefined;
}

export interface ApiCall {
  client: ApiClient;
  apiUrl: string;
}

export function apiFor(target: ApiTarget, timeoutMs = 30_000): ApiCall {
  if (!target.key) throw new CommandError('an API key is needed: --key KEY or OCO_API_KEY');
  return { client: createApiClient({ baseUrl: target.apiUrl, key: target.key, timeoutMs }), apiUrl: target.apiUrl };
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The answer of one request, sent once; unreachable or an error answer: a command error. */
export async function answerOf<T>(api: ApiCall, request: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await request;
  } catch (err) {
    throw new CommandError(`the API at ${api.apiUrl} cannot be reached: ${String(err)}`);
  }
  if (answer.error !== undefined || answer.data === undefined) {
    const { status, statusText } = answer.response;
    throw new CommandError(`${status}: ${errorMessages(answer.error).join('; ') || statusText}`);
  }
  return answer.data;
}

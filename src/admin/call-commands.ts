// `calls create|list|show|watch|cancel` and `transcripts show`: an operator's daily work on calls,
// through the API as an integrator would do it (an API key names the team; the API checks everything),
// with the client typed from the OpenAPI document.
import { randomUUID } from 'node:crypto';
import { isTerminal } from '../contracts/call-status';
import { PROVIDERS } from '../contracts/providers';
import { errorMessages, type ApiSchemas } from '../client/api-client';
import { answerOf, apiFor, ApiUnavailableError, refusal, unreachable, type ApiTarget } from './api-target';
import { CommandError, withIdempotencyKey } from './command-error';

type PhoneCall = ApiSchemas['PhoneCall'];
type CreateRequest = ApiSchemas['PhoneCallCreateRequest'];

/** A call in one line's worth of fields. */
const brief = (call: Pick<PhoneCall, '_id' | 'toPhoneNumber' | 'status' | 'statusExtraInfo' | 'createdAt'>) => ({
  _id: call._id,
  toPhoneNumber: call.toPhoneNumber,
  status: call.status,
  statusCode: call.statusExtraInfo?.statusCode ?? null,
  createdAt: call.createdAt,
});

/** The call id a command was given; none: refused, showing that command's own usage. */
function callId(id: string | undefined, command: string): string {
  if (!id) throw new CommandError(`the call id is required (${command} CALL_ID)`);
  return id;
}

export interface CallCreateInput {
  team: string;
  template: string;
  to: string;
  /** `name=value`, repeatable: the prompt variable values. */
  variables?: string[];
  at?: string;
  record?: boolean;
  provider?: string;
  name?: string;
  email?: string;
  timeZone?: string;
  phoneNumberId?: string;
  /** Makes the create safe to run again; a fresh one is made (and printed) when left out. */
  idempotencyKey?: string;
}

/** Queues one call; the API validates every field and answers in its error shape. */
export async function createCall(target: ApiTarget, input: CallCreateInput) {
  const api = apiFor(target);
  const values = (input.variables ?? []).map((pair) => {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CommandError(`--var must look like NAME=VALUE, got "${pair}"`);
    return { key: pair.slice(0, eq).trim(), value: pair.slice(eq + 1) };
  });
  if (input.provider !== undefined && !(PROVIDERS as readonly string[]).includes(input.provider))
    throw new CommandError(`--provider must be one of ${PROVIDERS.join(', ')}`);
  // The API checks every value (the zone's name, the number's form) and names a bad one in its 400.
  const body: CreateRequest = {
    teamId: input.team,
    callTemplateId: input.template,
    toPhoneNumber: input.to,
    ...(values.length ? { promptVariableValues: values } : {}),
    ...(input.at ? { callDelayedUntil: input.at } : {}),
    ...(input.record ? { record: true } : {}),
    ...(input.provider ? { telephonyProvider: input.provider as CreateRequest['telephonyProvider'] } : {}),
    ...(input.name ? { nameOfHuman: input.name } : {}),
    ...(input.email ? { toEmailAddress: input.email } : {}),
    ...(input.timeZone ? { calleeTimeZone: input.timeZone as CreateRequest['calleeTimeZone'] } : {}),
    ...(input.phoneNumberId ? { phoneNumberId: input.phoneNumberId } : {}),
  };
  const idempotencyKey = input.idempotencyKey ?? `cli-${randomUUID()}`;
  const created = await answerOf(
    api,
    api.client.POST('/v1/phoneCalls', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } }),
  ).catch((err: unknown) => {
    throw withIdempotencyKey(err, idempotencyKey, err instanceof ApiUnavailableError);
  });
  return { ...brief(created.data), idempotencyKey };
}

export interface CallListInput {
  status?: string;
  to?: string;
  fileId?: string;
  template?: string;
  phoneNumberId?: string;
  createdAfter?: string;
  createdBefore?: string;
  limit?: string;
  cursor?: string;
}

export async function listCalls(target: ApiTarget, input: CallListInput) {
  const api = apiFor(target);
  const limit = input.limit === undefined ? undefined : Number(input.limit);
  if (limit !== undefined && !Number.isInteger(limit)) throw new CommandError('--limit must be a whole number');
  const page = await answerOf(
    api,
    api.client.GET('/v1/phoneCalls', {
      params: {
        query: {
          // As given: the API checks each value and names a bad one in its 400.
          status: input.status as PhoneCall['status'] | undefined,
          toPhoneNumber: input.to,
          fileId: input.fileId,
          callTemplateId: input.template,
          phoneNumberId: input.phoneNumberId,
          createdAfter: input.createdAfter,
          createdBefore: input.createdBefore,
          limit,
          cursor: input.cursor,
        },
      },
    }),
  );
  return { calls: page.data.map(brief), nextCursor: page.nextCursor };
}

export async function showCall(target: ApiTarget, id: string | undefined, command = 'calls show'): Promise<PhoneCall> {
  const phoneCallId = callId(id, command);
  const api = apiFor(target);
  return (await answerOf(api, api.client.GET('/v1/phoneCalls/{id}', { params: { path: { id: phoneCallId } } }))).data;
}

export async function cancelCall(target: ApiTarget, id: string | undefined) {
  const phoneCallId = callId(id, 'calls cancel');
  const api = apiFor(target);
  // The API deletes a call only while it is queued (a dial never races it): anything else is its 4xx.
  const deleted = await answerOf(
    api,
    api.client.DELETE('/v1/phoneCalls/{id}', { params: { path: { id: phoneCallId } } }),
  );
  return { cancelled: true, call: deleted.data };
}

/** A watch's waits between reads while the API cannot answer: doubling from the interval, up to this. */
const WATCH_RETRY_MAX_MS = 30_000;

/**
 * Polls the call, telling each status change, until it ends; answers the ended call, or `{ deleted,
 * call }` (the call as last read) when it is deleted while watched (cancelled while queued: the API
 * then answers 404). A read the API cannot answer (unreachable, 5xx, 429) is tried again, said once
 * on stderr: a call due in days is watched through a restart of the API. Any error of the first read
 * ends the watch (a wrong id or key, an API that cannot answer).
 */
export async function watchCall(
  target: ApiTarget,
  id: string | undefined,
  options: { interval?: string; onChange: (line: string) => void },
): Promise<PhoneCall | { deleted: true; call: PhoneCall }> {
  const phoneCallId = callId(id, 'calls watch');
  const intervalMs = options.interval ? Number(options.interval) * 1000 : 1_000;
  if (!Number.isFinite(intervalMs) || intervalMs < 100)
    throw new CommandError('--interval must be seconds, at least 0.1');
  const api = apiFor(target);
  const read = () => api.client.GET('/v1/phoneCalls/{id}', { params: { path: { id: phoneCallId } } });
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  let call = (await answerOf(api, read())).data;
  let last = '';
  let retryMs = 0;
  for (;;) {
    const now = `${call.status} (${call.statusExtraInfo?.statusCode ?? '-'})`;
    if (now !== last) {
      options.onChange(`${call.statusExtraInfo?.dateTime ?? new Date().toISOString()}  ${now}`);
      last = now;
    }
    if (isTerminal(call.status)) return call;
    for (;;) {
      await wait(retryMs || intervalMs);
      let unanswered: string;
      try {
        const answer = await read();
        if (answer.data) {
          call = answer.data.data;
          retryMs = 0;
          break;
        }
        const { status, statusText } = answer.response;
        // The API's own 404, in its error shape (a proxy's while the API restarts is not a deletion).
        if (status === 404 && errorMessages(answer.error).length > 0) {
          options.onChange(`${new Date().toISOString()}  deleted (cancelled while queued)`);
          return { deleted: true, call };
        }
        const message = `${status}: ${errorMessages(answer.error).join('; ') || statusText}`;
        if (status !== 404 && status !== 429 && status < 500) throw refusal(status, message);
        unanswered = `the API answered ${message}`;
      } catch (err) {
        if (err instanceof CommandError) throw err;
        unanswered = unreachable(api, err).message;
      }
      if (retryMs === 0) options.onChange(`${new Date().toISOString()}  ${unanswered}; still watching`);
      retryMs = Math.min(Math.max(retryMs * 2, intervalMs), WATCH_RETRY_MAX_MS);
    }
  }
}

/** Every utterance of a call, in spoken order (all pages). */
export async function showTranscript(target: ApiTarget, phoneCallId: string | undefined) {
  const id = callId(phoneCallId, 'transcripts show');
  const api = apiFor(target);
  const utterances: ApiSchemas['Transcript'][] = [];
  let cursor: string | undefined;
  do {
    const page = await answerOf(
      api,
      api.client.GET('/v1/transcripts', { params: { query: { phoneCallId: id, limit: 1000, cursor } } }),
    );
    utterances.push(...page.data);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return {
    phoneCallId: id,
    transcript: utterances.map((u) => ({ speaker: u.speaker, text: u.text, at: u.createdAt })),
  };
}

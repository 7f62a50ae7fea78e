// `calls list|show|watch|cancel` and `transcripts show`: an operator's daily work on calls, through
// the API as an integrator would do it (an API key names the team; the API checks everything).
import { isTerminal, type CallStatus } from '../contracts/call-status';
import { CommandError } from './commands';

export const CALL_VERBS = ['list', 'show', 'watch', 'cancel'] as const;
export type CallVerb = (typeof CALL_VERBS)[number];

export function isCallVerb(value: string | undefined): value is CallVerb {
  return (CALL_VERBS as readonly string[]).includes(value ?? '');
}

export interface ApiTarget {
  apiUrl: string;
  key: string | undefined;
}

interface CallView {
  _id: string;
  status: CallStatus;
  statusExtraInfo?: { statusCode: string; dateTime: string };
  toPhoneNumber: string;
  [field: string]: unknown;
}

/** One API request; an error answer becomes a command error carrying the API's own messages. */
async function api<T>(target: ApiTarget, method: string, pathAndQuery: string): Promise<T> {
  if (!target.key) throw new CommandError('an API key is needed: --key KEY or OCO_API_KEY');
  let res: Response;
  try {
    res = await fetch(`${target.apiUrl.replace(/\/+$/, '')}${pathAndQuery}`, {
      method,
      headers: { 'service-api-key': target.key, accept: 'application/json' },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new CommandError(`the API at ${target.apiUrl} cannot be reached: ${String(err)}`);
  }
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string[] } };
  if (!res.ok) throw new CommandError(`${res.status}: ${(body.error?.message ?? []).join('; ') || res.statusText}`);
  return body as T;
}

/** A call in one line's worth of fields. */
const brief = (call: CallView) => ({
  _id: call._id,
  toPhoneNumber: call.toPhoneNumber,
  status: call.status,
  statusCode: call.statusExtraInfo?.statusCode ?? null,
  createdAt: call.createdAt,
});

export async function runCallCommand(
  verb: CallVerb,
  target: ApiTarget,
  input: {
    id?: string;
    status?: string;
    to?: string;
    fileId?: string;
    template?: string;
    limit?: string;
    cursor?: string;
    interval?: string;
    onChange?: (line: string) => void;
  },
): Promise<object> {
  const id = () => {
    if (!input.id) throw new CommandError('--id is required');
    return encodeURIComponent(input.id);
  };
  switch (verb) {
    case 'list': {
      const query = new URLSearchParams();
      if (input.status) query.set('status', input.status);
      if (input.to) query.set('toPhoneNumber', input.to);
      if (input.fileId) query.set('fileId', input.fileId);
      if (input.template) query.set('callTemplateId', input.template);
      if (input.limit) query.set('limit', input.limit);
      if (input.cursor) query.set('cursor', input.cursor);
      const page = await api<{ data: CallView[]; nextCursor: string | null }>(target, 'GET', `/v1/phoneCalls?${query}`);
      return { calls: page.data.map(brief), nextCursor: page.nextCursor };
    }
    case 'show':
      return (await api<{ data: CallView }>(target, 'GET', `/v1/phoneCalls/${id()}`)).data;
    case 'cancel':
      // The API deletes a call only while it is queued (a dial never races it): anything else is its 4xx.
      return {
        cancelled: true,
        call: (await api<{ data: CallView }>(target, 'DELETE', `/v1/phoneCalls/${id()}`)).data,
      };
    case 'watch': {
      const intervalMs = input.interval ? Number(input.interval) * 1000 : 1_000;
      if (!Number.isFinite(intervalMs) || intervalMs < 100)
        throw new CommandError('--interval must be seconds, at least 0.1');
      let last = '';
      for (;;) {
        const call = (await api<{ data: CallView }>(target, 'GET', `/v1/phoneCalls/${id()}`)).data;
        const now = `${call.status} (${call.statusExtraInfo?.statusCode ?? '-'})`;
        if (now !== last) {
          input.onChange?.(`${call.statusExtraInfo?.dateTime ?? new Date().toISOString()}  ${now}`);
          last = now;
        }
        if (isTerminal(call.status)) return call;
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    }
  }
}

/** Every utterance of a call, in spoken order (all pages). */
export async function showTranscript(target: ApiTarget, callId: string | undefined) {
  if (!callId) throw new CommandError('--call is required');
  const utterances: { speaker: string; text: string; createdAt: string }[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ phoneCallId: callId, limit: '1000', ...(cursor ? { cursor } : {}) });
    const page: { data: typeof utterances; nextCursor: string | null } = await api(
      target,
      'GET',
      `/v1/transcripts?${query}`,
    );
    utterances.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return {
    phoneCallId: callId,
    transcript: utterances.map((u) => ({ speaker: u.speaker, text: u.text, at: u.createdAt })),
  };
}

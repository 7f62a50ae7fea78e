// A small JSON-over-HTTP client for the harness (scripts must not import from test/). A request
// that fails at the network level (the API being killed, a refused connection) resolves with
// status 0 and the error, so that callers decide whether to retry instead of catching.
import http from 'node:http';

export interface HttpAnswer<T = any> {
  /** 0: no answer (connection refused, reset, timed out). */
  status: number;
  headers: Headers;
  body: T;
  error?: string;
}

/**
 * One request over node:http (not fetch: undici gives up on any answer that takes over 5 minutes,
 * and cancelling a file of 5,000 calls can take longer); `timeoutMs` bounds the whole exchange.
 */
export function requestJson<T = any>(
  url: string,
  options: { method?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: HttpAnswer<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const noAnswer = (err: Error & { code?: string }) =>
      finish({ status: 0, headers: new Headers(), body: undefined as T, error: err.code ?? err.message });
    const req = http.request(
      url,
      { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', noAnswer);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          finish({ status: res.statusCode ?? 0, headers: answerHeaders, body: parsed as T });
        });
      },
    );
    const timeoutMs = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on('error', noAnswer);
    req.end(body);
  });
}

/** The service's `/v1` API with one team's key. */
export function apiClient(baseUrl: () => string, key: string) {
  const call = <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    requestJson<T>(`${baseUrl()}${path}`, {
      method,
      body,
      headers: { 'service-api-key': key, ...headers },
      timeoutMs: 20 * 60_000,
    });
  return {
    get: <T = any>(path: string) => call<T>('GET', path),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, body, headers),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Short text of an answer for a report line. */
export function describeAnswer(answer: HttpAnswer): string {
  if (answer.status === 0) return `no answer (${answer.error})`;
  const message = (answer.body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return `${answer.status}${message ? ` ${JSON.stringify(message)}` : ''}`;
}

// Small HTTP client for tests: real requests to the API under test.
import { request as httpRequest } from 'node:http';
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export function apiClient(baseUrl: string, key?: string) {
  async function request<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; key?: string | null; headers?: Record<string, string>; rawBody?: string } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const apiKey = options.key === undefined ? key : options.key;
    if (apiKey) headers['service-api-key'] = apiKey;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }
  return {
    request,
    get: <T = any>(path: string, options?: Parameters<typeof request>[2]) => request<T>('GET', path, options),
    post: <T = any>(path: string, body?: unknown, options?: Parameters<typeof request>[2]) =>
      request<T>('POST', path, { ...options, body }),
    patch: <T = any>(path: string, body?: unknown, options?: Parameters<typeof request>[2]) =>
      request<T>('PATCH', path, { ...options, body }),
    delete: <T = any>(path: string, options?: Parameters<typeof request>[2]) => request<T>('DELETE', path, options),
  };
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  what = 'condition',
  /** Between probes: longer for a probe that costs the service real work (a list of hundreds). */
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Reads a call through the API until its status is one of `statuses`, and answers that read: the
 * wait most call tests make for a call to be answered, to ring or to end.
 */
export async function callReaching(
  api: ReturnType<typeof apiClient>,
  id: string,
  statuses: string | string[],
  timeoutMs = 30_000,
  what = `the call to be ${[statuses].flat().join(' or ')}`,
): Promise<any> {
  const wanted = [statuses].flat();
  return eventually(
    async () => {
      const res = await api.get(`/v1/phoneCalls/${id}`);
      // Thrown, so that a wait that times out on a refused read says why.
      if (res.status !== 200) throw new Error(`GET /v1/phoneCalls/${id} answered ${res.status}`);
      return wanted.includes(res.body.data.status) ? res.body.data : undefined;
    },
    timeoutMs,
    what,
  );
}

export const ERROR_SHAPE_KEYS = ['error', 'payload'];

/** Asserts the documented error shape and returns the messages. */
export function errorMessages(response: ApiResponse, status: number): string[] {
  const body = response.body as {
    error?: { statusCode?: number; message?: unknown; error?: unknown };
    payload?: unknown;
  };
  if (response.status !== status)
    throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  if (
    !body?.error ||
    body.error.statusCode !== status ||
    !Array.isArray(body.error.message) ||
    typeof body.error.error !== 'string'
  ) {
    throw new Error(`not the documented error shape: ${JSON.stringify(body)}`);
  }
  if (JSON.stringify(body.payload) !== '{}') throw new Error(`payload must be {}: ${JSON.stringify(body)}`);
  return body.error.message as string[];
}

/** A request fetch() refuses to send (TRACE, CONNECT), over node:http. */
export function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const sized = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = httpRequest(url, { method, headers: sized, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (typeof value === 'string') responseHeaders.set(name, value);
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

// The emulator's tiny HTTP layer: a request as the provider modules see it, and regex routes.
import type { IncomingHttpHeaders } from 'node:http';

export interface ApiRequest {
  method: string;
  /** Path below the provider's prefix, e.g. `/v1/calls`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export type Params = Record<string, string>;

export interface Route {
  method: string;
  pattern: RegExp;
  /** Serves recording audio: injected request faults leave it alone (they are the API's). */
  media?: boolean;
  handle(req: ApiRequest, params: Params): ApiResponse | Promise<ApiResponse>;
}

export function json(status: number, body: unknown): ApiResponse {
  return { status, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
}

export function noContent(): ApiResponse {
  return { status: 204 };
}

export function wav(body: Buffer, contentType = 'audio/wav'): ApiResponse {
  return { status: 200, headers: { 'Content-Type': contentType, 'Content-Length': String(body.length) }, body };
}

/** The route for a request: a 405 when the path exists with another method, null when nothing matches. */
export type RouteMatch = { route: Route; params: Params } | 'method-not-allowed' | null;

export function matchRoute(routes: readonly Route[], method: string, path: string): RouteMatch {
  let pathMatched = false;
  for (const route of routes) {
    const match = route.pattern.exec(path);
    if (!match) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    const params: Params = {};
    for (const [key, value] of Object.entries(match.groups ?? {})) {
      if (value !== undefined) params[key] = decodeURIComponent(value);
    }
    return { route, params };
  }
  return pathMatched ? 'method-not-allowed' : null;
}

export function header(req: ApiRequest, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

export function bearerToken(req: ApiRequest): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header(req, 'authorization') ?? '')?.[1];
}

export function parseJsonBody(req: ApiRequest): unknown {
  if (req.body.length === 0) return undefined;
  return JSON.parse(req.body.toString('utf8'));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A Twilio-style date: RFC 2822 with a numeric zone. */
export function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}

/** ISO 8601 UTC without milliseconds, as Vonage writes times. */
export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// The one place the documented error body is written:
// {"error": {"statusCode": N, "message": ["..."], "error": "<reason phrase>"}, "payload": {}}
import { STATUS_CODES } from 'node:http';
import type { Context } from 'koa';
import type { z } from 'zod';
import type { errorBodySchema } from '../schemas/responses';

export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly messages: string[],
    readonly headers: Record<string, string> = {},
  ) {
    super(messages.join('; '));
  }
}

/**
 * A 400 listing every problem found (decisions.md: one entry per problem), however many: a list, not
 * spread into badRequest's arguments, which overflowed the stack past about 120,000 of them (a 500).
 */
export function invalidInput(problems: readonly string[]): HttpError {
  return new HttpError(400, problems.length ? [...problems] : ['invalid input']);
}
export const badRequest = (...messages: string[]) => invalidInput(messages);
export const unauthorized = (message = 'a valid service-api-key header is required') => new HttpError(401, [message]);
export const forbidden = (message = 'forbidden resource') => new HttpError(403, [message]);
export const notFound = (message = 'resource not found') => new HttpError(404, [message]);
export const conflict = (message: string) => new HttpError(409, [message]);

export type ErrorBody = z.output<typeof errorBodySchema>;

export function errorBody(status: number, messages: string[]): ErrorBody {
  return {
    error: { statusCode: status, message: messages, error: STATUS_CODES[status] ?? 'Error' },
    payload: {},
  };
}

export function sendError(ctx: Context, status: number, messages: string[]): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = errorBody(status, messages);
}

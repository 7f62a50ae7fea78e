// Turns zod issues into the documented `message` entries: one per problem, each naming its field.
import { z } from 'zod';
import { badRequest } from './errors';

function fieldName(path: ReadonlyArray<PropertyKey>, prefix: string): string {
  const joined = path.map(String).join('.');
  return [prefix, joined].filter(Boolean).join('.') || 'body';
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** `input` is what was validated: it tells a missing field from one of the wrong type. */
export function formatIssues(issues: ReadonlyArray<z.core.$ZodIssue>, input: unknown, prefix = ''): string[] {
  const messages: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) messages.push(`${fieldName([...issue.path, key], prefix)} is not allowed`);
      continue;
    }
    const field = fieldName(issue.path, prefix);
    const missing =
      (issue.code === 'invalid_type' || issue.code === 'invalid_value') && valueAt(input, issue.path) === undefined;
    if (missing) {
      messages.push(`${field} is required`);
    } else if (issue.code === 'invalid_type') {
      messages.push(`${field} must be ${issue.expected === 'array' ? 'an array' : `a ${issue.expected}`}`);
    } else {
      messages.push(`${field} ${issue.message}`);
    }
  }
  return [...new Set(messages)];
}

/** Parses `value` or throws a 400 listing every problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(...formatIssues(result.error.issues, value, prefix));
  return result.data;
}

const NO_FIELDS = z.strictObject({}, { error: 'must be a JSON object (this operation takes no fields)' });

/** For an operation that takes no body: none, or `{}`; any field in it is a 400 naming it. */
export function assertNoBodyFields(body: unknown): void {
  if (body === undefined || body === null) return;
  parseOrThrow(NO_FIELDS, body);
}

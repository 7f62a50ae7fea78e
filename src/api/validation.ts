// Turns zod issues into the documented `message` entries: one per problem, each naming its field.
import { z } from 'zod';
import { invalidInput } from './errors';

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

/** The one wording of a value of the wrong type: `body must be an object`, `record must be a boolean`. */
export function mustBeA(field: string, expected: string): string {
  return `${field} must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
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
      messages.push(mustBeA(field, issue.expected));
    } else {
      messages.push(`${field} ${issue.message}`);
    }
  }
  return [...new Set(messages)];
}

/** Parses `value` or throws a 400 listing every problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(formatIssues(result.error.issues, value, prefix));
  return result.data;
}

// In a query string `+` stands for a space: `?toPhoneNumber=+14155550123` arrives as ` 14155550123`,
// and a date-time's offset `...T10:00:00+02:00` as `...T10:00:00 02:00` (a time, then the offset).
const LOST_PLUS = /^ \d|T\d{2}:\d{2}(:\d{2}(\.\d+)?)? \d{2}(:?\d{2})?$/;

/**
 * Parses a query's parameters, as parseOrThrow does, and says what the query string itself did to a
 * value: a parameter given more than once arrives as an array, and an unencoded leading `+` as a space.
 */
export function parseQueryOrThrow<S extends z.ZodType>(schema: S, query: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(query);
  if (result.success) return result.data;
  const messages = result.error.issues.flatMap((issue) => {
    const name = issue.path[0];
    const value = name === undefined ? undefined : query[String(name)];
    if (Array.isArray(value)) return [`${String(name)} may be given only once`];
    const hint =
      typeof value === 'string' && LOST_PLUS.test(value) ? ' (a `+` in a query string must be sent as %2B)' : '';
    return formatIssues([issue], query).map((message) => message + hint);
  });
  throw invalidInput([...new Set(messages)]);
}

// A hostile body may hold thousands of `__proto__` keys, nested thousands deep: the answer names a few
// of them, shallowest first, each by the start of its path, so that it stays small whatever was sent.
const MAX_NAMED_KEYS = 10;
const MAX_NAMED_DEPTH = 16;
/** A path segment named longer than this is cut: the answer stays small, however long the keys sent. */
const MAX_NAMED_SEGMENT = 32;

/**
 * What is wrong with a body the JSON parser refused although it is JSON: the parser takes only an
 * object or an array, and refuses a `__proto__` key at any depth so that no request can set a
 * prototype. Plain JSON.parse makes such a key an own property, which sets nothing: it is read here
 * only to name where it is. Empty when the text is not JSON at all.
 */
export function refusedJsonProblems(text: string): string[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  if (body === null || typeof body !== 'object') return [mustBeA('body', 'object')];
  // Breadth first without recursion; a path is built only for a key found.
  const nodes: Array<{ value: object; key: string; parent: number }> = [{ value: body, key: '', parent: -1 }];
  const problems: string[] = [];
  for (let index = 0; index < nodes.length && problems.length < MAX_NAMED_KEYS; index += 1) {
    const { value } = nodes[index]!;
    for (const [key, child] of Object.entries(value)) {
      if (key === '__proto__' && problems.length < MAX_NAMED_KEYS) {
        const path: string[] = [];
        for (let at = index; at > 0; at = nodes[at]!.parent) path.push(nodes[at]!.key);
        path.reverse();
        const cut = path.map((segment) =>
          segment.length > MAX_NAMED_SEGMENT ? `${segment.slice(0, MAX_NAMED_SEGMENT)}…` : segment,
        );
        const named = cut.length > MAX_NAMED_DEPTH ? [...cut.slice(0, MAX_NAMED_DEPTH), '…'] : cut;
        problems.push(`${fieldName([...named, key], '')} is not allowed`);
      }
      if (child !== null && typeof child === 'object') nodes.push({ value: child as object, key, parent: index });
    }
  }
  return problems;
}

const NO_FIELDS = z.strictObject({}, { error: 'must be a JSON object (this operation takes no fields)' });

/** For an operation that takes no body: none, or `{}`; any field in it is a 400 naming it. */
export function assertNoBodyFields(body: unknown): void {
  if (body === undefined || body === null) return;
  parseOrThrow(NO_FIELDS, body);
}

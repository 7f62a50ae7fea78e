// Hostile input against every /v1 operation of the served OpenAPI document (its `paths`, so an
// operation added later is fuzzed without touching this file), as the stack's seeded tenant, with
// fast-check: wrong types, huge strings, deep nesting, lone surrogates, NUL and RTL marks, MongoDB
// `$` operators and dotted keys, `__proto__`/`constructor`/`prototype` keys, invalid dates,
// out-of-range numbers, arrays for objects and the reverse, in bodies, query strings, path ids and
// headers; plus malformed JSON, wrong content types and bodies over the limit.
//
// For every request:
//   1. the answer is not a 5xx and its status is one the document declares for the operation (or a
//      404/405 where a path id made the request land on another path: `.`, `..`, `batch`, ...);
//   2. a 4xx is exactly the documented error shape, `{"error": {"statusCode": <the status>, "message":
//      [non-empty strings], "error": <reason>}, "payload": {}}` (interface.md section 7), and leaks no
//      stack trace, source file or internal path;
//   3. (the "refused" phase) a request built so that it must be refused is refused, and leaves every
//      document of the stack's database as it was.
// The "any request" phase then mixes valid and hostile parts, so that requests also get past
// validation (creates, deletes, pauses): properties 1 and 2 only.
//
// Nothing is dialled: every call create body carries a `callDelayedUntil` months ahead (a request
// whose schedule would dial sooner gets that one instead), and webhook URLs that could be reached
// are pointed at 127.0.0.1:9; the last test checks that no call is due within a month and that the
// provider emulator saw no dial.
//
// A failure names the operation and prints fast-check's seed and path with the shrunk request and the
// answer. Each operation's seed is derived from SEED and its name, so a run with the same
// HOSTILE_SEED (default below) draws the same requests again.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentReader, escapePointer, type Json } from '../helpers/openapi-document';
import { seededCallBody, startTestStack, type TestStack } from '../helpers/stack';

const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_122);
const REFUSED_RUNS = 30;
const ANY_RUNS = 25;
// A small body limit: 413 is cheap to provoke, and every other body stays well under it.
const BODY_LIMIT_BYTES = 100 * 1024;
const DOC_ID = 'https://hostile-input.test/openapi.json';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const DAY_MS = 24 * 60 * 60 * 1000;
/** Every call this file creates is scheduled this far ahead: none is ever dialled. */
const FAR = new Date(Date.now() + 150 * DAY_MS).toISOString();
const NEXT_YEAR = new Date().getUTCFullYear() + 1;
const LOCAL_HOOK = 'http://127.0.0.1:9/hostile';
const DNC_NUMBER = '+14155550166';
const FILE_ID = 'hostile-input-file';

let stack: TestStack;
let doc: Json;
let ajv: Ajv2020;
let operations: Operation[];
let fixtures: Fixtures;

interface Fixtures {
  callId: string;
  webhookId: string;
  batchId: string;
  keyId: string;
  /** A valid body for each operation that takes one, for this team, its template and numbers. */
  validBodies: Record<string, Json>;
}

interface Operation {
  /** `METHOD /template` */
  name: string;
  method: string;
  template: string;
  declared: Set<number>;
  pathParams: string[];
  queryParams: { name: string; schema: Json }[];
  /** Validates a body against the document's request schema; null when the operation takes none. */
  bodySchema: ValidateFunction | null;
}

// ---------------------------------------------------------------------------------------------
// Values

/** JSON text sent as it is: numbers JSON.stringify cannot write (1e309, -0), deep nesting, huge strings. */
class Raw {
  constructor(
    readonly text: string,
    readonly label = text,
  ) {}
  [fc.toStringMethod](): string {
    return `raw(${this.label.length > 60 ? `${this.label.slice(0, 60)}... (${this.text.length} chars)` : this.label})`;
  }
}

/** An object with an own property of that name (`__proto__` included), as JSON.parse would make it. */
function withOwn(key: string, value: unknown, into: Record<string, unknown> = {}): Record<string, unknown> {
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  return into;
}

function serialize(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object' || value instanceof Date) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  const entries = Object.keys(value).map((k) => `${JSON.stringify(k)}:${serialize((value as Json)[k])}`);
  return `{${entries.join(',')}}`;
}

/** Strings echoed back in error messages must not look like the leaks property 2 looks for. */
const LEAK_MARKERS = ['node_modules', '/work/', process.cwd()];
const innocent = (s: string) => !LEAK_MARKERS.some((m) => s.includes(m)) && !/\.(?:[cm]?js|ts):\d/.test(s);

const specialStrings = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83dy',
  '\u202e\u0644\u0627 evil',
  '\u200f\u200e\u200b\u2060',
  '\ufeff',
  '\u0301\u0301\u0301',
  'Z\u0351\u0358\u0360a\u035c\u035dl\u0360g\u0358o',
  'İıǅ\u{1f642}\u{10ffff}',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '9007199254740993',
  '0x1F',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '{"$gt":""}',
  '$gt',
  '$where',
  'a.b',
  '__proto__',
  'constructor',
  "' OR '1'='1",
  '"; DROP TABLE calls; --',
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  '%00',
  '%ED%A0%80',
  '${7*7}',
  '{{firstName}}',
  'phoneCall.completed',
  '*',
  'twilio',
  'queued',
  'GET',
  '+14155550123',
  '+1 (415) 555-0199',
  '+10000000000',
  '+999999999999999999999',
  'f'.repeat(24),
  'F'.repeat(24),
  'g'.repeat(24),
  'javascript:alert(1)',
  'http://169.254.169.254/latest/meta-data/',
  'http://\u4f8b\u5b50.com/',
  'http://[::1]:99999/',
  'file:///etc/passwd',
  'a@b',
  'Mars/Olympus_Mons',
  'Etc/GMT+99',
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const oddChar = fc.constantFrom('\u0000', '\u202e', '\u200f', '\ufeff', '\u0085', '\u2028', '$', '.', '"', '\\', '%');
const hostileString = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom(...specialStrings) },
    {
      weight: 3,
      arbitrary: fc.string({
        unit: fc.oneof(
          { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
          loneSurrogate,
          oddChar,
        ),
        maxLength: 30,
      }),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  )
  .filter(innocent);

const hugeString = fc
  .tuple(
    fc.constantFrom(201, 501, 2049, 5001, 10_000),
    fc.constantFrom('a', '\u{1d54f}', '\u202e', '\u0000', ' ', '\ud800'),
  )
  .map(([n, unit]) => new Raw(JSON.stringify(unit.repeat(n)), `${JSON.stringify(unit)} x ${n}`));

const hostileNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, Number.NaN, Infinity, 2 ** 53 + 2, -(2 ** 63), 1e308, 5e-324, Number.MAX_VALUE),
  fc
    .constantFrom('1e309', '-1e309', '-0', '123456789012345678901234567890', '1E400', '0.1e-400', '-0.0')
    .map((t) => new Raw(t)),
  fc.double(),
  fc.integer(),
);

const mongoOperators = fc.constantFrom<unknown>(
  { $gt: '' },
  { $ne: null },
  { $where: 'sleep(1000) || true' },
  { $regex: '.*' },
  { $in: [] },
  { $exists: true },
  { $expr: { $eq: [1, 1] } },
  { 'a.b': 'x' },
  { $gt: { $ne: null } },
  [{ $match: {} }],
);

const prototypeKeys = fc.constantFrom<() => unknown>(
  () => withOwn('__proto__', { polluted: true, teamId: 'f'.repeat(24) }),
  () => ({ constructor: { prototype: { polluted: true } } }),
  () => ({ prototype: { polluted: true } }),
  () => withOwn('__proto__', null),
);

const deepNesting = fc
  .tuple(fc.integer({ min: 20, max: 4000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? new Raw('['.repeat(depth) + ']'.repeat(depth), `[ x ${depth}`)
      : new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `{"a": x ${depth}`),
  );

const invalidDates = fc.constantFrom(
  `${NEXT_YEAR}-02-30T10:00:00Z`,
  `${NEXT_YEAR}-13-01T10:00:00Z`,
  `${NEXT_YEAR}-06-01T24:00:00Z`,
  `${NEXT_YEAR}-06-31T10:00:00Z`,
  `${NEXT_YEAR}-06-01`,
  `${NEXT_YEAR}-06-01T10:00:00`,
  `+0${NEXT_YEAR}-06-01T10:00:00Z`,
  `${NEXT_YEAR}-06-01T10:00:00+25:00`,
  `${NEXT_YEAR}-06-01T10:00:60Z`,
  `${NEXT_YEAR}-06-01 10:00:00Z`,
  `${NEXT_YEAR}-6-1T10:00Z`,
  '0000-00-00T00:00:00Z',
  '+275760-09-13T00:00:00.001Z',
  `${NEXT_YEAR + 5}-01-01T00:00:00Z`,
  'Invalid Date',
  'now',
  'tomorrow at 9',
);

const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: invalidDates },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: false }) },
);

const hostileKey = fc.oneof(
  fc.constantFrom(
    '$gt',
    '$ne',
    '$where',
    '$set',
    'a.b',
    'teamId.$ne',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\u202eteamId',
    'teamId ',
    'TEAMID',
    '_id',
    'createdAt',
    'status',
  ),
  hostileString,
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: hostileLeaf },
  { weight: 1, arbitrary: hugeString },
  { weight: 2, arbitrary: mongoOperators },
  { weight: 1, arbitrary: prototypeKeys.map((make) => make()) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.array(hostileLeaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileKey, hostileLeaf, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Fully random JSON, with hostile keys and values all the way down. */
const randomJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.object({ key: hostileKey, values: [hostileLeaf, mongoOperators], maxDepth: 3, maxKeys: 5 }),
  fc.array(fc.object({ key: hostileKey, values: [hostileLeaf], maxDepth: 2 }), { maxLength: 3 }),
);

// ---------------------------------------------------------------------------------------------
// Mutating a valid body, one field at a time

type Path = (string | number)[];

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (value && typeof value === 'object' && !(value instanceof Raw))
    for (const k of Object.keys(value)) out.push(...pathsOf((value as Json)[k], [...prefix, k]));
  return out;
}

const isPlainObject = (v: unknown): v is Json =>
  !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Raw) && !(v instanceof Date);

interface Mutation {
  at: number;
  action: 'set' | 'delete' | 'addKey' | 'wrap' | 'unwrap' | 'replaceRoot';
  key: string;
  value: unknown;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  action: fc.constantFrom<Mutation['action']>(
    'set',
    'set',
    'set',
    'set',
    'delete',
    'addKey',
    'addKey',
    'wrap',
    'unwrap',
    'replaceRoot',
  ),
  key: hostileKey,
  value: hostileValue,
});

function applyMutation(base: Json, m: Mutation): unknown {
  const root: unknown = JSON.parse(JSON.stringify(base));
  const paths = pathsOf(root);
  const path = paths[m.at % paths.length]!;
  if (m.action === 'replaceRoot' || (path.length === 0 && (m.action === 'set' || m.action === 'delete')))
    return m.value;
  const parentPath = path.slice(0, -1);
  const last = path[path.length - 1];
  let parent: any = root;
  for (const p of parentPath) parent = parent[p];
  const node: unknown = path.length === 0 ? root : parent[last!];
  const replace = (v: unknown): unknown => {
    if (path.length === 0) return v;
    if (Array.isArray(parent)) parent[last as number] = v;
    else withOwn(String(last), v, parent);
    return root;
  };
  switch (m.action) {
    case 'set':
      return replace(m.value);
    case 'delete':
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last!];
      return root;
    case 'addKey':
      if (isPlainObject(node)) {
        withOwn(m.key, m.value, node);
        return root;
      }
      return replace(m.value);
    case 'wrap':
      return replace([node]);
    case 'unwrap':
      return replace(
        Array.isArray(node) ? (node[0] ?? {}) : isPlainObject(node) ? Object.values(node) : { value: node },
      );
  }
}

/**
 * What keeps every request harmless, whatever the service does with it: a call create object gets
 * a schedule months ahead unless its own is a string that could not dial within a month, and an
 * http(s) URL that points anywhere else is pointed at 127.0.0.1:9.
 */
function makeSafe(value: unknown): unknown {
  if (Array.isArray(value)) value.forEach(makeSafe);
  if (!isPlainObject(value)) return value;
  if ('callTemplateId' in value || 'toPhoneNumber' in value) {
    // A Date is sent as its ISO string; anything else that is not a string is no schedule at all.
    const at: unknown = value.callDelayedUntil;
    const when = at instanceof Date ? at.getTime() : typeof at === 'string' ? Date.parse(at) : Number.NaN;
    if (at === undefined || (!Number.isNaN(when) && when < Date.now() + 30 * DAY_MS))
      withOwn('callDelayedUntil', FAR, value);
  }
  if (typeof value.url === 'string') {
    try {
      const url = new URL(value.url);
      if (/^https?:$/.test(url.protocol) && url.hostname !== '127.0.0.1') withOwn('url', LOCAL_HOOK, value);
    } catch {
      // not a URL: stays as hostile as it is
    }
  }
  for (const k of Object.keys(value)) makeSafe(value[k]);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Requests

interface HostileRequest {
  /** Which phase built it: `refused` requests must be refused (4xx). */
  expect: 'refused' | 'any';
  /** How it is meant to be refused, and, where that fixes it, the exact status. */
  why: string;
  status?: number;
  /** A path id that sends the request to another path (`.`, `..`, `batch`): 404 and 405 are fine. */
  elsewhere: boolean;
  path: string;
  /** The path parameters as the router should read them (decoded). */
  ids: Record<string, string>;
  query: string;
  headers: [string, string][];
  body?: unknown;
  /** `body` is sent gzip-compressed (with `content-encoding: gzip`). */
  gzipped?: boolean;
  /** Sent as it is instead of `body` (a Buffer for bytes that are not UTF-8). */
  rawBody?: string | Buffer | Raw;
}

const cut = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)}... (${text.length} chars)` : text;

/** How a request reads in a failure report: short enough to read, exact enough to replay by hand. */
function printable(request: HostileRequest): HostileRequest {
  return Object.defineProperty(request, fc.toStringMethod, {
    enumerable: false,
    value: () => {
      const raw = request.rawBody;
      const body =
        raw instanceof Raw
          ? raw[fc.toStringMethod]()
          : Buffer.isBuffer(raw)
            ? `bytes ${raw.toString('hex')}`
            : raw !== undefined
              ? JSON.stringify(raw)
              : request.body !== undefined
                ? `${cut(serialize(request.body), 600)}${request.gzipped ? ' (gzipped)' : ''}`
                : '(none)';
      const headers = request.headers.map(([k, v]) => `${k}: ${JSON.stringify(cut(v, 80))}`).join(', ');
      return `{${request.why}} ${cut(request.path + request.query, 300)} headers [${headers}] body ${body}`;
    },
  });
}

function percentEncode(value: string, loneSurrogates: 'replace' | 'wtf8'): string {
  let out = '';
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    if (/^[A-Za-z0-9_.~-]$/.test(ch)) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff && loneSurrogates === 'wtf8')
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
        .map((b) => `%${b.toString(16)}`)
        .join('');
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Path segments sent exactly as written: malformed escapes, encoded slashes and dots. */
const rawSegments = [
  '%',
  '%zz',
  '%E0%A4%A',
  '%ED%A0%80',
  '%00',
  '%2F',
  '..%2F..%2Fetc%2Fpasswd',
  '%252e%252e',
  ';jsessionid=1',
  '*',
  '$gt',
  '%24gt',
  "'",
  '%22%3E%3Cscript%3E',
  'a%0D%0ASet-Cookie:%20x=1',
  '%F0%9F%99%82',
  '%C0%AE%C0%AE',
];

interface PathValue {
  encoded: string;
  /** Decoded value, for telling whether it names a fixture. */
  value: string;
}

const hostilePathValue: fc.Arbitrary<PathValue> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(hostileString, fc.constantFrom<'replace' | 'wtf8'>('replace', 'wtf8'))
      .map(([v, mode]) => ({ value: v, encoded: percentEncode(v, mode) })),
  },
  { weight: 2, arbitrary: fc.constantFrom(...rawSegments).map((s) => ({ value: safeDecode(s), encoded: s })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 24, maxLength: 24 }), fc.boolean())
      .map(([hex, upper]) => (upper ? hex.toUpperCase() : hex))
      .map((v) => ({ value: v, encoded: v })),
  },
  {
    weight: 1,
    arbitrary: hugeString
      .map((r) => JSON.parse(r.text) as string)
      .filter((s) => s.length <= 2049)
      .map((v) => ({ value: v, encoded: percentEncode(v, 'replace') })),
  },
);

let literals: Set<string> | undefined;
/** The fixed segments of the document's paths (`batch`, `file`, `pause`, ...), in lower case. */
function literalSegments(): Set<string> {
  if (!literals) {
    literals = new Set();
    for (const template of Object.keys(doc.paths as Json))
      for (const seg of template.split('/')) if (seg && !seg.startsWith('{')) literals.add(seg.toLowerCase());
  }
  return literals;
}

/** A segment that makes the URL parser or the router take the request to another path. */
function redirectsPath(value: string): boolean {
  const v = value.toLowerCase();
  return v === '' || /^(\.|%2e){1,2}$/.test(v) || literalSegments().has(v);
}

function fixtureFor(op: Operation, param: string): PathValue {
  if (param === 'phoneNumber') return { value: DNC_NUMBER, encoded: encodeURIComponent(DNC_NUMBER) };
  if (param === 'batchId') return { value: fixtures.batchId, encoded: fixtures.batchId };
  if (param === 'fileId') return { value: FILE_ID, encoded: FILE_ID };
  if (param === '_id' && op.template.startsWith('/v1/webhooks/'))
    return { value: fixtures.webhookId, encoded: fixtures.webhookId };
  if (param === 'id' && op.template.startsWith('/v1/phoneCalls/'))
    return { value: fixtures.callId, encoded: fixtures.callId };
  // An operation added later: a well-formed id nothing has.
  return { value: 'e'.repeat(24), encoded: 'e'.repeat(24) };
}

/** Whether a path value could address a fixture (ids are read case-insensitively, numbers normalised). */
function namesFixture(value: string): boolean {
  const v = value.trim().toLowerCase();
  const digits = value.replace(/\D/g, '');
  return (
    [fixtures.callId, fixtures.webhookId, fixtures.batchId, FILE_ID.toLowerCase()].includes(v) ||
    (digits.length >= 10 && DNC_NUMBER.endsWith(digits.slice(-10)))
  );
}

function buildPath(op: Operation, values: Record<string, PathValue>): string {
  return op.template.replace(/\{([^}]+)\}/g, (_, name: string) => values[name]!.encoded);
}

function at(op: Operation, values: Record<string, PathValue>): { path: string; ids: Record<string, string> } {
  return {
    path: buildPath(op, values),
    ids: Object.fromEntries(Object.entries(values).map(([name, v]) => [name, v.value])),
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

// Query strings

type QueryPair = [key: string, value: string];

function encodeQuery(pairs: QueryPair[], mode: 'replace' | 'wtf8' = 'replace'): string {
  if (pairs.length === 0) return '';
  return `?${pairs.map(([k, v]) => `${percentEncode(k, mode)}=${percentEncode(v, mode)}`).join('&')}`;
}

/** Whether the service should take `value` for the documented query parameter (z.coerce semantics for numbers). */
function queryValueValid(param: { schema: Json }, value: string): boolean {
  const schema = param.schema;
  if (schema.type === 'integer' || schema.type === 'number') {
    const n = Number(value);
    return (
      (schema.type === 'number' || Number.isInteger(n)) &&
      !Number.isNaN(n) &&
      (schema.minimum === undefined || n >= schema.minimum) &&
      (schema.maximum === undefined || n <= schema.maximum)
    );
  }
  return ajv.validate(schema, value);
}

const rawQueryJunk = fc.constantFrom(
  '?%',
  '?%zz=1',
  '?&&==&',
  '?a[$gt]=',
  '?__proto__[polluted]=1',
  '?constructor[prototype][x]=1',
  '?;',
  '?+=+',
  '?%00=%00',
  '?limit=1&limit=2',
);

function validQueryValue(name: string): string[] {
  const known: Record<string, string[]> = {
    callTemplateId: [fixtures.validBodies['POST /v1/phoneCalls']!.callTemplateId as string],
    phoneNumberId: ['e'.repeat(24)],
    createdAfter: ['2020-01-01T00:00:00Z'],
    createdBefore: [FAR],
    toPhoneNumber: ['+14155550123', '+1 415 555 0123'],
    status: ['queued', 'canceled', 'completed'],
    fileId: [FILE_ID],
    limit: ['1', '1000', '50'],
    cursor: [`${Date.now().toString(36)}.${'f'.repeat(24)}`],
    phoneNumber: [DNC_NUMBER],
    phoneCallId: ['e'.repeat(24)],
  };
  return known[name] ?? ['x'];
}

// Headers

const headerChar = fc
  .oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
    { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
    { weight: 1, arbitrary: fc.constant(0x09) },
  )
  .map((c) => String.fromCharCode(c));
const headerValue = fc
  .oneof(
    fc.string({ unit: headerChar, maxLength: 60 }),
    fc.constantFrom('', 'null', '{"$ne":null}', "' OR 1=1 --", 'x'.repeat(4000), '\u00ff\u00fe', '0', '-1', 'true'),
  )
  .filter(innocent);

const noiseHeaders = fc.array(
  fc.tuple(
    fc.constantFrom(
      'x-request-id',
      'x-forwarded-for',
      'x-forwarded-host',
      'x-forwarded-proto',
      'forwarded',
      'accept',
      'accept-encoding',
      'accept-language',
      'user-agent',
      'origin',
      'referer',
      'cookie',
      'authorization',
      'x-http-method-override',
      'if-none-match',
      'range',
      'idempotency-key',
    ),
    headerValue,
  ),
  { maxLength: 3 },
);

function apiKeyHeader(key: string): [string, string] {
  return ['service-api-key', key];
}

/** Keys that are not the tenant's: each must be a 401 before anything else is looked at. */
function badKeys(): fc.Arbitrary<[string, string][]> {
  const key = stack.team.key;
  const secret = key.slice(`oco_${fixtures.keyId}_`.length);
  return fc.oneof<fc.Arbitrary<[string, string][]>[]>(
    fc.constant([]),
    fc
      .constantFrom(
        key.toUpperCase(),
        `${key}x`,
        key.slice(0, -1),
        `Bearer ${key}`,
        `${key}, ${key}`,
        `oco_${'f'.repeat(24)}_${secret}`,
        `oco_${fixtures.keyId}_${'A'.repeat(43)}`,
        `oco_${fixtures.keyId.toUpperCase()}_${secret}`,
        `oco_${fixtures.keyId}`,
        'oco___',
        '{"$ne":null}',
      )
      .map((k) => [apiKeyHeader(k)]),
    headerValue.filter((v) => v.trim() !== key).map((k) => [apiKeyHeader(k)]),
    // The header twice: fetch sends `key, other`, which is no key.
    headerValue.map((k): [string, string][] => [apiKeyHeader(key), apiKeyHeader(k || 'x')]),
  );
}

// Raw bodies

const malformedJson = [
  '{',
  '{"teamId":',
  '[1,2',
  'nul',
  '"unterminated',
  '{"a":1,}',
  "{'a':1}",
  '{"a":1}{"b":2}',
  '\u0000',
  '\ufeff{"a":}',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":undefined}',
  '{"a":0x10}',
  '{"a":"\\x41"}',
  '{"a":"\\ud800\\u"}',
  '{a:1}',
  '1',
  '"a string"',
  'true',
  'null',
  '<xml/>',
  'a=1&b=2',
];

const unsupportedTypes = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json-patch+json',
  'text/json',
  'application/javascript',
];

// ---------------------------------------------------------------------------------------------
// Per operation: the requests of each phase

/** Bodies that match the document but that the service must refuse: other tenants, unknown ids, rules no schema says. */
function semanticRefusals(op: Operation): { body: unknown; path?: Record<string, PathValue>; status?: number }[] {
  const valid = fixtures.validBodies[op.name];
  const other = 'b'.repeat(24);
  const unknown = { value: 'c'.repeat(24), encoded: 'c'.repeat(24) };
  if (!valid) return [];
  const call = fixtures.validBodies['POST /v1/phoneCalls']!;
  const badCalls: Json[] = [
    { ...call, callTemplateId: 'c'.repeat(24) },
    { ...call, phoneNumberId: 'c'.repeat(24) },
    { ...call, toPhoneNumber: DNC_NUMBER },
    { ...call, toPhoneNumber: '+10000000000' },
    { ...call, callDelayedUntil: new Date(Date.now() + 500 * DAY_MS).toISOString() },
    { ...call, calleeTimeZone: 'Mars/Olympus_Mons' },
    { ...call, promptVariableValues: [] },
    {
      ...call,
      promptVariableValues: [
        { key: 'firstName', value: 'a' },
        { key: 'firstName', value: 'b' },
      ],
    },
    {
      ...call,
      promptVariableValues: [
        { key: 'firstName', value: 'a' },
        { key: 'noSuchVariable', value: 'b' },
      ],
    },
    {
      ...call,
      phoneCallWebhooks: [{ url: LOCAL_HOOK, subscribedEvent: 'phoneCall.completed', secret: 'whsec_!!not base64!!' }],
    },
  ];
  switch (op.name) {
    case 'POST /v1/phoneCalls':
      return [{ body: { ...call, teamId: other }, status: 403 }, ...badCalls.map((body) => ({ body }))];
    case 'POST /v1/phoneCalls/batch':
      return [
        { body: { ...valid, phoneCalls: [call, { ...call, teamId: other }] }, status: 403 },
        // All or nothing: the valid element beside a refused one is not created either.
        ...badCalls.map((bad) => ({ body: { ...valid, phoneCalls: [call, bad] } })),
      ];
    case 'POST /v1/webhooks':
    case 'POST /v1/doNotCall':
      return [
        { body: { ...valid, teamId: other }, status: 403 },
        ...(op.name === 'POST /v1/doNotCall'
          ? [{ body: { ...valid, entries: [{ phoneNumber: '+14155550188' }, { phoneNumber: '+10000000000' }] } }]
          : []),
      ];
    case 'PATCH /v1/webhooks/{_id}':
      return [{ body: valid, path: { _id: unknown }, status: 404 }];
    default:
      return [];
  }
}

function refusedRequest(op: Operation): fc.Arbitrary<HostileRequest> {
  const key = stack.team.key;
  const real = Object.fromEntries(op.pathParams.map((p) => [p, fixtureFor(op, p)]));
  const valid = fixtures.validBodies[op.name];
  const takesBody = ['POST', 'PUT', 'PATCH'].includes(op.method);
  const base = (why: string): HostileRequest => ({
    expect: 'refused',
    why,
    elsewhere: false,
    ...at(op, real),
    query: '',
    headers: valid ? [apiKeyHeader(key), ['content-type', 'application/json']] : [apiKeyHeader(key)],
    ...(valid ? { body: valid } : {}),
  });
  const jsonHeaders: [string, string][] = [apiKeyHeader(key), ['content-type', 'application/json']];

  const strategies: fc.Arbitrary<HostileRequest>[] = [];

  // Any operation: no key, or not this tenant's key; everything else may be the tenant's own.
  strategies.push(
    badKeys().map((headers) => ({
      ...base('no valid key'),
      status: 401,
      headers: [...headers, ...(valid ? [['content-type', 'application/json'] as [string, string]] : [])],
    })),
  );

  // A path id that names nothing of this team's.
  if (op.pathParams.length > 0) {
    const value = hostilePathValue.filter((v) => !namesFixture(v.value) && !redirectsPath(v.value));
    strategies.push(
      fc
        .tuple(fc.constantFrom(...op.pathParams), value)
        .map(([param, v]) => ({ ...base(`unknown ${param}`), ...at(op, { ...real, [param]: v }) })),
    );
  }

  // A query string the operation's parameters refuse: an unknown key, a key twice, a value out of bounds.
  if (op.queryParams.length > 0) {
    const names = op.queryParams.map((p) => p.name);
    const unknownKey = fc
      .tuple(
        fc.oneof(hostileKey, fc.constantFrom(...names.map((n) => `${n}[$gt]`), ...names.map((n) => `${n}.$ne`))),
        hostileString,
      )
      .filter(([k]) => !names.includes(k.replace(/[\ud800-\udfff]/g, '\ufffd')))
      .map(([k, v]): QueryPair[] => [[k, v]]);
    const twice = fc.tuple(fc.constantFrom(...names), hostileString, hostileString).map(([n, a, b]): QueryPair[] => [
      [n, a],
      [n, b],
    ]);
    const badValue = fc
      .tuple(
        fc.constantFrom(...op.queryParams),
        fc.oneof(
          hostileString,
          invalidDates,
          hugeString.map((r) => JSON.parse(r.text) as string).filter((s) => s.length < 3000),
        ),
      )
      .filter(([p, v]) => !queryValueValid(p, v.replace(/[\ud800-\udfff]/g, '\ufffd')))
      .map(([p, v]): QueryPair[] => [[p.name, v]]);
    const extra = fc.array(fc.tuple(fc.constantFrom(...names), fc.constantFrom(...names.flatMap(validQueryValue))), {
      maxLength: 2,
    });
    strategies.push(
      fc.tuple(fc.oneof(unknownKey, twice, badValue), extra, fc.boolean()).map(([bad, more, shuffled]) => ({
        ...base('query refused'),
        query: encodeQuery(shuffled ? [...more, ...bad] : [...bad, ...more]),
      })),
    );
  }

  if (op.bodySchema) {
    const schema = op.bodySchema;
    const refusedByDocument = (body: unknown) => !schema(JSON.parse(serialize(body)));
    // One field of a valid body made hostile (or the whole body random), refused by the document's schema.
    const bodies = fc
      .oneof(
        { weight: 4, arbitrary: mutation.map((m) => applyMutation(valid ?? {}, m)) },
        { weight: 1, arbitrary: randomJson },
      )
      .map(makeSafe)
      .filter(refusedByDocument);
    strategies.push(bodies.map((body) => ({ ...base('body refused by the schema'), headers: jsonHeaders, body })));
    // Valid by the schema, refused by the service's own rules.
    const semantic = semanticRefusals(op);
    if (semantic.length > 0) {
      strategies.push(
        fc.constantFrom(...semantic).map((s) => ({
          ...base('body refused by the rules'),
          headers: jsonHeaders,
          body: makeSafe(JSON.parse(JSON.stringify(s.body))),
          ...(s.path ? at(op, { ...real, ...s.path }) : {}),
          ...(s.status ? { status: s.status } : {}),
        })),
      );
    }
  }

  if (takesBody) {
    // Malformed JSON, bytes that are not UTF-8, content types other than JSON, too large. (A charset
    // parameter is not a refusal: the body is read as UTF-8 whatever it says, so the "any" phase sends those.)
    const emptyIsRefused = op.bodySchema ? !op.bodySchema({}) : false;
    const malformed = fc
      .constantFrom(...malformedJson, ...(emptyIsRefused ? ['', '   '] : []))
      .map((text) => ({ ...base('malformed JSON'), headers: jsonHeaders, rawBody: text }));
    const notUtf8 = fc.uint8Array({ minLength: 1, maxLength: 8 }).map((bytes) => ({
      ...base('not UTF-8'),
      headers: jsonHeaders,
      rawBody: Buffer.concat([Buffer.from('{"'), Buffer.from([0xff, 0xfe, ...bytes]), Buffer.from('": [}')]),
    }));
    const wrongType = fc.tuple(fc.constantFrom(...unsupportedTypes), fc.boolean()).map(([type, json]) => ({
      ...base('not JSON'),
      status: 415,
      headers: [apiKeyHeader(key), ['content-type', type]] as [string, string][],
      rawBody: json ? serialize(valid ?? { a: 1 }) : 'a=1&b=2',
    }));
    const noType = fc.constant({
      ...base('no content type'),
      status: 415,
      headers: [apiKeyHeader(key)] as [string, string][],
      rawBody: Buffer.from(serialize(valid ?? { a: 1 })),
    });
    const tooLarge = fc.integer({ min: BODY_LIMIT_BYTES + 1, max: 2 * BODY_LIMIT_BYTES }).map((size) => ({
      ...base(`body of ${size} bytes`),
      status: 413,
      headers: jsonHeaders,
      rawBody: new Raw(
        serialize({ ...(valid ?? {}), padding: 'x'.repeat(size) }),
        `a valid body with a ${size}-character padding field`,
      ),
    }));
    strategies.push(fc.oneof(malformed, notUtf8, wrongType, noType, tooLarge));
  }

  // Noise on top: hostile headers and a query string that must not turn a refusal into an acceptance.
  return fc
    .tuple(fc.oneof(...strategies), noiseHeaders, fc.option(rawQueryJunk, { nil: undefined }))
    .map(([request, noise, junk]) =>
      printable({
        ...request,
        headers: [...request.headers, ...noise],
        query: request.query || (junk && op.queryParams.length === 0 ? junk : request.query),
      }),
    );
}

function anyRequest(op: Operation): fc.Arbitrary<HostileRequest> {
  const key = stack.team.key;
  const valid = fixtures.validBodies[op.name];
  const real = Object.fromEntries(op.pathParams.map((p) => [p, fixtureFor(op, p)]));
  const weird = fc
    .constantFrom('', '.', '..', '%2e%2e', 'batch', 'file', 'BATCH')
    .map((s) => ({ value: decodeURIComponent(s), encoded: s }));
  const pathValues = fc.record(
    Object.fromEntries(
      op.pathParams.map((p) => [
        p,
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(real[p]!) },
          { weight: 3, arbitrary: hostilePathValue },
          { weight: 1, arbitrary: weird },
        ),
      ]),
    ) as Record<string, fc.Arbitrary<PathValue>>,
  );
  const query = op.queryParams.length
    ? fc
        .array(
          fc.oneof(
            {
              weight: 3,
              arbitrary: fc.constantFrom(
                ...op.queryParams.flatMap((p) => validQueryValue(p.name).map((v): QueryPair => [p.name, v])),
              ),
            },
            { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...op.queryParams.map((p) => p.name)), hostileString) },
            { weight: 1, arbitrary: fc.tuple(hostileKey, hostileString) },
          ),
          { maxLength: 4 },
        )
        .map((pairs) => encodeQuery(pairs))
    : fc.option(rawQueryJunk, { nil: '' });
  const body: fc.Arbitrary<unknown> = op.bodySchema
    ? fc.oneof(
        { weight: 2, arbitrary: fc.constant(valid ?? {}) },
        { weight: 5, arbitrary: mutation.map((m) => applyMutation(valid ?? {}, m)) },
        { weight: 1, arbitrary: randomJson },
      )
    : fc.option(randomJson, { nil: undefined });
  const keyHeaders = fc.oneof(
    { weight: 9, arbitrary: fc.constant([apiKeyHeader(key)]) },
    { weight: 1, arbitrary: badKeys() },
  );
  // Content types the service may take for JSON or refuse (415), and encodings it cannot undo.
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'application/json; charset=utf-16',
        'application/json; charset=x-no-such-charset',
        'application/json;charset=UTF-8',
        'APPLICATION/JSON',
        'application/json, text/plain',
        'application/merge-patch+json',
        'application/vnd.api+json',
        'text/plain',
        '',
      ),
    },
  );
  const contentEncoding = fc.option(
    fc.constantFrom('gzip (compressed)', 'gzip', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip'),
    { nil: undefined, freq: 8 },
  );
  return fc
    .record({ values: pathValues, query, body, keyHeaders, noise: noiseHeaders, contentType, contentEncoding })
    .map(({ values, query: q, body: b, keyHeaders: kh, noise, contentType: type, contentEncoding: encoding }) => {
      const safe = b === undefined ? undefined : makeSafe(cloneTree(b));
      const bodyHeaders: [string, string][] =
        safe === undefined
          ? []
          : [
              ...(type ? [['content-type', type] as [string, string]] : []),
              ...(encoding ? [['content-encoding', encoding.replace(' (compressed)', '')] as [string, string]] : []),
            ];
      return printable({
        expect: 'any' as const,
        why: 'anything goes',
        elsewhere: Object.values(values).some((v) => redirectsPath(v.value)),
        ...at(op, values),
        query: q,
        headers: [...kh, ...bodyHeaders, ...noise],
        ...(safe !== undefined ? { body: safe } : {}),
        ...(safe !== undefined && encoding === 'gzip (compressed)' ? { gzipped: true } : {}),
      });
    });
}

/** A copy that keeps Raw nodes and own `__proto__` keys. */
function cloneTree(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneTree);
  if (!isPlainObject(value)) return value;
  const out: Json = {};
  for (const k of Object.keys(value)) withOwn(k, cloneTree(value[k]), out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sending and judging

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

async function send(op: Operation, request: HostileRequest): Promise<Answer> {
  const raw = request.rawBody instanceof Raw ? request.rawBody.text : request.rawBody;
  const text = raw ?? (request.body === undefined ? undefined : serialize(request.body));
  const body = request.gzipped && text !== undefined ? gzipSync(text) : text;
  const res = await fetch(`${stack.baseUrl}${request.path}${request.query}`, {
    method: op.method,
    headers: request.headers,
    body: op.method === 'GET' ? undefined : body,
    redirect: 'manual',
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

const STACK_FRAME = /(?:^|\n)\s*at\s+\S.*(?:\(|:\d+:\d+)/;

/** Properties 1 and 2 (and, for the refused phase, that it was refused); throws with the whole story. */
function judge(op: Operation, request: HostileRequest, answer: Answer): void {
  const problems: string[] = [];
  const { status } = answer;
  if (status >= 500) problems.push(`answered ${status}`);
  else if (!op.declared.has(status) && !(request.elsewhere && (status === 404 || status === 405)))
    problems.push(`answered ${status}, which the document does not declare for ${op.name}`);
  if (request.expect === 'refused' && (status < 400 || status >= 500))
    problems.push(`must be refused (${request.why}) but answered ${status}`);
  if (request.status !== undefined && status !== request.status && status < 500)
    problems.push(`expected ${request.status} (${request.why}), got ${status}`);
  if (status >= 400) {
    let body: any;
    try {
      body = JSON.parse(answer.text);
    } catch {
      problems.push('the error body is not JSON');
    }
    if (body !== undefined) {
      const error = body?.error;
      const shapeOk =
        body &&
        typeof body === 'object' &&
        Object.keys(body).sort().join() === 'error,payload' &&
        JSON.stringify(body.payload) === '{}' &&
        error &&
        typeof error === 'object' &&
        Object.keys(error).sort().join() === 'error,message,statusCode' &&
        error.statusCode === status &&
        typeof error.error === 'string' &&
        Array.isArray(error.message) &&
        error.message.length > 0 &&
        error.message.every((m: unknown) => typeof m === 'string' && m.length > 0);
      if (!shapeOk) problems.push('the error body is not the documented shape');
      const messages = Array.isArray(error?.message) ? (error.message as unknown[]).join('\n') : '';
      if (STACK_FRAME.test(messages) || /\\n\s+at\s/.test(answer.text))
        problems.push('the error body holds a stack trace');
      for (const marker of LEAK_MARKERS)
        if (answer.text.includes(marker)) problems.push(`the error body names an internal path (${marker})`);
      if (/\.(?:[cm]?js|ts):\d+/.test(answer.text)) problems.push('the error body names a source file');
    }
    if (!/^application\/json/.test(answer.contentType))
      problems.push(`the error is ${answer.contentType || 'untyped'}`);
  }
  if (problems.length > 0) {
    const shown = answer.text.length > 800 ? `${answer.text.slice(0, 800)}...` : answer.text;
    throw new Error(
      `${op.method} ${cut(request.path + request.query, 300)}: ${problems.join('; ')}\nanswer ${status}: ${shown}`,
    );
  }
}

/** fast-check's report (seed, path, shrunk counterexample) and the judge's reason, which it keeps as the cause. */
function failureText(err: unknown): string {
  const error = err as Error;
  const cause = error.cause instanceof Error ? `\n${error.cause.message}` : '';
  return `${cut(error.message, 2000)}${cut(cause, 2000)}`;
}

// Stored data

type Snapshot = Map<string, Map<string, string>>;

/**
 * Left out of the comparison: the per-key rate limit's shared windows (src/api/rate-limit.ts) count
 * every authenticated request, refused or not, by design; they hold counts, not the tenant's data.
 */
const COUNTED_BY_EVERY_REQUEST = new Set(['ratelimitwindows']);

/** Every document of every collection of the stack's database, as canonical extended JSON by _id. */
async function snapshot(): Promise<Snapshot> {
  const db = mongoose.connection.db;
  if (!db) throw new Error('mongoose is not connected');
  const out: Snapshot = new Map();
  const collections = await db.listCollections({}, { nameOnly: true }).toArray();
  for (const { name } of collections.sort((a, b) => a.name.localeCompare(b.name))) {
    if (name.startsWith('system.') || COUNTED_BY_EVERY_REQUEST.has(name)) continue;
    const docs = await db.collection(name).find({}).toArray();
    const byId = new Map<string, string>();
    for (const d of docs)
      byId.set(mongoose.mongo.BSON.EJSON.stringify(d._id), mongoose.mongo.BSON.EJSON.stringify(d, { relaxed: false }));
    out.set(name, byId);
  }
  return out;
}

function differences(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name) ?? new Map<string, string>();
    const b = after.get(name) ?? new Map<string, string>();
    if (!before.has(name)) out.push(`collection ${name} appeared`);
    for (const [id, text] of b) {
      if (!a.has(id)) out.push(`${name}: added ${text.slice(0, 400)}`);
      else if (a.get(id) !== text)
        out.push(`${name}: changed ${id}\n  was ${a.get(id)!.slice(0, 400)}\n  now ${text.slice(0, 400)}`);
    }
    for (const id of a.keys()) if (!b.has(id)) out.push(`${name}: removed ${id}`);
  }
  return out;
}

/** Waits until nothing changes by itself any more (workflows of the fixtures writing their first status). */
async function settledSnapshot(): Promise<Snapshot> {
  const deadline = Date.now() + 20_000;
  let last = await snapshot();
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const next = await snapshot();
    const changed = differences(last, next);
    if (changed.length === 0) return next;
    if (Date.now() > deadline) throw new Error(`the database does not settle:\n${changed.join('\n')}`);
    last = next;
  }
}

// ---------------------------------------------------------------------------------------------
// Setup

async function post(path: string, body: unknown): Promise<Json> {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'service-api-key': stack.team.key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  if (res.status >= 300) throw new Error(`fixture ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function readOperations(): Operation[] {
  const reader = documentReader(doc);
  const resolve = (p: Json) => (typeof p.$ref === 'string' ? (reader.atPointer(p.$ref) as Json) : p);
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    if (!template.startsWith('/v1/') || template === '/v1/openapi.json') continue;
    for (const method of HTTP_METHODS.filter((m) => m in item)) {
      const operation = item[method] as Json;
      const parameters = [...((item.parameters as Json[]) ?? []), ...((operation.parameters as Json[]) ?? [])].map(
        resolve,
      );
      const pointer = `/paths/${escapePointer(template)}/${method}/requestBody/content/application~1json/schema`;
      ops.push({
        name: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        declared: new Set(Object.keys(operation.responses as Json).map(Number)),
        pathParams: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        queryParams: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name as string, schema: p.schema as Json })),
        bodySchema: reader.atPointer(pointer) ? ajv.compile({ $ref: `${DOC_ID}#${pointer}` }) : null,
      });
    }
  }
  return ops;
}

let settled: Snapshot;

/** One seed per operation (from SEED and its name), so operations do not all get the same draws. */
function seedOf(op: Operation): number {
  let hash = SEED | 0;
  for (const ch of op.name) hash = (Math.imul(hash, 31) + ch.charCodeAt(0)) | 0;
  return hash;
}

function destructiveness(op: Operation): number {
  if (op.method === 'DELETE' || op.template.endsWith('/cancel')) return 3;
  return op.method === 'GET' ? 0 : op.method === 'PATCH' ? 1 : 2;
}

beforeAll(async () => {
  stack = await startTestStack({ env: { REQUEST_BODY_LIMIT: `${BODY_LIMIT_BYTES / 1024}kb` } });
  const res = await fetch(`${stack.baseUrl}/v1/openapi.json`);
  doc = (await res.json()) as Json;
  ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  ajv.addSchema(doc, DOC_ID, undefined, false);
  operations = readOperations();

  const team = stack.team;
  const call = seededCallBody(team, '+14155550123', {
    nameOfHuman: 'Lin Hostile',
    phoneNumberId: team.phoneNumberIds.twilio,
    fromPhoneNumber: '+14155550100',
    toEmailAddress: 'lin@example.com',
    status: 'queued',
    telephonyProvider: 'twilio',
    record: false,
    callDelayedUntil: FAR,
    calleeTimeZone: 'America/Los_Angeles',
    phoneCallWebhooks: [{ url: LOCAL_HOOK, subscribedEvent: 'phoneCall.completed', secret: 'a-secret-of-length' }],
  });
  const validBodies: Record<string, Json> = {
    'POST /v1/phoneCalls': call,
    'POST /v1/phoneCalls/batch': { phoneCalls: [call], fileId: FILE_ID, fileName: 'hostile.csv' },
    // Subscribed only to an event calls months ahead never send: no delivery runs in the background.
    'POST /v1/webhooks': {
      teamId: team.teamId,
      url: LOCAL_HOOK,
      subscribedEvents: ['phoneCall.completed'],
      method: 'POST',
    },
    'PATCH /v1/webhooks/{_id}': { url: `${LOCAL_HOOK}/2`, subscribedEvents: ['phoneCall.completed'], method: 'GET' },
    'POST /v1/doNotCall': { teamId: team.teamId, entries: [{ phoneNumber: DNC_NUMBER, reason: 'asked' }] },
  };
  for (const op of operations) {
    const body = validBodies[op.name];
    if (body && op.bodySchema && !op.bodySchema(body))
      throw new Error(`the valid ${op.name} body fails its schema: ${ajv.errorsText(op.bodySchema.errors)}`);
  }
  const webhook = await post('/v1/webhooks', validBodies['POST /v1/webhooks']);
  await post('/v1/doNotCall', validBodies['POST /v1/doNotCall']);
  const created = await post('/v1/phoneCalls', call);
  const batch = await post('/v1/phoneCalls/batch', validBodies['POST /v1/phoneCalls/batch']);
  fixtures = {
    callId: created.data._id,
    webhookId: webhook.data._id,
    batchId: batch.batchId,
    keyId: /^oco_([0-9a-f]{24})_/.exec(team.key)![1]!,
    validBodies,
  };
  settled = await settledSnapshot();
});

afterAll(async () => {
  await stack?.stop();
});

describe('hostile input', () => {
  it('covers every /v1 operation of the document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    expect(operations.map((o) => o.name)).toEqual(
      expect.arrayContaining(['POST /v1/phoneCalls', 'PATCH /v1/webhooks/{_id}', 'DELETE /v1/doNotCall/{phoneNumber}']),
    );
  });

  it('refused requests: refused, documented, in the error shape, and nothing stored changes', async () => {
    const failures: string[] = [];
    let before = settled;
    for (const op of operations) {
      try {
        await fc.assert(
          fc.asyncProperty(refusedRequest(op), async (request) => {
            judge(op, request, await send(op, request));
          }),
          { seed: seedOf(op), numRuns: REFUSED_RUNS },
        );
      } catch (err) {
        failures.push(`${op.name}: ${failureText(err)}`);
      }
      const after = await snapshot();
      const changed = differences(before, after);
      if (changed.length > 0) failures.push(`${op.name}: refused requests changed stored data:\n${changed.join('\n')}`);
      before = after;
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
  });

  it('any request: never a 5xx, only documented statuses, errors in the error shape; nobody is dialled', async () => {
    const failures: string[] = [];
    // Reads first and destructive operations last, so that the fixtures live as long as possible.
    for (const op of [...operations].sort((a, b) => destructiveness(a) - destructiveness(b))) {
      try {
        await fc.assert(
          fc.asyncProperty(anyRequest(op), async (request) => {
            judge(op, request, await send(op, request));
          }),
          { seed: seedOf(op), numRuns: ANY_RUNS },
        );
      } catch (err) {
        failures.push(`${op.name}: ${failureText(err)}`);
      }
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
    // Every call created here waits months, and the provider emulator was never asked to dial.
    const soonest = await mongoose.connection
      .db!.collection('phonecalls')
      .find({ $or: [{ callDelayedUntil: { $lt: new Date(Date.now() + 30 * DAY_MS) } }, { callDelayedUntil: null }] })
      .toArray();
    expect(soonest.map((c) => c._id.toHexString())).toEqual([]);
    expect(stack.emulator.calls()).toEqual([]);
  });
});

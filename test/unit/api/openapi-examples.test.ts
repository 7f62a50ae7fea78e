// The examples of the OpenAPI document: every success answer of every operation shows one, and every
// example (answers, errors, request bodies, webhook deliveries) is valid against the schema beside it,
// with the document's $refs resolved against its components. They also tell one story: one team, ids
// that point at each other, absolute URLs on the server, timestamps as the service writes them.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../src/api/openapi';
import { decodeCursor } from '../../../src/api/pagination';
import { documentReader, escapePointer, type Json } from '../../helpers/openapi-document';

const DOC_ID = 'https://openapi.test/openapi.json';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const SERVER = 'http://localhost:3000';
// A trailing slash, as an operator may configure it: URLs in examples must not double it.
const doc: Json = buildOpenApiDocument(`${SERVER}/`);
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, DOC_ID);

const { atPointer, deref } = documentReader(doc);

/** One media type of a response or request body: where its schema is, and the examples it shows. */
type Content = { label: string; status?: string; mediaType: string; schemaPointer: string; examples: unknown[] };

function contentsOf(label: string, pointer: string, body: Json, status?: string): Content[] {
  return Object.entries((body.content ?? {}) as Json).map(([mediaType, media]: [string, Json]) => ({
    label: `${label} ${mediaType}`,
    status,
    mediaType,
    schemaPointer: `${pointer}/content/${escapePointer(mediaType)}/schema`,
    examples: [
      ...('example' in media ? [media.example] : []),
      ...Object.values((media.examples ?? {}) as Json).map((example: Json) => deref(example, '').value.value),
    ],
  }));
}

/** Every response and request body content of every operation, of the paths and of the webhooks. */
function allContents(): Content[] {
  const contents: Content[] = [];
  for (const section of ['paths', 'webhooks']) {
    for (const [template, item] of Object.entries((doc[section] ?? {}) as Json)) {
      for (const method of HTTP_METHODS.filter((m) => m in item)) {
        const operation = item[method] as Json;
        const pointer = `/${section}/${escapePointer(template)}/${method}`;
        const label = `${method.toUpperCase()} ${template}`;
        for (const [status, declared] of Object.entries((operation.responses ?? {}) as Json)) {
          const response = deref(declared, `${pointer}/responses/${status}`);
          contents.push(...contentsOf(`${label} ${status}`, response.pointer, response.value, status));
        }
        if (operation.requestBody) {
          const body = deref(operation.requestBody, `${pointer}/requestBody`);
          contents.push(...contentsOf(`${label} request`, body.pointer, body.value));
        }
      }
    }
  }
  return contents;
}

const contents = allContents();
const successes = contents.filter((c) => c.status && /^2/.test(c.status));
/** Binary media (audio) have no example that a document could show. */
const isBinary = (c: Content) =>
  typeof deref(atPointer(c.schemaPointer) as Json, '').value.contentMediaType === 'string';

function validate(c: Content, example: unknown): void {
  const check = ajv.getSchema(`${DOC_ID}#${c.schemaPointer}`) ?? ajv.compile({ $ref: `${DOC_ID}#${c.schemaPointer}` });
  expect(check(example), `${c.label}: ${ajv.errorsText(check.errors)}`).toBe(true);
}

/** Every [key, value] pair anywhere inside the examples. */
function* entries(node: unknown): Generator<[string, unknown]> {
  if (Array.isArray(node)) for (const item of node) yield* entries(item);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      yield [key, value];
      yield* entries(value);
    }
  }
}
/** The JSON example of an operation's answer with that status. */
const exampleOf = (operationId: string, status: string): Json => {
  for (const item of Object.values(doc.paths as Json)) {
    const operation = HTTP_METHODS.map((m) => item[m] as Json | undefined).find((o) => o?.operationId === operationId);
    if (operation) return operation.responses[status].content['application/json'].example as Json;
  }
  throw new Error(`no operation ${operationId}`);
};

describe('the examples of the OpenAPI document', () => {
  it('are required of every success but the audio files, whose bytes a document cannot show', () => {
    expect(successes.length).toBeGreaterThan(20);
    expect(successes.filter(isBinary).map((c) => c.mediaType)).toEqual(['audio/wav', 'audio/wav']);
  });

  it.each(successes.filter((c) => !isBinary(c)).map((c) => [c.label, c] as const))(
    '%s shows a valid example',
    (_, c) => {
      expect(c.examples.length, `${c.label} has no example`).toBeGreaterThan(0);
      for (const example of c.examples) validate(c, example);
    },
  );

  it('are all valid against their schemas: errors, request bodies and webhook deliveries too', () => {
    const shown = contents.filter((c) => c.examples.length > 0);
    expect(shown.filter((c) => !c.status).map((c) => c.label)).toEqual(
      expect.arrayContaining([
        'POST /v1/phoneCalls request application/json',
        'POST /v1/phoneCalls/batch request application/json',
        'POST callEvent request application/json',
      ]),
    );
    for (const c of shown) for (const example of c.examples) validate(c, example);
  });

  it('are rejected when wrong, so the validation above means something', () => {
    const created = successes.find((c) => c.label === 'POST /v1/phoneCalls 201 application/json')!;
    const check = ajv.compile({ $ref: `${DOC_ID}#${created.schemaPointer}` });
    const example = created.examples[0] as Json;
    expect(check(example)).toBe(true);
    expect(check({ data: { ...example.data, status: 'ringing' } })).toBe(false);
    expect(check({ data: { ...example.data, providerCallId: 'CA1' } })).toBe(false);
  });

  it('tell one story: one team, ids that refer to each other, URLs on the server, service timestamps', () => {
    const all = contents.flatMap((c) => c.examples);
    const values = (key: string) => new Set([...entries(all)].filter(([k]) => k === key).map(([, v]) => v));
    expect(values('teamId')).toEqual(new Set([exampleOf('createPhoneCall', '201').data.teamId]));

    const call = exampleOf('getPhoneCall', '200').data as Json;
    expect(call._id).toBe(exampleOf('createPhoneCall', '201').data._id);
    expect(values('phoneCallId')).toEqual(new Set([call._id]));
    const batch = exampleOf('createPhoneCallBatch', '201') as Json;
    expect(batch.data.map((c: Json) => c._id)).toContain(exampleOf('deletePhoneCall', '200').data._id);
    expect(exampleOf('pausePhoneCallBatch', '200').data.batchId).toBe(batch.batchId);
    expect(exampleOf('pausePhoneCallFile', '200').data.fileId).toBe(batch.data[0].fileId);
    expect(exampleOf('getWebhook', '200').data._id).toBe(exampleOf('createWebhook', '200').data._id);
    expect(exampleOf('getWebhook', '200').data).not.toHaveProperty('secret');

    // The list's cursor points after its last call, as the service's own cursors do.
    const list = exampleOf('listPhoneCalls', '200') as Json;
    const last = list.data.at(-1) as Json;
    expect(decodeCursor(list.nextCursor)).toEqual({ at: new Date(last.createdAt), id: last._id });

    for (const key of ['recordingUrl', 'voiceSampleUrl']) {
      expect(values(key).size, key).toBeGreaterThan(0);
      for (const url of values(key)) expect(url, key).toMatch(new RegExp(`^${SERVER}/[^/]`));
    }
    const times = [...entries(all)].filter(([k]) => /(At|Time|timestamp|dateTime|createAt|Until)$/.test(k));
    expect(times.length).toBeGreaterThan(20);
    for (const [key, value] of times) expect(new Date(value as string).toISOString(), key).toBe(value);
  });

  it('show /metrics in the Prometheus text format', () => {
    const metrics = successes.find((c) => c.label.startsWith('GET /metrics 200'))!;
    const text = metrics.examples[0] as string;
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text.endsWith('\n')).toBe(true);
    for (const line of text.trimEnd().split('\n')) {
      expect(line).toMatch(/^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9.e+-]+)$/);
    }
  });
});

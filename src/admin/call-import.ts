// `calls import`: a bulk of calls from a CSV file. The whole file is checked first (every bad line
// reported, nothing created); then the calls go to the API's batch endpoint in chunks, each under an
// Idempotency-Key derived from the file's content and the chunk, so that an interrupted import run
// again creates nothing twice (within the API's 24-hour idempotency window).
import { createHash } from 'node:crypto';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { Types } from 'mongoose';
import { listedAmong } from '../data/do-not-call-store';
import { prepareCalls } from '../calls/prepare-calls';
import { BatchCallDeletion } from '../data/models/batch-call-deletion';
import { CallTemplate } from '../data/models/call-template';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyRecord } from '../data/models/idempotency-record';
import { PhoneCall } from '../data/models/phone-call';
import type { TeamDoc } from '../data/models/team';
import { BATCH_CREATE_SCOPE, MAX_BATCH } from '../contracts/batches';
import { phoneCallCreateSchema } from '../schemas/phone-calls';
import { CommandError } from './command-error';
import { requireTeam } from './commands';
import { columnKey, countryOf, csvRows, readOperatorFile, refuseProblems, type CsvRow } from './csv';
import { apiFor, refusal, unreachable, type ApiCall } from './api-target';
import { errorMessages, type ApiSchemas } from '../client/api-client';

/** CSV columns that are call fields (matched by columnKey); every other column is a prompt variable. */
const FIELD_COLUMNS: Record<string, string> = {
  tophonenumber: 'toPhoneNumber',
  phonenumber: 'toPhoneNumber',
  phone: 'toPhoneNumber',
  number: 'toPhoneNumber',
  nameofhuman: 'nameOfHuman',
  name: 'nameOfHuman',
  toemailaddress: 'toEmailAddress',
  email: 'toEmailAddress',
  calldelayeduntil: 'callDelayedUntil',
  scheduledfor: 'callDelayedUntil',
  calleetimezone: 'calleeTimeZone',
  timezone: 'calleeTimeZone',
  telephonyprovider: 'telephonyProvider',
  provider: 'telephonyProvider',
  record: 'record',
};
const BOOLEAN_CELLS: Record<string, boolean> = {
  true: true,
  yes: true,
  '1': true,
  false: false,
  no: false,
  '0': false,
};
const DEFAULT_CHUNK = 1_000;
/** Tries of one chunk when the API is unreachable or answers 5xx or 429 (the same key each time). */
const CHUNK_TRIES = 5;

export interface CallRow {
  line: number;
  element: Record<string, unknown>;
}

export interface CallCsvOptions {
  teamId: string;
  template: { id: string; variables: string[]; requiredVariables: string[] };
  defaultCountry?: CountryCode;
}

/** A bad line of the file and what is wrong with it. */
export interface LineProblem {
  line: number;
  problem: string;
}

/** Reads and checks every row: the calls as the batch endpoint takes them, or every problem. */
export function readCallCsv(content: string, options: CallCsvOptions): CallRow[] {
  const { calls, problems } = checkCallCsv(content, options);
  refuseProblems(problems.map(describeProblem), `nothing imported: ${problems.length} bad line(s)`);
  return calls;
}

const describeProblem = ({ line, problem }: LineProblem) => `line ${line}: ${problem}`;

/** How a number written without its country code looks: `(415) 555-0101`, `0612345678`. */
const NATIONAL_NUMBER = /^[\d\s().-]+$/;

/**
 * Checks every row: the calls of the lines that are good, and the problems of the others (a file
 * that is not CSV, or whose header is wrong, is refused at once).
 */
export function checkCallCsv(content: string, options: CallCsvOptions): { calls: CallRow[]; problems: LineProblem[] } {
  const rows = csvRows(content);
  if (rows.length < 2) throw new CommandError('the file needs a header row and at least one call');
  const [header, ...body] = rows as [CsvRow, ...CsvRow[]];
  const variables = new Map(options.template.variables.map((v) => [columnKey(v), v]));
  const columns = header.cells.map((name) => {
    // A template's own variable first: a template saying {{name}} or {{email}} means that column, not
    // the call field of the same name (which left the variable empty: "Hello, this is Ada").
    const variable = variables.get(columnKey(name));
    if (variable) return { kind: 'variable' as const, name: variable };
    const field = FIELD_COLUMNS[columnKey(name)];
    if (field) return { kind: 'field' as const, name: field };
    throw new CommandError(
      `column "${name}" is neither a call field (${[...new Set(Object.values(FIELD_COLUMNS))].join(', ')}) ` +
        `nor a variable of the template (${options.template.variables.join(', ') || 'none'})`,
    );
  });
  if (!columns.some((c) => c.kind === 'field' && c.name === 'toPhoneNumber'))
    throw new CommandError('the header row has no phone number column');
  // Two columns for one field or variable (`phone` and `number`): the last one would win unseen.
  const seen = new Map<string, string>();
  header.cells.forEach((name, at) => {
    const { kind, name: target } = columns[at]!;
    const earlier = seen.get(`${kind}:${target}`);
    if (earlier !== undefined)
      throw new CommandError(
        `columns "${earlier}" and "${name}" are both ${kind === 'field' ? 'the call field' : 'the variable'} ${target}: keep one`,
      );
    seen.set(`${kind}:${target}`, name);
  });

  const problems: LineProblem[] = [];
  const calls: CallRow[] = [];
  body.forEach(({ cells: row, line }) => {
    const element: Record<string, unknown> = { teamId: options.teamId, callTemplateId: options.template.id };
    const values: { key: string; value: string }[] = [];
    const rowProblems: string[] = [];
    /** A national number (digits and punctuation, no `+`) with no --default-country to read it by. */
    let needsCountry = false;
    // A cell past the header's columns (an unquoted comma in `Acme, Inc.`) would shift nothing but be
    // dropped unseen: the row's variables may be the wrong cells. Empty ones (a trailing comma) are not.
    if (row.slice(columns.length).some((cell) => cell !== ''))
      rowProblems.push(
        `${row.length} cells where the header has ${columns.length} (a comma in a value needs the value in double quotes)`,
      );
    columns.forEach((column, at) => {
      const cell = row[at] ?? '';
      if (cell === '') return;
      if (column.kind === 'variable') values.push({ key: column.name, value: cell });
      else if (column.name === 'record') {
        const flag = BOOLEAN_CELLS[cell.toLowerCase()];
        if (flag === undefined) rowProblems.push(`record must be true or false, not "${cell}"`);
        else element.record = flag;
      } else if (column.name === 'toPhoneNumber') {
        // National numbers take the default country; the schema then checks the E.164 form. A number
        // with an extension keeps it, so that the schema refuses it as the API does (dropped, the
        // call would ring the switchboard).
        const number = parsePhoneNumberFromString(cell, options.defaultCountry);
        needsCountry = !options.defaultCountry && NATIONAL_NUMBER.test(cell);
        element.toPhoneNumber = number ? `${number.number}${number.ext ? ` ext. ${number.ext}` : ''}` : cell;
      } else element[column.name] = cell;
    });
    if (values.length) element.promptVariableValues = values;
    const given = new Set(values.map((v) => v.key));
    const missing = options.template.requiredVariables.filter((v) => !given.has(v));
    if (missing.length) rowProblems.push(`missing required variable(s) ${missing.join(', ')}`);
    const parsed = phoneCallCreateSchema.safeParse(element);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = issue.path.join('.');
        const hint =
          field === 'toPhoneNumber' && needsCountry ? ' (a number without +country code needs --default-country)' : '';
        rowProblems.push(`${field || 'row'} ${issue.message}${hint}`);
      }
    }
    if (rowProblems.length) problems.push({ line, problem: rowProblems.join('; ') });
    else calls.push({ line, element: { ...element, toPhoneNumber: parsed.data!.toPhoneNumber } });
  });
  return { calls, problems };
}

/**
 * All or nothing, every bad line named in one error: the lines that did not parse and the good ones
 * whose number is on the do-not-call list (`listed`), in the file's order.
 */
export function refuseBadLines(
  checked: { calls: CallRow[]; problems: LineProblem[] },
  listed: ReadonlySet<string>,
  resumed?: { created: number; of: number },
) {
  const listedCalls = checked.calls.filter((c) => listed.has(c.element.toPhoneNumber as string));
  const onList = listedCalls.map((c) => ({
    line: c.line,
    problem: `${String(c.element.toPhoneNumber)} is on the team's do-not-call list`,
  }));
  const listedNumbers = new Set(listedCalls.map((c) => c.element.toPhoneNumber)).size;
  const headline = [
    ...(checked.problems.length ? [`${checked.problems.length} bad line(s)`] : []),
    ...(onList.length ? [`${listedNumbers} number(s) on the do-not-call list`] : []),
  ].join(' and ');
  const nothing = resumed
    ? `nothing more imported (an earlier run created ${resumed.created} of its ${resumed.of} batches; ` +
      'mend what is named without editing the file, which would be another import, its calls created again)'
    : 'nothing imported';
  refuseProblems(
    [...checked.problems, ...onList].sort((a, b) => a.line - b.line).map(describeProblem),
    `${nothing}: ${headline}`,
  );
}

export interface ImportInput {
  team: string;
  template: string;
  file: string;
  apiUrl: string;
  key: string | undefined;
  defaultCountry?: string;
  batchSize?: string;
  /** Create the calls of a file imported more than the API's idempotency window ago again (`--again`). */
  again?: boolean;
  /** Draw a progress bar on stderr (a terminal only). */
  progress: boolean;
}

export async function importCalls(input: ImportInput) {
  const started = performance.now();
  if (!input.key) throw new CommandError('an API key with calls:write is needed: --key KEY or OCO_API_KEY');
  const api = apiFor({ apiUrl: input.apiUrl, key: input.key }, 5 * 60_000);
  const team = await requireTeam(input.team);
  if (!Types.ObjectId.isValid(input.template)) throw new CommandError('--template must be a call template id');
  const template = await CallTemplate.findOne({ _id: input.template, teamId: team._id }).lean();
  if (!template) throw new CommandError(`the team has no call template ${input.template}`);
  const requestedChunkSize = input.batchSize ? Number(input.batchSize) : DEFAULT_CHUNK;
  if (!Number.isInteger(requestedChunkSize) || requestedChunkSize < 1 || requestedChunkSize > MAX_BATCH)
    throw new CommandError(`--batch-size must be an integer from 1 to ${MAX_BATCH}`);
  const { path: file, content } = await readOperatorFile(input.file);

  const teamId = team._id.toHexString();
  const checked = checkCallCsv(content, {
    teamId,
    // As stored (lower case): the chunks' bodies, and so their keys' requests, the same however it was typed.
    template: {
      id: template._id.toHexString(),
      variables: template.variables,
      requiredVariables: template.requiredVariables,
    },
    defaultCountry: countryOf(input.defaultCountry),
  });
  const { calls } = checked;
  const fileId = await importFileId(team._id, content, template._id.toHexString());
  // An earlier import of the same file set the chunks: the same rows under the same keys, whatever
  // --batch-size says now (another size would make other chunks, under keys never seen: every call
  // created again). And its name: a chunk sent again must be the same request as under its key before,
  // whatever the file is called now (`--file /dev/stdin`, a renamed copy).
  const earlier = await earlierImport(team._id, fileId);
  const chunkSize = earlier?.chunkSize ?? requestedChunkSize;
  const fileName = earlier?.fileName ?? path.basename(file);
  const chunks: Array<{ key: string; rows: CallRow[] }> = [];
  for (let at = 0; at < calls.length; at += chunkSize) {
    const rows = calls.slice(at, at + chunkSize);
    // Keyed by the file and the chunk's lines: the same rows, the same key.
    chunks.push({ key: `${fileId}-lines-${rows[0]!.line}-${rows.at(-1)!.line}`, rows });
  }
  // Chunks an earlier run created are not checked or sent again: their calls exist (whatever the
  // do-not-call list says of them now, each dial reads it again), and the API's answer to their key
  // is stored.
  const { created, keyedBatches } = await createdChunks(
    team._id,
    chunks.map((c) => c.key),
  );
  // Batches of the file that no key names within the window: created longer ago than that, and their
  // keys forgotten, so their chunks sent now would create every call of them again. A run to "make
  // sure it finished" a day later must not call everyone twice: only on purpose. (A chunk whose request
  // died midway still has its key: sent again, the API takes its batch over.)
  const forgotten = [...(earlier?.batchIds ?? [])].filter((batchId) => !keyedBatches.has(batchId)).length;
  if (forgotten > 0 && !input.again) {
    throw new CommandError(
      `this file was imported for this template before: ${forgotten} of its ${earlier!.batchIds.size} batches ` +
        `were created more than ${IDEMPOTENCY_WINDOW_MS / 3_600_000} hours ago (or by an earlier version of ` +
        'this command), and the API no longer knows their keys: sent again, their calls would be created again. ' +
        'Run with --again to import the file anew',
    );
  }
  const resumed = created.size > 0;
  const toSend = chunks.filter((c) => !created.has(c.key)).flatMap((c) => c.rows);
  // The API would refuse the chunk holding such a number: the lines that parsed are looked up too, so
  // that one error names the bad lines and the listed numbers together, before anything is created.
  const numbers = toSend.map((c) => c.element.toPhoneNumber as string);
  const listed = new Set<string>();
  for (let at = 0; at < numbers.length; at += MAX_BATCH) {
    for (const number of await listedAmong(teamId, numbers.slice(at, at + MAX_BATCH))) listed.add(number);
  }
  // The checks the API makes of each chunk, made of the whole file first: a file it would refuse
  // midway creates nothing.
  const unlisted = toSend.filter((c) => !listed.has(c.element.toPhoneNumber as string));
  for (let at = 0; at < unlisted.length; at += MAX_BATCH) {
    for (const problem of await apiProblems(unlisted.slice(at, at + MAX_BATCH), team, fileId, fileName))
      checked.problems.push(problem);
  }
  // A first run refuses a listed number: nothing is created yet, and the file may be mended. Once chunks
  // exist the file must stay as it is (another content is another import: its calls created again), so
  // a number listed since (the callee asked not to be called, a chunk refused for it) is left out of
  // the chunks still to send, and named in the summary.
  refuseBadLines(
    checked,
    resumed ? new Set() : listed,
    resumed ? { created: created.size, of: chunks.length } : undefined,
  );
  const leftOut = resumed ? toSend.filter((c) => listed.has(c.element.toPhoneNumber as string)) : [];
  const leftOutLines = new Set(leftOut.map((c) => c.line));

  const bar = input.progress
    ? new SingleBar({
        format: 'importing |{bar}| {value}/{total} calls | batch {batch}/{batches}',
        stream: process.stderr,
        hideCursor: true,
      })
    : null;
  bar?.start(calls.length, 0, { batch: 0, batches: chunks.length });
  const batchIds: string[] = [];
  let replayed = 0;
  let apiMs = 0;
  try {
    for (const [index, { key, rows }] of chunks.entries()) {
      const progress = { batch: index + 1, batches: chunks.length };
      const createdBatch = created.get(key);
      if (createdBatch) {
        batchIds.push(createdBatch);
        replayed += 1;
        bar?.increment(rows.length, progress);
        continue;
      }
      const chunk = rows.filter((c) => !leftOutLines.has(c.line));
      if (chunk.length > 0) {
        const sent = performance.now();
        const answer = await postChunk(api, key, chunk, index, {
          // Each one checked against the create schema by checkCallCsv.
          phoneCalls: chunk.map((c) => c.element as ApiSchemas['PhoneCallCreateRequest']),
          fileId,
          fileName,
        });
        apiMs += performance.now() - sent;
        batchIds.push(answer.batchId);
        if (answer.replayed) replayed += 1;
      }
      bar?.increment(rows.length, progress);
    }
  } finally {
    bar?.stop();
  }
  // Replayed chunks answer with their calls as created, some perhaps deleted or cancelled since: this
  // import's calls as they stand now, which a run again does not bring back.
  const callsOfFileNow = await PhoneCall.countDocuments({
    teamId: team._id,
    dispatchBatchId: { $in: batchIds.map((id) => new Types.ObjectId(id)) },
  });
  return {
    fileId,
    fileName,
    calls: calls.length,
    callsOfFileNow,
    batchSize: chunkSize,
    ...(earlier !== null && earlier.chunkSize !== requestedChunkSize ? { batchSizeOfEarlierImport: true } : {}),
    batches: batchIds.length,
    alreadyImportedBatches: replayed,
    batchIds,
    ...(leftOut.length
      ? {
          leftOut: leftOut.map((c) => ({
            line: c.line,
            toPhoneNumber: c.element.toPhoneNumber as string,
            reason: "on the team's do-not-call list",
          })),
        }
      : {}),
    // Where the time went: the whole command, and the part spent waiting for the API's answers.
    seconds: round((performance.now() - started) / 1000),
    apiSeconds: round(apiMs / 1000),
  };
}

/** One chunk through POST /v1/phoneCalls/batch; a retry carries the same key, so it creates nothing twice. */
async function postChunk(
  api: ApiCall,
  idempotencyKey: string,
  chunk: CallRow[],
  index: number,
  body: ApiSchemas['PhoneCallBatchRequest'],
): Promise<{ batchId: string; replayed: boolean }> {
  for (let attempt = 1; ; attempt += 1) {
    let answer;
    try {
      answer = await api.client.POST('/v1/phoneCalls/batch', {
        body,
        params: { header: { 'Idempotency-Key': idempotencyKey } },
      });
    } catch (err) {
      if (attempt >= CHUNK_TRIES) throw unreachable(api, err);
      await wait(attempt * 1_000);
      continue;
    }
    const { data, error, response } = answer;
    if (data) return { batchId: data.batchId, replayed: response.headers.get('idempotent-replayed') === 'true' };
    if ((response.status === 429 || response.status >= 500) && attempt < CHUNK_TRIES) {
      await wait(Number(response.headers.get('retry-after') ?? attempt) * 1_000);
      continue;
    }
    // The API names an element by its place in the chunk: said by its line of the file instead.
    const named = errorMessages(error).map((message) =>
      message.replace(/^phoneCalls\.(\d+)\./, (whole, at: string) => {
        const row = chunk[Number(at)];
        return row ? `line ${row.line}: ` : whole;
      }),
    );
    const before = index === 0 ? 'nothing was created' : `the ${index} batch(es) before it were created`;
    const again =
      response.status === 429 || response.status >= 500
        ? 'run the same import again to carry on (what was created is not created twice)'
        : 'the same import run again creates those once, not twice';
    throw refusal(
      response.status,
      `the API did not take batch ${index + 1} (${response.status}): ${named.join('; ') || 'no details'}; ${before}; ${again}`,
    );
  }
}

/**
 * What the API's own checks would refuse of these rows (the team's template, numbers and credentials,
 * the providers' speech limits, calling hours that never open): reads only, as the API makes them.
 */
async function apiProblems(rows: CallRow[], team: TeamDoc, fileId: string, fileName: string): Promise<LineProblem[]> {
  const { problems } = await prepareCalls(
    rows.map((row, at) => ({ input: phoneCallCreateSchema.parse(row.element), prefix: String(at) })),
    { teamId: team._id.toHexString(), team, origin: 'file', fileId, fileName, dispatchBatchId: new Types.ObjectId() },
  );
  // One entry per line, its problems together (the headline counts lines).
  const byLine = new Map<number, string[]>();
  for (const problem of problems) {
    const element = /^(\d+)\.(.*)$/s.exec(problem);
    if (!element) throw new CommandError(problem);
    const line = rows[Number(element[1])]!.line;
    byLine.set(line, [...(byLine.get(line) ?? []), element[2]!]);
  }
  return [...byLine].map(([line, found]) => ({ line, problem: found.join('; ') }));
}

/**
 * The import's `fileId`: a digest of the template and the file's content, so that the same list
 * imported for another template is an import of its own (its chunks' keys begin with the fileId; a
 * second template's chunks under the first's keys were refused, as another request under a used key).
 * Imports begun until 2026-11-30 digested the content alone: one of those for this template, its calls
 * still stored or deleted from its batch, carries on under its own id, so that running it again creates
 * nothing twice.
 */
async function importFileId(teamId: Types.ObjectId, content: string, templateId: string): Promise<string> {
  const digest = (text: string) => `csv-${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  const contentOnly = digest(content);
  const earlier =
    (await PhoneCall.exists({ teamId, fileId: contentOnly, callTemplateId: templateId })) ??
    (await BatchCallDeletion.exists({
      'call.fileId': contentOnly,
      'call.teamId': teamId.toHexString(),
      'call.callTemplateId': templateId,
    }));
  return earlier ? contentOnly : digest(`${templateId}\n${content}`);
}

/**
 * An earlier import of the file: its chunk size (the most calls one of its batches holds, those deleted
 * since counted by their deletion notes, kept a day and an hour, past the API's 24-hour keys), the
 * file name its calls carry, and the batches that hold them. Null when the file has no calls.
 */
async function earlierImport(
  teamId: Types.ObjectId,
  fileId: string,
): Promise<{ chunkSize: number; fileName: string | undefined; batchIds: Set<string> } | null> {
  const [live, deleted] = await Promise.all([
    PhoneCall.find({ teamId, fileId }, { dispatchBatchId: 1, fileName: 1 }).lean(),
    BatchCallDeletion.find(
      { 'call.fileId': fileId, 'call.teamId': teamId.toHexString() },
      { dispatchBatchId: 1, call: 1 },
    ).lean(),
  ]);
  const callsByBatch = new Map<string, Set<string>>();
  for (const { _id, dispatchBatchId } of [...live, ...deleted]) {
    if (!dispatchBatchId) continue;
    const batch = String(dispatchBatchId);
    if (!callsByBatch.has(batch)) callsByBatch.set(batch, new Set());
    callsByBatch.get(batch)!.add(String(_id));
  }
  let largest = 0;
  for (const calls of callsByBatch.values()) largest = Math.max(largest, calls.size);
  if (!largest) return null;
  const named = live.find((c) => c.fileName)?.fileName ?? deleted.map(deletedFileName).find(Boolean);
  return { chunkSize: largest, fileName: named ?? undefined, batchIds: new Set(callsByBatch.keys()) };
}

const deletedFileName = ({ call }: { call?: unknown }): string | undefined => {
  const name = (call as { fileName?: unknown } | undefined)?.fileName;
  return typeof name === 'string' ? name : undefined;
};

/**
 * The chunks whose keys the API has answered within its idempotency window, with the batch each
 * answer names: created, and answered the same way should they be sent again. And every batch a key
 * of the window names, answered or still pending (a request that died midway).
 */
async function createdChunks(
  teamId: Types.ObjectId,
  keys: string[],
): Promise<{ created: Map<string, string>; keyedBatches: Set<string> }> {
  const created = new Map<string, string>();
  const keyedBatches = new Set<string>();
  const since = new Date(Date.now() - IDEMPOTENCY_WINDOW_MS);
  for (let at = 0; at < keys.length; at += MAX_BATCH) {
    const records = await IdempotencyRecord.find(
      { teamId, scope: BATCH_CREATE_SCOPE, key: { $in: keys.slice(at, at + MAX_BATCH) }, createdAt: { $gte: since } },
      // Not the answer's calls: up to 10,000 of them per chunk.
      { key: 1, state: 1, dispatchBatchId: 1, 'responseBody.batchId': 1 },
    ).lean<
      Array<{ key: string; state: string; dispatchBatchId?: Types.ObjectId; responseBody?: { batchId?: unknown } }>
    >();
    for (const { key, state, dispatchBatchId, responseBody } of records) {
      const batchId = responseBody?.batchId;
      if (dispatchBatchId) keyedBatches.add(dispatchBatchId.toHexString());
      if (state === 'done' && typeof batchId === 'string') {
        created.set(key, batchId);
        keyedBatches.add(batchId);
      }
    }
  }
  return { created, keyedBatches };
}

const round = (seconds: number) => Math.round(seconds * 100) / 100;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

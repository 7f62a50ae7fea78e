// What the operator's CSV imports share: finding and reading the file, reading it as rows, naming
// columns loosely, the default country for national numbers, and reporting every bad line at once.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js';
import { CommandError, withDetails } from './command-error';

/** Bad lines shown in an error; the count says how many more there are. */
const SHOWN_PROBLEMS = 20;

/**
 * A `--file` path as the operator meant it: relative to the folder the command was run from. `npm run`
 * runs the command in the package's folder and says where it was started in INIT_CWD.
 */
export function operatorPath(file: string): string {
  return path.resolve(process.env.INIT_CWD ?? process.cwd(), file);
}

/** The file `--file` names (operatorPath), as UTF-8 text; unreadable: refused, naming the path tried. */
export async function readOperatorFile(file: string): Promise<{ path: string; content: string }> {
  const resolved = operatorPath(file);
  try {
    return { path: resolved, content: await readFile(resolved, 'utf8') };
  } catch (err) {
    // Node's message ends with the path again (", open '/the/path'").
    const reason = (err instanceof Error ? err.message : String(err)).replace(/, \w+ '.*'$/s, '');
    throw new CommandError(`cannot read ${resolved}: ${reason}`);
  }
}

/** A column name as matched: letter case, spaces, `_` and `-` ignored. */
export const columnKey = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

export function countryOf(value: string | undefined): CountryCode | undefined {
  if (value === undefined) return undefined;
  const upper = value.toUpperCase();
  if (!isSupportedCountry(upper)) throw new CommandError('--default-country must be an ISO 3166 code such as US or GB');
  return upper;
}

/** A row of the file (RFC 4180: quoted fields, embedded commas and newlines) and the line it starts on. */
export interface CsvRow {
  cells: string[];
  line: number;
}

/**
 * The file's rows, a byte-order mark tolerated, blank lines and rows of empty cells (`,,,`, which
 * spreadsheets write below the data) skipped. Each names the line it starts on
 * (for error messages): blank lines and quoted cells spanning lines make a row's index no guide to it.
 * The line breaks are counted in the raw text csv-parse gives each record, since its `info.lines` is
 * the line a record ends on and counts a CRLF inside quotes as two.
 */
export function csvRows(content: string): CsvRow[] {
  let records: { record: string[]; raw: string }[];
  try {
    const options = { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true, raw: true };
    // With `raw`, csv-parse gives each record as { record, raw }, which its types do not say.
    records = parse(content, options) as unknown as typeof records;
  } catch (err) {
    throw new CommandError(`the file is not valid CSV: ${err instanceof Error ? err.message : String(err)}`);
  }
  let line = 1;
  const rows = records.map(({ record, raw }) => {
    // The raw text starts with the blank lines skipped before the record.
    const start = line + lineBreaks(/^(?:[^\S\r\n]*(?:\r\n|\r|\n))*/.exec(raw)![0]);
    line += lineBreaks(raw);
    return { cells: record, line: start };
  });
  return rows.filter(({ cells }) => cells.some((cell) => cell !== ''));
}

const lineBreaks = (text: string) => text.match(/\r\n|\r|\n/g)?.length ?? 0;

/**
 * All or nothing: the import fails naming its bad lines, the first 20 and how many more in its message
 * (a terminal's worth), every one as `problems` in its JSON form.
 */
export function refuseProblems(problems: string[], headline: string): void {
  if (problems.length === 0) return;
  const more =
    problems.length > SHOWN_PROBLEMS
      ? `\n... and ${problems.length - SHOWN_PROBLEMS} more (--json lists every one as "problems")`
      : '';
  throw withDetails(new CommandError(`${headline}:\n${problems.slice(0, SHOWN_PROBLEMS).join('\n')}${more}`), {
    problems,
  });
}

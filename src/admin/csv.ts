// What the operator's CSV imports share: reading the file as rows, naming columns loosely, the
// default country for national numbers, and reporting every bad line at once.
import { parse } from 'csv-parse/sync';
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js';
import { CommandError } from './commands';

/** Bad lines shown in an error; the count says how many more there are. */
const SHOWN_PROBLEMS = 20;

/** A column name as matched: letter case, spaces, `_` and `-` ignored. */
export const columnKey = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

export function countryOf(value: string | undefined): CountryCode | undefined {
  if (value === undefined) return undefined;
  const upper = value.toUpperCase();
  if (!isSupportedCountry(upper)) throw new CommandError('--default-country must be an ISO 3166 code such as US or GB');
  return upper;
}

/** RFC 4180 rows (quoted fields, embedded commas and newlines, a byte-order mark tolerated). */
export function csvRows(content: string): string[][] {
  try {
    return parse(content, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true });
  } catch (err) {
    throw new CommandError(`the file is not valid CSV: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** All or nothing: the import fails naming its bad lines (the first 20, and how many more). */
export function refuseProblems(problems: string[], headline: string): void {
  if (problems.length === 0) return;
  const more = problems.length > SHOWN_PROBLEMS ? `\n... and ${problems.length - SHOWN_PROBLEMS} more` : '';
  throw new CommandError(`${headline}:\n${problems.slice(0, SHOWN_PROBLEMS).join('\n')}${more}`);
}

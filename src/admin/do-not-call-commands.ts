// `dnc import|add|remove|list`: a team's do-not-call list for operators, over the same store as the
// API (entries listed here have source `cli`).
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { decodeCursor, encodeCursor } from '../api/pagination';
import { createDoNotCallStore, type NewDncEntry } from '../data/do-not-call-store';
import { toDoNotCallEntryView } from '../data/do-not-call-view';
import { MAX_DNC_ADD } from '../schemas/do-not-call';
import { CommandError } from './command-error';
import { requireE164, requireTeam } from './commands';
import { columnKey, countryOf, csvRows, readOperatorFile, refuseProblems } from './csv';

export const DNC_VERBS = ['import', 'add', 'remove', 'list'] as const;
export type DncVerb = (typeof DNC_VERBS)[number];

export function isDncVerb(value: string | undefined): value is DncVerb {
  return (DNC_VERBS as readonly string[]).includes(value ?? '');
}

/** Column names read as the number and the reason (letter case, spaces and `_` ignored). */
const NUMBER_COLUMNS = ['phonenumber', 'phone', 'number', 'tophonenumber', 'e164', 'msisdn'];
const REASON_COLUMNS = ['reason', 'note', 'notes', 'comment'];

/**
 * Reads the numbers of a CSV file: with a header row, the column named phoneNumber (or phone,
 * number, ...) and an optional reason column; without one (the first cell is a phone number), the
 * first column and an optional second as the reason. All or nothing: every bad line is reported.
 */
export function readDncCsv(content: string, options: { defaultCountry?: CountryCode; reason?: string }): NewDncEntry[] {
  const rows = csvRows(content);
  if (rows.length === 0) throw new CommandError('the file has no rows');
  const parseNumber = (cell: string | undefined) => {
    const parsed = cell ? parsePhoneNumberFromString(cell, options.defaultCountry) : undefined;
    return parsed?.isValid() ? parsed.number : undefined;
  };
  const header = parseNumber(rows[0]!.cells[0]) ? null : rows[0]!.cells.map(columnKey);
  const numberAt = header ? header.findIndex((name) => NUMBER_COLUMNS.includes(name)) : 0;
  const reasonAt = header ? header.findIndex((name) => REASON_COLUMNS.includes(name)) : 1;
  if (numberAt < 0) {
    throw new CommandError(
      `the header row has no number column (one of ${NUMBER_COLUMNS.join(', ')}); a file without a header ` +
        'starts with a phone number',
    );
  }
  const entries: NewDncEntry[] = [];
  const problems: string[] = [];
  rows.slice(header ? 1 : 0).forEach(({ cells: row, line }) => {
    const phoneNumber = parseNumber(row[numberAt]);
    if (!phoneNumber) {
      problems.push(`line ${line}: "${row[numberAt] ?? ''}" is not a valid phone number`);
      return;
    }
    const reason = (reasonAt >= 0 ? row[reasonAt] : undefined) || options.reason;
    entries.push(reason ? { phoneNumber, reason } : { phoneNumber });
  });
  refuseProblems(
    problems,
    `nothing imported: ${problems.length} line(s) without a valid number` +
      `${options.defaultCountry ? '' : ' (numbers without +country code need --default-country)'}`,
  );
  if (entries.length === 0) throw new CommandError('the file has no numbers');
  return entries;
}

export async function runDncCommand(
  verb: DncVerb,
  input: {
    team: string;
    file?: string;
    number?: string;
    reason?: string;
    defaultCountry?: string;
    limit?: string;
    cursor?: string;
  },
) {
  const team = await requireTeam(input.team);
  const teamId = team._id.toHexString();
  const list = createDoNotCallStore();
  switch (verb) {
    case 'import': {
      if (!input.file) throw new CommandError('--file is required');
      const { content } = await readOperatorFile(input.file);
      const entries = readDncCsv(content, { defaultCountry: countryOf(input.defaultCountry), reason: input.reason });
      let added = 0;
      for (let start = 0; start < entries.length; start += MAX_DNC_ADD) {
        added += (await list.add(teamId, entries.slice(start, start + MAX_DNC_ADD), { source: 'cli' })).added;
      }
      const distinct = new Set(entries.map((e) => e.phoneNumber)).size;
      return { teamId, numbers: distinct, added, alreadyListed: distinct - added };
    }
    case 'add': {
      const phoneNumber = requireE164(input.number, '--number');
      const { entries, added } = await list.add(teamId, [{ phoneNumber, reason: input.reason }], { source: 'cli' });
      return { added: added === 1, entry: toDoNotCallEntryView(entries[0]!) };
    }
    case 'remove': {
      const phoneNumber = requireE164(input.number, '--number');
      const removed = await list.remove(teamId, phoneNumber);
      if (!removed) throw new CommandError(`${phoneNumber} is not on the team's do-not-call list`);
      return { removed: true, entry: toDoNotCallEntryView(removed) };
    }
    case 'list': {
      const limit = Number(input.limit ?? 100);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new CommandError('--limit must be an integer from 1 to 1000');
      const page = await list.page(teamId, { limit, after: input.cursor ? cursorPosition(input.cursor) : undefined });
      const last = page.entries.at(-1);
      return {
        teamId,
        entries: page.entries.map(toDoNotCallEntryView),
        more: page.hasMore,
        // As GET /v1/doNotCall pages: `--cursor` with it lists the next entries.
        nextCursor: page.hasMore && last ? encodeCursor({ at: last.createdAt, id: last._id.toHexString() }) : null,
      };
    }
  }
}

/** Where `--cursor` (a `nextCursor` of `dnc list` or of GET /v1/doNotCall) starts. */
function cursorPosition(cursor: string): { at: Date; id: string } {
  try {
    return decodeCursor(cursor);
  } catch {
    throw new CommandError('--cursor must be a nextCursor that dnc list (or GET /v1/doNotCall) gave');
  }
}

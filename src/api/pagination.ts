// Opaque keyset cursors: the sort keys of the last item of a page, and its list position. Pages stay
// consistent while new records are written, because a page never depends on an offset.
//
// A cursor is `<milliseconds in base 36>.<24-hex id>`, followed for phone calls by
// `.<list position in base 36>` (src/data/call-list-positions.ts), which lets the next page start its
// walk where this one ended. Every string of that form is a position some page could start after, so
// the OpenAPI pattern (CURSOR_PATTERN) says exactly what is accepted. Cursors of the earlier forms
// (without a position, and base64url JSON) are still read, so that a client paging through an upgrade
// is not cut off.
import { OBJECT_ID_HEX, isObjectIdHex } from '../contracts/ids';
import { badRequest } from './errors';

export interface CursorPosition {
  at: Date;
  id: string;
  /** The list position of the item, when the cursor carries it. */
  seq?: number;
}

/** At most 10 base-36 digits keep a time inside what a Date can hold, and a position inside a safe integer. */
export const CURSOR_PATTERN = `^[0-9a-z]{1,10}\\.${OBJECT_ID_HEX}(\\.-?[0-9a-z]{1,10})?$`;
const CURSOR = new RegExp(CURSOR_PATTERN);

export function encodeCursor(position: CursorPosition): string {
  const base = `${position.at.getTime().toString(36)}.${position.id}`;
  return position.seq === undefined ? base : `${base}.${position.seq.toString(36)}`;
}

export function decodeCursor(cursor: string): CursorPosition {
  if (CURSOR.test(cursor)) {
    const [time, id, seq] = cursor.split('.') as [string, string, string | undefined];
    return { at: new Date(parseInt(time, 36)), id, ...(seq !== undefined && { seq: parseInt(seq, 36) }) };
  }
  const legacy = decodeLegacyCursor(cursor);
  if (legacy) return legacy;
  throw badRequest('cursor is not a cursor this API returned');
}

function decodeLegacyCursor(cursor: string): CursorPosition | null {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    if (typeof parsed.t === 'string' && typeof parsed.i === 'string' && isObjectIdHex(parsed.i)) {
      const at = new Date(parsed.t);
      if (!Number.isNaN(at.getTime())) return { at, id: parsed.i };
    }
  } catch {
    // not a legacy cursor either
  }
  return null;
}

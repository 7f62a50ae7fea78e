// Opaque keyset cursors: the sort keys of the last item of a page. Pages stay consistent while new
// records are written, because a page never depends on an offset.
//
// A cursor is `<milliseconds in base 36>.<24-hex id>`. Every string of that form is a position some
// page could start after, so the OpenAPI pattern (CURSOR_PATTERN) says exactly what is accepted.
// Cursors of the earlier form (base64url JSON) are still read, so that a client paging through an
// upgrade is not cut off.
import { OBJECT_ID_HEX, isObjectIdHex } from '../contracts/ids';
import { badRequest } from './errors';

export interface CursorPosition {
  at: Date;
  id: string;
}

/** At most 10 base-36 digits keep the time inside what a Date can hold. */
export const CURSOR_PATTERN = `^[0-9a-z]{1,10}\\.${OBJECT_ID_HEX}$`;
const CURSOR = new RegExp(CURSOR_PATTERN);

export function encodeCursor(position: CursorPosition): string {
  return `${position.at.getTime().toString(36)}.${position.id}`;
}

export function decodeCursor(cursor: string): CursorPosition {
  if (CURSOR.test(cursor)) {
    const [time, id] = cursor.split('.') as [string, string];
    return { at: new Date(parseInt(time, 36)), id };
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

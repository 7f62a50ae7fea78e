// Opaque keyset cursors: the sort keys of the last item of a page. Pages stay consistent while new
// records are written, because a page never depends on an offset.
import { badRequest } from './errors';

export interface CursorPosition {
  at: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify({ t: position.at.toISOString(), i: position.id })).toString('base64url');
}

export function decodeCursor(cursor: string): CursorPosition {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    if (typeof parsed.t === 'string' && typeof parsed.i === 'string' && /^[0-9a-f]{24}$/.test(parsed.i)) {
      const at = new Date(parsed.t);
      if (!Number.isNaN(at.getTime())) return { at, id: parsed.i };
    }
  } catch {
    // fall through to the 400 below
  }
  throw badRequest('cursor is not a cursor this API returned');
}

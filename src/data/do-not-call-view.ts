// The API's (and the CLI's) form of a do-not-call entry, typed by its response schema.
import type { z } from 'zod';
import type { doNotCallEntryViewSchema } from '../schemas/responses';
import type { DncSource, DoNotCallEntryDoc } from './models/do-not-call-entry';

export type DoNotCallEntryView = z.output<typeof doNotCallEntryViewSchema>;

export function toDoNotCallEntryView(doc: DoNotCallEntryDoc): DoNotCallEntryView {
  return {
    _id: doc._id.toHexString(),
    teamId: doc.teamId.toHexString(),
    phoneNumber: doc.phoneNumber,
    reason: doc.reason ?? '',
    source: doc.source as DncSource,
    keyId: doc.keyId ? doc.keyId.toHexString() : null,
    callId: doc.callId ? doc.callId.toHexString() : null,
    createdAt: doc.createdAt.toISOString(),
  };
}

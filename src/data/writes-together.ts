// Single-document writes of concurrent requests, sent to their collection as one unordered bulk
// write: under load, one round trip (one command for the store to parse, plan and answer) carries
// every write that arrived while the one before was under way, where each was a command of its own.
// Unordered, so one write's failure is its own, as if it had gone alone; each write stays a
// single-document write, filtered by `_id` (FerretDB pushes that equality down, not an `$in`).
import { mongo, type HydratedDocument, type Model } from 'mongoose';
import { ItemFailure, sendTogether } from '../concurrency/send-together';

/** Writes per bulk command at most (a create's documents are a few KiB). */
const MAX_WRITES_PER_SEND = 256;

/** The error of one write of an unordered bulk write, as its own command would have failed. */
function ownError(writeError: mongo.WriteError): Error {
  return new mongo.MongoServerError({
    message: writeError.errmsg ?? `write failed with code ${writeError.code}`,
    errmsg: writeError.errmsg,
    code: writeError.code,
    errInfo: writeError.errInfo,
  });
}

/**
 * Returns `write(operation)`: resolves once the operation is applied, rejects with its own error
 * (a duplicate key's code 11000 included) or with the bulk write's when the command failed as a whole.
 */
export function writesTogether(
  collection: () => mongo.Collection<any>,
): (operation: mongo.AnyBulkWriteOperation<any>) => Promise<void> {
  const submit = sendTogether<mongo.AnyBulkWriteOperation<any>>(
    async (_collection, operations) => {
      try {
        await collection().bulkWrite(operations, { ordered: false });
        return;
      } catch (err) {
        if (!(err instanceof mongo.MongoBulkWriteError) || err.writeConcernError) throw err;
        const failed = new Map<number, mongo.WriteError>();
        for (const writeError of [err.writeErrors].flat()) failed.set(writeError.index, writeError);
        if (!failed.size) throw err;
        return operations.map((_, index) =>
          failed.has(index) ? new ItemFailure(ownError(failed.get(index)!)) : undefined,
        );
      }
    },
    { maxPerSend: MAX_WRITES_PER_SEND },
  );
  return (operation) => submit('', operation);
}

/**
 * A new document as `save()` would insert it: cast, defaults applied, the version key at 0, and
 * validated (throws as `save()` would). Insert its `toBSON()`. Timestamps are the caller's to give.
 */
export async function newDocument<D>(model: Model<D>, fields: Record<string, unknown>): Promise<HydratedDocument<D>> {
  const doc = new model(fields) as HydratedDocument<D>;
  const versionKey = model.schema.get('versionKey');
  if (typeof versionKey === 'string' && doc.get(versionKey) == null) doc.set(versionKey, 0);
  await doc.validate();
  return doc;
}

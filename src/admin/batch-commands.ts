// `batch pause|resume|cancel`: the campaign controls of the API, for operators. Reaches Temporal (the
// calls' workflows decide), unlike the other commands, which only touch the database.
import { isObjectIdHex } from '../contracts/ids';
import { controlBatch, type BatchSelector } from '../calls/batch-control';
import { BATCH_ACTIONS, type BatchAction } from '../contracts/batches';
import { createDispatcher } from '../calls/dispatch';
import { createQueuedCallControl } from '../calls/queued-call-control';
import type { Config } from '../config';
import { CommandError } from './command-error';
import { connectTemporal } from './servers';

export function isBatchAction(value: string | undefined): value is BatchAction {
  return (BATCH_ACTIONS as readonly string[]).includes(value ?? '');
}

export async function runBatchCommand(
  input: { action: BatchAction; team: string; batchId?: string; fileId?: string },
  config: Config,
) {
  if (!isObjectIdHex(input.team.toLowerCase())) throw new CommandError('--team must be a 24-character hex id');
  if (Boolean(input.batchId) === Boolean(input.fileId))
    throw new CommandError('give exactly one of --batch-id and --file-id');
  if (input.batchId && !isObjectIdHex(input.batchId.toLowerCase()))
    throw new CommandError('--batch-id must be a 24-character hex id (the batchId of the batch create answer)');
  const selector: BatchSelector = input.batchId ? { batchId: input.batchId.toLowerCase() } : { fileId: input.fileId! };
  const client = await connectTemporal({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
  });
  try {
    const dispatcher = createDispatcher({ client, config: config });
    const control = createQueuedCallControl({ client, dispatcher });
    const result = await controlBatch(
      { control, concurrency: config.BATCH_START_CONCURRENCY },
      input.team.toLowerCase(),
      selector,
      input.action,
    );
    if (!result) throw new CommandError('the team has no call in that batch or file');
    return result;
  } finally {
    await client.connection.close();
  }
}

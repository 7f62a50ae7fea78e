// Campaign controls over HTTP: POST /v1/phoneCalls/batch/{batchId}/{pause|resume|cancel} and
// /v1/phoneCalls/file/{fileId}/{...} (src/calls/batch-control.ts does the work).
import Router from '@koa/router';
import { controlBatch, type BatchSelector } from '../../calls/batch-control';
import { BATCH_ACTIONS, type BatchAction } from '../../contracts/batches';
import type { QueuedCallControl } from '../../calls/queued-call-control';
import { isObjectIdHex } from '../../contracts/ids';
import { authOf, requireScope } from '../auth';
import { notFound } from '../errors';
import { fileIdText } from '../../schemas/phone-calls';
import { assertNoBodyFields, parseOrThrow } from '../validation';
import { z } from 'zod';
import type { ApiContext, RequestState } from '../state';

/** The fileId a batch was created with, held to the same rules as in its body. */
const fileIdParam = z.object({ fileId: fileIdText() });

export function createPhoneCallBatchesRouter(deps: { control: QueuedCallControl; concurrency: number }): Router {
  const router = new Router<RequestState>({ prefix: '/v1/phoneCalls' });

  async function run(ctx: ApiContext, action: BatchAction, selector: BatchSelector) {
    const result = await controlBatch(deps, authOf(ctx).teamId, selector, action);
    if (!result) {
      throw notFound(
        'batchId' in selector ? `batch ${selector.batchId} not found` : `no call with fileId ${selector.fileId} found`,
      );
    }
    ctx.state.log.info(result, `batch ${action}`);
    ctx.body = { data: result };
  }

  for (const action of BATCH_ACTIONS) {
    router.post(`/batch/:batchId/${action}`, requireScope('calls:write'), async (ctx) => {
      assertNoBodyFields(ctx.request.body);
      const batchId = ctx.params.batchId!.toLowerCase();
      // A malformed id in a path is 404, as for every id (decisions.md): no batch has it.
      if (!isObjectIdHex(batchId)) throw notFound(`batch ${ctx.params.batchId} not found`);
      await run(ctx, action, { batchId });
    });
    router.post(`/file/:fileId/${action}`, requireScope('calls:write'), async (ctx) => {
      assertNoBodyFields(ctx.request.body);
      const { fileId } = parseOrThrow(fileIdParam, { fileId: ctx.params.fileId });
      await run(ctx, action, { fileId });
    });
  }
  return router;
}

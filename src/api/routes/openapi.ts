// GET /v1/openapi.json: the OpenAPI document, without an API key (mounted among the public routers,
// ahead of the key middleware). Built on the first request and kept, since it never changes while
// the process runs; a build failure is a 500 here rather than an API that does not start.
import Router from '@koa/router';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi';
import type { RequestState } from '../state';

export const OPENAPI_PATH = '/v1/openapi.json';

export function createOpenApiRouter(deps: { publicBaseUrl: string }): Router {
  const router = new Router<RequestState>();
  let document: OpenApiDocument | undefined;
  router.get(OPENAPI_PATH, (ctx) => {
    document ??= buildOpenApiDocument(deps.publicBaseUrl);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = document;
  });
  return router;
}

// Outside /v1 and without a key: the API reference at /docs, Swagger UI (the `swagger-ui-dist`
// package, served from this process: no CDN at run time) rendering /v1/openapi.json.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Router from '@koa/router';
import type { RequestState } from '../state';

/** The files the page loads, by the name it asks for. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Outbound call orchestrator API reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" />
  </head>
  <body>
    <div id="reference"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/swagger-ui-standalone-preset.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// A file of its own rather than an inline script, so that a strict Content-Security-Policy holds.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  displayRequestDuration: true,
  persistAuthorization: false,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
};

export function createDocsRouter(): Router<RequestState> {
  const router = new Router<RequestState>();
  // The package's folder, found without loading its index (which would load the browser bundles here).
  const dist = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();

  router.get('/docs', (ctx) => {
    ctx.set(SECURITY_HEADERS);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.set(SECURITY_HEADERS);
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = INIT;
  });
  router.get('/docs/:asset', async (ctx, next) => {
    const type = Object.hasOwn(ASSETS, ctx.params.asset) ? ASSETS[ctx.params.asset] : undefined;
    if (!type) return next();
    let body = cache.get(ctx.params.asset);
    if (!body) {
      body = await readFile(path.join(dist, ctx.params.asset));
      cache.set(ctx.params.asset, body);
    }
    ctx.set({ ...SECURITY_HEADERS, 'Cache-Control': 'public, max-age=86400' });
    ctx.type = type;
    ctx.body = body;
  });
  return router;
}

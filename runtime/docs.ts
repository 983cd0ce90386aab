import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import { pageHeaders } from './security-headers.js';

/**
 * Serves the generated OpenAPI document at `{base}/openapi.json` and an API
 * reference page at `{base}/_docs/`, rendered by swagger-ui-dist from this
 * server alone (no fonts or scripts from elsewhere, no external validator).
 */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>API reference</title>
  <link rel="stylesheet" href="swagger-ui.css">
  <link rel="icon" type="image/png" href="favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="swagger-ui-bundle.js"></script>
  <script src="docs.js"></script>
</body>
</html>
`;

const INITIALISER = `window.ui = SwaggerUIBundle({
  url: '../openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
});
`;

// The page loads only what this server sends; swagger-ui sets inline styles, nothing else is inline.
const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export function mountDocs<State>(router: Router<State>, basePath: string, document: object): void {
  const served = JSON.stringify({ ...document, servers: [{ url: basePath || '/' }] });
  const folder = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = new Map(Object.entries(ASSETS).map(([file, type]) => [file, { type, body: readFileSync(path.join(folder, file)) }]));
  assets.set('docs.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(INITIALISER) });

  router.get(`${basePath}/openapi.json`, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = served;
  });
  // The router is not strict about a trailing slash: this answers /_docs too. The page's relative
  // links need the slash, so /_docs is sent there first.
  router.get(`${basePath}/_docs/`, pageHeaders, (ctx) => {
    if (!ctx.path.endsWith('/')) return ctx.redirect(`${basePath}/_docs/`);
    ctx.set('Content-Security-Policy', CSP);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get(`${basePath}/_docs/:file`, (ctx, next) => {
    const asset = assets.get(ctx.params.file ?? '');
    if (!asset) return next();
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = asset.type;
    ctx.body = asset.body;
  });
}

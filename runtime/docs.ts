import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import type { Guard } from './auth/guard.js';
import { callerReach } from './auth/reach.js';
import type { Access, BackendModule } from './contract.js';
import { HttpError } from './errors.js';
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

/** What `?for=me` needs: the backends served and their guards, to ask each who the caller is. */
export interface DocsCallers {
  backends: readonly BackendModule[];
  guards: ReadonlyMap<string, Guard>;
}

export function mountDocs<State>(router: Router<State>, basePath: string, document: object, callers?: DocsCallers): void {
  const served = JSON.stringify({ ...document, servers: [{ url: basePath || '/' }] });
  const forCaller = callers && callerDocuments(document, basePath, callers);
  const folder = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = new Map(Object.entries(ASSETS).map(([file, type]) => [file, { type, body: readFileSync(path.join(folder, file)) }]));
  assets.set('docs.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(INITIALISER) });

  router.get(`${basePath}/openapi.json`, async (ctx) => {
    const wanted = ctx.query.for;
    if (wanted !== undefined) {
      if (wanted !== 'me' || !forCaller) throw new HttpError(400, "Parameter 'for' must be 'me'");
      const apiKey = ctx.headers['x-api-key'];
      ctx.type = 'application/json';
      ctx.body = await forCaller(ctx.headers.authorization, typeof apiKey === 'string' ? apiKey : undefined, ctx.ip);
      return;
    }
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

/** Most documents for distinct callers kept made: one per set of roles per backend, so a few in practice. */
const KEPT_DOCUMENTS = 64;

/**
 * `GET {base}/openapi.json?for=me`: the document with only the operations the caller's credentials may call
 * (docs/contract.md §8), told by each backend's own guard (auth/reach.ts): every public operation, and on each
 * backend that accepts the credentials the operations its roles admit (`*` any). Without credentials, the public
 * operations alone. Each document is made once per distinct set of backends and roles and kept (a few at most), so
 * that a call costs the credential check a route would cost, and no more.
 */
function callerDocuments(document: object, basePath: string, { backends, guards }: DocsCallers) {
  const full = document as { paths?: Record<string, Record<string, unknown>>; tags?: { name: string }[]; info?: Record<string, unknown> };
  /** Who may call each operation of the document, by path and method; an operation not listed here is left out. */
  const access = new Map<string, { backend: string; access: Access | 'session' }>();
  for (const backend of backends) {
    for (const resource of backend.resources) {
      for (const [method, operation] of Object.entries(resource.operations)) {
        access.set(`${method.toLowerCase()} /${backend.name}/v${resource.version}/${resource.name}`, { backend: backend.name, access: operation!.access });
      }
    }
    if (backend.authScheme === 'Bearer') access.set(`post /${backend.name}/`, { backend: backend.name, access: null });
    if (backend.refreshLifetime !== null) {
      access.set(`post /${backend.name}/v1.0/token/refresh`, { backend: backend.name, access: null });
      access.set(`post /${backend.name}/v1.0/logout`, { backend: backend.name, access: 'session' });
    }
  }
  const made = new Map<string, string>();
  return async (authorization: string | undefined, apiKey: string | undefined, address: string): Promise<string> => {
    const reach = await callerReach(backends, guards, authorization, apiKey, address);
    const signature = JSON.stringify(
      [...reach].map(([backend, principal]) => [backend, [...principal.roles].sort(), principal.sessionId !== undefined]).sort(),
    );
    const known = made.get(signature);
    if (known !== undefined) return known;
    const admits = (backend: string, rule: Access | 'session') => {
      if (rule === null) return true;
      const principal = reach.get(backend);
      if (principal === undefined) return false;
      if (rule === 'session') return principal.sessionId !== undefined;
      return rule === '*' || rule.some((role) => principal.roles.includes(role));
    };
    const paths: Record<string, Record<string, unknown>> = {};
    const used = new Set<string>();
    for (const [path, item] of Object.entries(full.paths ?? {})) {
      const kept = Object.entries(item).filter(([method]) => {
        const rule = access.get(`${method} ${path}`);
        if (rule === undefined || !admits(rule.backend, rule.access)) return false;
        used.add(rule.backend);
        return true;
      });
      if (kept.length > 0) paths[path] = Object.fromEntries(kept);
    }
    const text = JSON.stringify({
      ...full,
      info: { ...full.info, description: `${String(full.info?.description ?? '')} Only the operations the credentials of this request may call.`.trim() },
      servers: [{ url: basePath || '/' }],
      tags: (full.tags ?? []).filter((tag) => used.has(tag.name)),
      paths,
    });
    if (made.size >= KEPT_DOCUMENTS) made.delete(made.keys().next().value!);
    made.set(signature, text);
    return text;
  };
}

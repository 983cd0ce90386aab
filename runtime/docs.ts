import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import type { Guard } from './auth/guard.js';
import { admits, callerReach } from './auth/reach.js';
import { credentialsOf } from './auth/transport/transport.js';
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
      const { authorization, apiKey } = credentialsOf(ctx);
      // One caller's document: no shared cache may keep it, nor give it for another's credentials.
      ctx.set('Cache-Control', 'private, no-store');
      ctx.vary('Authorization');
      ctx.vary('X-API-Key');
      ctx.type = 'application/json';
      ctx.body = await forCaller(authorization, apiKey, ctx.ip);
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

/** Most bytes of callers' documents kept made: each is a few KB to a few MB, by how much its callers may call. */
const KEPT_BYTES = 16 * 1024 * 1024;

/**
 * `GET {base}/openapi.json?for=me`: the document with only the operations the caller's credentials may call
 * (docs/internals/contract.md §8), told by each backend's own guard (auth/reach.ts): every public operation, and on each
 * backend that accepts the credentials the operations its roles admit (`*` any). Without credentials, the public
 * operations alone. Each operation is serialised once, when mounted, and a caller's document is put together from
 * those texts; documents are kept by the operations they hold (callers of many role sets share a few), the least
 * recently used going first once they pass KEPT_BYTES, so that a call costs the credential check a route would cost,
 * and no more.
 */
function callerDocuments(document: object, basePath: string, { backends, guards }: DocsCallers) {
  const { paths, info, tags, ...rest } = document as {
    paths?: Record<string, Record<string, unknown>>;
    tags?: { name: string }[];
    info?: Record<string, unknown>;
  };
  /**
   * Who may call each operation of the document, by path and method; an operation not listed here is left out.
   * `batch`: a backend's batch (docs/internals/contract.md §15), shown to a caller who may call one of its resource
   * routes, as a batch runs each operation through that route's own guard.
   */
  const access = new Map<string, { backend: string; access: Access | 'session' | 'batch' }>();
  const resourceRoutes = new Set<string>();
  for (const backend of backends) {
    for (const resource of backend.resources) {
      for (const [method, operation] of Object.entries(resource.operations)) {
        const route = `${method.toLowerCase()} /${backend.name}/v${resource.version}/${resource.name}`;
        access.set(route, { backend: backend.name, access: operation!.access });
        resourceRoutes.add(route);
      }
    }
    if (backend.batch !== undefined) access.set(`post /${backend.name}/batch`, { backend: backend.name, access: 'batch' });
    if (backend.authScheme === 'Bearer') access.set(`post /${backend.name}/`, { backend: backend.name, access: null });
    if (backend.refreshLifetime !== null) {
      access.set(`post /${backend.name}/v1.0/token/refresh`, { backend: backend.name, access: null });
      access.set(`post /${backend.name}/v1.0/logout`, { backend: backend.name, access: 'session' });
    }
  }
  /** Each operation of the document whose rule is known, in the document's order, with its JSON made once. */
  const operations = Object.entries(paths ?? {}).flatMap(([path, item], index) =>
    Object.entries(item).flatMap(([method, operation]) => {
      const rule = access.get(`${method} ${path}`);
      if (rule === undefined) return [];
      const json = `${JSON.stringify(method)}:${JSON.stringify(operation)}`;
      return [{ path, index, key: `${index}${method}`, rule, resource: resourceRoutes.has(`${method} ${path}`), json }];
    }),
  );
  /** The document up to its tags and paths, without its closing brace: the same for every caller. */
  const head = JSON.stringify({
    ...rest,
    info: { ...info, description: `${String(info?.description ?? '')} Only the operations the credentials of this request may call.`.trim() },
    servers: [{ url: basePath || '/' }],
  }).slice(0, -1);
  const made = new Map<string, string>();
  let keptBytes = 0;
  return async (authorization: string | undefined, apiKey: string | undefined, address: string): Promise<string> => {
    const reach = await callerReach(backends, guards, authorization, apiKey, address);
    const reaches = (backend: string, rule: Access | 'session' | 'batch'): boolean => {
      if (rule === 'batch') return batched.has(backend);
      const principal = reach.get(backend);
      if (rule === 'session') return principal?.sessionId !== undefined;
      return admits(rule, principal);
    };
    // The backends of which the caller may call a resource route: their batches are shown (never asked of a batch itself).
    const batched: Set<string> = new Set(
      operations.filter((operation) => operation.resource && reaches(operation.rule.backend, operation.rule.access)).map((operation) => operation.rule.backend),
    );
    const admitted = operations.filter((operation) => reaches(operation.rule.backend, operation.rule.access));
    const key = admitted.map((operation) => operation.key).join(' ');
    const known = made.get(key);
    if (known !== undefined) {
      // Used again: the last to go.
      made.delete(key);
      made.set(key, known);
      return known;
    }
    const used = new Set(admitted.map((operation) => operation.rule.backend));
    const items: string[] = [];
    for (let at = 0; at < admitted.length; ) {
      const { path, index } = admitted[at]!;
      const methods: string[] = [];
      for (; at < admitted.length && admitted[at]!.index === index; at++) methods.push(admitted[at]!.json);
      items.push(`${JSON.stringify(path)}:{${methods.join(',')}}`);
    }
    const text = `${head},"tags":${JSON.stringify((tags ?? []).filter((tag) => used.has(tag.name)))},"paths":{${items.join(',')}}}`;
    for (const [oldest, kept] of made) {
      if (keptBytes + text.length <= KEPT_BYTES) break;
      made.delete(oldest);
      keptBytes -= kept.length;
    }
    if (text.length <= KEPT_BYTES) {
      made.set(key, text);
      keptBytes += text.length;
    }
    return text;
  };
}

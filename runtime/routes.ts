import Router from '@koa/router';
import type Koa from 'koa';
import type { Guard } from './auth/guard.js';
import { tokenShapeA } from './auth/token-a.js';
import type { BodyReader } from './body.js';
import type { BackendModule, HttpMethod, Operation, ResourceModule } from './contract.js';
import type { Database } from './db.js';
import { mountDocs } from './docs.js';
import { HttpError } from './errors.js';
import type { Metrics } from './metrics.js';
import { Scope, type ScopeOptions } from './scope.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** The path a resource is served at (docs/seed.md §4): `{base}/<backend>/v<version>/<name>`. */
export function resourcePath(basePath: string, backend: string, resource: ResourceModule): string {
  return `${basePath}/${backend}/v${resource.version}/${resource.name}`;
}

export interface RoutesOptions {
  backends: readonly BackendModule[];
  /** Each backend's guard, by name. */
  guards: ReadonlyMap<string, Guard>;
  db: Database;
  readBody: BodyReader;
  basePath: string;
  maxParams: number;
  requireTls: boolean;
  /** The generated OpenAPI document; when given, served with an API reference page. */
  openapi?: object | undefined;
  /** Where each route's requests are counted (its series is made here, once). */
  metrics: Metrics;
}

export interface Routes {
  /** The router's middleware: every resource, token shape A on Bearer backends, the docs. */
  routes: Koa.Middleware;
  /** After the router: 405 with Allow for a known path, 404 for anything else. */
  unmatched: Koa.Middleware;
}

/** Every route of a set of backends. Built afresh on each reload; requests keep the set they started with. */
export function buildRoutes(options: RoutesOptions): Routes {
  const router = new Router();
  const allowed = new Map<string, string>();
  // Every resource path is fixed text, known when the routes are built: a request for exactly one of them
  // (the method and the path as registered) goes straight to its handler by one map lookup. @koa/router
  // still holds every route and answers everything else (HEAD, a trailing slash, other letter case, the docs)
  // as it always has; it would otherwise test each route's pattern and compose a chain on every request.
  const exact = new Map<string, Koa.Middleware>();
  for (const backend of options.backends) {
    const guard = options.guards.get(backend.name)!;
    const scope: ScopeOptions = { guard, db: options.db, readBody: options.readBody, maxParams: options.maxParams, requireTls: options.requireTls };
    for (const resource of backend.resources) {
      const path = resourcePath(options.basePath, backend.name, resource);
      const methods = Object.keys(resource.operations) as HttpMethod[];
      // For the access log and the metrics: the route's own names, never the request's text.
      const label = `${resource.name}@${resource.version}`;
      for (const method of methods) {
        const operation = resource.operations[method] as Operation;
        const series = options.metrics.route(backend.name, label, method);
        const handle: Koa.Middleware = async (ctx) => {
          ctx.state.backend = backend.name;
          ctx.state.resource = label;
          ctx.state.series = series;
          const result = await operation.handler(new Scope(ctx as unknown as Koa.Context, scope));
          ctx.status = operation.status;
          // Every answer is JSON, known before the first request: the type is set as it is, not looked up in
          // Koa's MIME table on every response, and the text made here rather than in Koa's respond.
          ctx.set('Content-Type', JSON_TYPE);
          ctx.body = JSON.stringify(result);
        };
        router.register(path, [method], handle as never);
        exact.set(`${method} ${path}`, handle);
      }
      allowed.set(path, allowHeader(methods));
    }
    if (backend.authScheme === 'Bearer') {
      // One route answers with and without the trailing slash: the router is not strict about it.
      const path = `${options.basePath}/${backend.name}`;
      const issue = tokenShapeA(guard, options.readBody, { requireTls: options.requireTls });
      const series = options.metrics.route(backend.name, 'token-shape-a', 'POST');
      router.post(path, ((ctx: Koa.Context, next: Koa.Next) => {
        ctx.state.backend = backend.name;
        ctx.state.resource = 'token-shape-a';
        ctx.state.series = series;
        return issue(ctx, next);
      }) as never);
      allowed.set(`${path}/`, allowHeader(['POST']));
    }
  }
  if (options.openapi) mountDocs(router, options.basePath, options.openapi);
  const dispatch = router.routes() as unknown as Koa.Middleware;
  const routes: Koa.Middleware = (ctx, next) => (exact.get(`${ctx.method} ${ctx.path}`) ?? dispatch)(ctx, next);
  return { routes, unmatched: unmatched(allowed) };
}

function allowHeader(methods: readonly HttpMethod[]): string {
  return [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
}

/**
 * A known path with another method is 405 with Allow (OPTIONS answers 204
 * with the same list); anything else is 404. One map lookup, so that matched
 * requests pay nothing for it.
 */
function unmatched(allowed: ReadonlyMap<string, string>): Koa.Middleware {
  return (ctx) => {
    // The router is not strict about one trailing slash; neither is this.
    const allow = allowed.get(ctx.path) ?? allowed.get(ctx.path.replace(/\/$/, '')) ?? allowed.get(`${ctx.path}/`);
    if (allow === undefined) throw new HttpError(404, 'Not found');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    throw new HttpError(405, `Method ${ctx.method} not allowed`, { Allow: allow });
  };
}

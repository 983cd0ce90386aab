import Router from '@koa/router';
import type Koa from 'koa';
import type { AuditTrail } from './audit/index.js';
import type { Guard } from './auth/guard.js';
import { addressGroup } from './auth/limits/address.js';
import { logoutDoor, refreshDoor } from './auth/sessions/session-doors.js';
import { tokenShapeA } from './auth/tokens/token-a.js';
import type { CredentialRules } from './auth/transport/transport.js';
import { type BatchRoute, batchDoor } from './batch/index.js';
import type { FieldReader } from './body.js';
import { answerNotModified, answerRead, NOT_MODIFIED, readHeaders } from './conditional/reads.js';
import { refuseIfMatch, writtenTag } from './conditional/versions.js';
import type { BackendModule, HttpMethod, Operation, ResourceModule } from './contract.js';
import type { Database } from './db/index.js';
import { mountDocs } from './docs.js';
import { errorResponder, HttpError } from './errors.js';
import type { Events } from './events/index.js';
import { idempotencyKeyOf } from './idempotency/key.js';
import { answeredReplay, answerText } from './idempotency/request.js';
import { answerJson } from './json-text.js';
import { countCall, type RateLimiter } from './limits/index.js';
import type { Lists } from './lists/index.js';
import type { Logger } from './log.js';
import { mcpMounts } from './mcp/mount.js';
import type { McpTool } from './mcp/tools.js';
import type { Metrics } from './metrics.js';
import { type AuditRoute, auditEntry, Scope, type ScopeOptions } from './scope.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** The path a resource is served at (docs/internals/seed.md §4): `{base}/<backend>/v<version>/<name>`. */
export function resourcePath(basePath: string, backend: string, resource: ResourceModule): string {
  return `${basePath}/${backend}/v${resource.version}/${resource.name}`;
}

export interface RoutesOptions {
  backends: readonly BackendModule[];
  /** Each backend's guard, by name. */
  guards: ReadonlyMap<string, Guard>;
  db: Database;
  readFields: FieldReader;
  basePath: string;
  maxParams: number;
  /** What token requests and logins check before the password: the transport rule, no other site's page. */
  credentials: CredentialRules;
  /** The generated OpenAPI document; when given, served with an API reference page. */
  openapi?: object | undefined;
  /** Where each route's requests are counted (its series is made here, once). */
  metrics: Metrics;
  /** Counts the calls of limited routes (docs/internals/contract.md §10). */
  limiter: RateLimiter;
  /** Where handlers emit events, and audited routes write their rows (docs/internals/contract.md §12). */
  events: Events;
  audit: AuditTrail;
  /** Filters, sorts and pages (docs/internals/contract.md §11). */
  lists: Lists;
  /** Validators on reads (docs/internals/contract.md §15); on unless false (ETAGS=off). */
  etags?: boolean | undefined;
  /** Where a tool call's failure is logged as a request's is (docs/internals/contract.md §16), and why MCP is off. */
  logger?: Logger | undefined;
}

export interface Routes {
  /** The router's middleware: every resource, token shape A on Bearer backends, the docs. */
  routes: Koa.Middleware;
  /** After the router: 405 with Allow for a known path, 404 for anything else. */
  unmatched: Koa.Middleware;
  /**
   * Each MCP endpoint's tools, by backend (docs/internals/contract.md §16), once runtime/mcp/ is loaded and its doors
   * made: absent for a backend without one.
   */
  tools: ReadonlyMap<string, Promise<readonly McpTool[]>>;
}

/**
 * Every route of a set of backends. Built afresh on each reload; requests keep the set they started with.
 *
 * Resource and token paths are fixed text, known when the routes are built: a request finds its handler by
 * one map lookup, at the path as registered or, failing that, at its loose spelling (any letter case, one
 * trailing slash or none, HEAD as GET: what @koa/router matched for them before). @koa/router holds only the
 * API reference's pages, whose asset names are a parameter; it compiled a pattern per route at start (70 ms
 * of a 0.9 s start with 1,000 routes), tested them all and composed a chain on every request.
 */
export function buildRoutes(options: RoutesOptions): Routes {
  const router = new Router();
  const allowed = new Map<string, string>();
  const exact = new Map<string, Koa.Middleware>();
  const loose = new Map<string, Koa.Middleware>();
  const mount = (method: HttpMethod, path: string, handle: Koa.Middleware) => {
    exact.set(`${method} ${path}`, handle);
    // Two paths that differ only in letter case: a loose spelling reaches the first, as the router's first match did.
    const key = looseKey(method, path);
    if (!loose.has(key)) loose.set(key, handle);
  };
  const tools = new Map<string, Promise<readonly McpTool[]>>();
  // A tool call's failure answered and logged as the front door answers and logs a request's (errors.ts).
  const respond = options.logger === undefined ? undefined : errorResponder(options.logger);
  for (const backend of options.backends) {
    const guard = options.guards.get(backend.name)!;
    const scope: Omit<ScopeOptions, 'status'> = {
      guard,
      db: options.db,
      readFields: options.readFields,
      maxParams: options.maxParams,
      credentials: options.credentials,
      limiter: options.limiter,
      events: options.events,
      lists: options.lists,
      etags: options.etags !== false,
    };
    // What a batch runs (runtime/batch/): the backend's resource routes, by method and path, as mounted here.
    const batchRoutes = new Map<string, BatchRoute>();
    // What a tool call runs (runtime/mcp/): each resource route's middleware as mounted here, by method and path.
    const toolRoutes = new Map<string, Koa.Middleware>();
    for (const resource of backend.resources) {
      const path = resourcePath(options.basePath, backend.name, resource);
      const methods = Object.keys(resource.operations) as HttpMethod[];
      // For the access log and the metrics: the route's own names, never the request's text.
      const label = `${resource.name}@${resource.version}`;
      for (const method of methods) {
        const operation = resource.operations[method] as Operation;
        const series = options.metrics.route(backend.name, label, method);
        const rule = operation.rateLimit;
        // A limited route counts each caller: a user once authenticated (scope.ts), a client address on a public method.
        const route = `${backend.name} ${label} ${method}`;
        // What its rows keep, as the module says (a module without a rule keeps no value).
        const keeps = new Set(operation.audit?.keeps ?? []);
        const audit: AuditRoute | undefined = operation.audit
          ? { trail: options.audit, backend: backend.name, resource: resource.name, version: resource.version, method, status: operation.status, keeps }
          : undefined;
        const own: ScopeOptions = { ...scope, status: operation.status, json: operation.json, limit: rule && { rule, route }, audit };
        const byAddress = rule !== undefined && operation.access === null;
        // If-Match on a write with no version column compares nothing: a 400, not a write that ignores it.
        const unversioned = method !== 'GET' && operation.version === undefined;
        const keyRequired = operation.idempotency === 'required';
        // A GET's 200 and 304 carry an ETag and say how they may be cached (runtime/conditional/reads.ts).
        const reads = method === 'GET' && options.etags !== false ? readHeaders(operation) : undefined;
        const handle: Koa.Middleware = async (ctx) => {
          ctx.state.backend = backend.name;
          ctx.state.resource = label;
          ctx.state.route = path;
          ctx.state.series = series;
          if (byAddress) await countCall(options.limiter, `${route}|a|${addressGroup(ctx.ip)}`, rule, ctx);
          if (unversioned) refuseIfMatch(ctx as unknown as Koa.Context);
          // A POST's Idempotency-Key, checked before the handler (docs/internals/contract.md §15); its transaction claims it.
          if (method === 'POST') ctx.state.idempotencyKey = idempotencyKeyOf(ctx.req.headers['idempotency-key'], keyRequired);
          let result: object;
          try {
            result = await operation.handler(new Scope(ctx as unknown as Koa.Context, own));
          } catch (error) {
            if (answeredReplay(ctx as unknown as Koa.Context, error)) return;
            // A <Validator>'s tag held the request's If-None-Match: the steps never ran.
            if (error === NOT_MODIFIED && reads !== undefined) return answerNotModified(ctx as unknown as Koa.Context, reads);
            throw error;
          }
          // A token request that began a session (scope.ts, issueToken) answers its refresh token too: a field the
          // module's own JSON text does not write (docs/internals/contract.md §17).
          const json = ctx.state.refreshToken === undefined ? operation.json : undefined;
          if (ctx.state.refreshToken !== undefined) (result as Record<string, unknown>).refresh_token = ctx.state.refreshToken;
          if (reads !== undefined) return answerRead(ctx as unknown as Koa.Context, reads, operation.status, answerJson(json, result));
          ctx.status = operation.status;
          // Every answer is JSON, known before the first request: the type is set as it is, not looked up in
          // Koa's MIME table on every response, and the text made here rather than in Koa's respond.
          ctx.res.setHeader('Content-Type', JSON_TYPE);
          // A conditional change's new version (a versioned DELETE's row is gone: no tag).
          const written = method === 'DELETE' ? undefined : writtenTag(ctx.state);
          if (written !== undefined) ctx.set('ETag', written);
          ctx.body = answerText(ctx as unknown as Koa.Context, result, json);
        };
        const mounted = audit === undefined ? handle : audited(audit, handle);
        mount(method, path, mounted);
        toolRoutes.set(`${method} ${path}`, mounted);
        batchRoutes.set(looseKey(method, path), { label, path, operation, scope: own, byAddress: byAddress ? { route, rule } : undefined });
      }
      allowed.set(loosePath(path), allowHeader(methods));
    }
    if (backend.batch !== undefined) {
      const path = `${options.basePath}/${backend.name}/batch`;
      const series = options.metrics.route(backend.name, 'batch', 'POST');
      const routes = { find: (method: string, at: string) => batchRoutes.get(looseKey(method, at)) };
      const run = batchDoor({ ...options, settings: backend.batch, routes, guard });
      mount('POST', path, (ctx, next) => {
        ctx.state.backend = backend.name;
        ctx.state.resource = 'batch';
        ctx.state.series = series;
        return run(ctx as unknown as Koa.Context, next);
      });
      allowed.set(loosePath(path), allowHeader(['POST']));
    }
    // MCP (docs/internals/contract.md §16): tools made from the OpenAPI document, each call run by toolRoutes' route.
    if (backend.mcp === true && (options.openapi === undefined || respond === undefined)) {
      options.logger?.warn({ backend: backend.name }, 'MCP endpoint not mounted: no OpenAPI document to make its tools from (generated/openapi.json)');
    } else if (backend.mcp === true) {
      const doors = {
        backend,
        guard,
        basePath: options.basePath,
        openapi: options.openapi!,
        routes: toolRoutes,
        credentials: options.credentials,
        respond: respond!,
      };
      const series = options.metrics.route(backend.name, 'mcp', 'POST');
      const { mounts, tools: made } = mcpMounts(doors, options.logger);
      tools.set(backend.name, made);
      for (const { method, path, handle } of mounts) {
        mount(method, path, (ctx, next) => {
          ctx.state.backend = backend.name;
          ctx.state.resource = 'mcp';
          ctx.state.series = series;
          return handle(ctx, next);
        });
        allowed.set(loosePath(path), allowHeader([method]));
      }
    }
    if (backend.authScheme === 'Bearer') {
      const path = `${options.basePath}/${backend.name}`;
      const issue = tokenShapeA(guard, options.readFields, options.credentials);
      const series = options.metrics.route(backend.name, 'token-shape-a', 'POST');
      const handle: Koa.Middleware = (ctx, next) => {
        ctx.state.backend = backend.name;
        ctx.state.resource = 'token-shape-a';
        ctx.state.series = series;
        return issue(ctx as unknown as Koa.Context, next);
      };
      // The seed's clients post to the backend's path with its trailing slash: both spellings are registered.
      mount('POST', path, handle);
      exact.set(`POST ${path}/`, handle);
      allowed.set(loosePath(path), allowHeader(['POST']));
    }
    const sessions = guard.sessions;
    if (sessions !== null) {
      // Sessions (docs/internals/contract.md §10): refresh and logout, beside the backend's resources.
      const doors: [string, string, Koa.Middleware][] = [
        ['token/refresh', 'token-refresh', refreshDoor(sessions, options.readFields, options.credentials)],
        ['logout', 'logout', logoutDoor(guard, sessions, options.readFields)],
      ];
      for (const [name, label, door] of doors) {
        const path = `${options.basePath}/${backend.name}/v1.0/${name}`;
        const series = options.metrics.route(backend.name, label, 'POST');
        mount('POST', path, (ctx, next) => {
          ctx.state.backend = backend.name;
          ctx.state.resource = label;
          ctx.state.series = series;
          return door(ctx as unknown as Koa.Context, next);
        });
        allowed.set(loosePath(path), allowHeader(['POST']));
      }
    }
  }
  if (options.openapi) mountDocs(router, options.basePath, options.openapi, { backends: options.backends, guards: options.guards });
  const dispatch = router.routes() as unknown as Koa.Middleware;
  const routes: Koa.Middleware = (ctx, next) => {
    // Each read once, the method from Node's request: Koa's getters are a hop each.
    const method = ctx.req.method as string;
    const path = ctx.request.path;
    return (exact.get(`${method} ${path}`) ?? loose.get(looseKey(method, path)) ?? dispatch)(ctx, next);
  };
  return { routes, unmatched: unmatched(allowed), tools };
}

/** The status an audited call is recorded with when its client went away before the answer (nginx's "client closed request"). */
const CLIENT_CLOSED = 499;

/**
 * An audited route: a call whose row its transaction did not write (a read, a refusal, a failure) is recorded
 * once its handler has settled and its answer has gone, with the status it was answered, off the request's path
 * (runtime/audit/). A client that went away first gets its row when the handler is over, with 499: never a
 * status made up before the call ran, and never a second row for a write that committed its own.
 */
function audited(audit: AuditRoute, handle: Koa.Middleware): Koa.Middleware {
  return async (ctx, next) => {
    const at = new Date();
    let settled = false;
    let closed = false;
    const record = () => {
      if (!settled || !closed || ctx.state.audited === true) return;
      audit.trail.record(auditEntry(ctx as unknown as Koa.Context, audit, ctx.res.writableFinished ? ctx.status : CLIENT_CLOSED, at));
    };
    ctx.res.once('close', () => {
      closed = true;
      record();
    });
    try {
      await handle(ctx, next);
    } finally {
      settled = true;
      record();
    }
  };
}

/** A path as routing compares it: in lower case, without one trailing slash. */
function loosePath(path: string): string {
  return (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase();
}

/** A request's method and path as routing compares them when the exact spelling is not registered: HEAD is a GET. */
function looseKey(method: string, path: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${loosePath(path)}`;
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
    // The path in any spelling routing accepts (letter case, one trailing slash).
    const allow = allowed.get(loosePath(ctx.path));
    if (allow === undefined) throw new HttpError(404, 'Not found');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    throw new HttpError(405, `Method ${ctx.method} not allowed`, { Allow: allow });
  };
}

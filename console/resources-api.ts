import { readFileSync } from 'node:fs';
import path from 'node:path';
import { authAttributes, changeAuth, etagOf } from '../generator/index.js';
import { credentialProblem } from '../runtime/auth/bounds.js';
import { type Access, HTTP_METHODS, type HttpMethod, type ResourceModule } from '../runtime/contract.js';
import { errnoOf, NO_TABLE } from '../runtime/db/index.js';
import { HttpError } from '../runtime/errors.js';
import type { Peer } from '../runtime/index.js';
import { cannotTell, explain, explainChecked, explainClaims, findRoute, routesOf } from './access.js';
import {
  type Console,
  type ConsoleContext,
  type ConsoleRouter,
  cursor,
  describe,
  manageable,
  PAGE_SIZE,
  parseAccess,
  requireManageable,
  resourceAccess,
  rolesOf,
} from './context.js';
import { RoleScope } from './scope.js';

/**
 * The console's resources: their access per method, setting or clearing a
 * resource's `auth` or a method's own (the XML file rewritten, the module
 * regenerated, the server enforcing it within the request), what such a
 * change would do to whom, who may call a resource, and why a user may or
 * may not call a route.
 */
export function resourcesApi(router: ConsoleRouter, console: Console): void {
  const { options, store } = console;

  router.get('/b/:backend/resources', (ctx) => {
    const backend = ctx.state.backend;
    ctx.body = {
      /** The backend's batches (docs/internals/contract.md §15): null when off. */
      batch: backend.batch ? { maxOperations: backend.batch.maxOperations } : null,
      resources: backend.resources.map((resource) => {
        const text = readFileSync(path.join(options.root, resource.source), 'utf8');
        return {
          ...describe(options.basePath, backend, resource),
          /** Each method's own `auth` as the file writes it (`""` a public method), for the methods that have one. */
          requestAuth: authAttributes(resource.source, text).requests,
          etag: etagOf(text),
        };
      }),
    };
  });

  const findResource = (ctx: ConsoleContext) => {
    const resource = ctx.state.backend.resources.find((candidate) => candidate.name === ctx.params.name && candidate.version === ctx.params.version);
    if (!resource) throw new HttpError(404, 'No such resource');
    return resource;
  };
  /** A method of the resource named in a body or query (absent: the change is the resource's own `auth`). */
  const findMethod = (resource: ResourceModule, value: unknown): HttpMethod | undefined => {
    if (value === undefined) return undefined;
    const method = typeof value === 'string' ? (value.toUpperCase() as HttpMethod) : undefined;
    if (method === undefined || !HTTP_METHODS.includes(method)) throw new HttpError(400, `method is one of ${HTTP_METHODS.join(', ')}`);
    if (!resource.operations[method]) throw new HttpError(404, `${resource.name} v${resource.version} has no ${method} method`);
    return method;
  };

  /**
   * Sets or clears an `auth`: `{auth, etag}` for the resource's own (a string of role names or `*`; null, public),
   * `{method, auth, etag}` for a method's own (a string, `""` a public method; null, the method inherits).
   */
  router.put('/b/:backend/resources/:name/:version/auth', console.json, async (ctx) => {
    const resource = findResource(ctx);
    const body = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
    const method = findMethod(resource, body.method);
    if (!('auth' in body)) throw new HttpError(400, `auth is role names separated by spaces, *, or null (${method ? 'the method inherits' : 'public'})`);
    const { auth, access } = parseAccess(body.auth, method ? 'Request' : 'Resource');
    if (typeof body.etag !== 'string') throw new HttpError(400, 'etag is the one the resource list gave');
    // Only roles this backend uses (or no other does): naming another backend's role would make it this console's to grant.
    (await RoleScope.of(ctx.state.backend, options.backends(), store)).requireNameable(access === 'inherit' ? [] : rolesOf(access));
    await refuseBesideOtherServers(console);
    const result = await changeAuth({ root: options.root, source: resource.source, method, auth, etag: body.etag, regenerate: options.regenerate });
    if (!result.ok) {
      if (result.reason === 'refused') {
        // The generator's own words (file:line:col and why), to the operator and to the log.
        options.logger?.warn(
          { requestId: ctx.state.requestId, source: resource.source, method, auth, errors: result.errors },
          'console change refused by the generator',
        );
      }
      throw new HttpError(STATUS[result.reason], result.message);
    }
    const target = `${resource.name} v${resource.version}${method ? ` ${method}` : ''}`;
    const described = (value: string | null) => (value === null ? (method ? 'inherit' : 'public') : method && value === '' ? 'public' : value);
    const action = method ? (result.after === null ? 'clear method auth' : 'set method auth') : result.after === null ? 'clear auth' : 'set auth';
    await console.record(ctx, action, target, `${described(result.before)} -> ${described(result.after)}`);
    ctx.body = { ...(method ? { method } : {}), auth: result.after, etag: result.etag, enforcedAfterMs: Math.round(result.ms) };
  });

  /**
   * Before an `auth` change is saved: the users who would gain access and those who would lose it, and the
   * methods it changes. `?auth=` the new value, absent for none (as null in the PUT); `&method=` for a method's own.
   */
  router.get('/b/:backend/resources/:name/:version/impact', async (ctx) => {
    const resource = findResource(ctx);
    requireManageable(ctx.state.backend);
    const method = findMethod(resource, ctx.query.method);
    const value = ctx.query.auth;
    if (Array.isArray(value)) throw new HttpError(400, 'one auth at a time');
    const { access } = parseAccess(value ?? null, method ? 'Request' : 'Resource');
    if (method) {
      const after = access === 'inherit' ? resourceAccess(resource) : access;
      ctx.body = { methods: [method], ...(await store.impact(resource.operations[method]!.access, after)) };
      return;
    }
    // A resource's auth reaches the methods without one of their own.
    const own = authAttributes(resource.source, readFileSync(path.join(options.root, resource.source), 'utf8')).requests;
    const inherit = Object.keys(resource.operations).filter((candidate) => !(candidate in own));
    ctx.body = { methods: inherit, ...(await store.impact(resourceAccess(resource), access as Access)) };
  });

  router.get('/b/:backend/resources/:name/:version/access', async (ctx) => {
    const resource = findResource(ctx);
    const access = resourceAccess(resource);
    if (access === null) {
      ctx.body = { public: true, role: null, users: [], next: null };
      return;
    }
    requireManageable(ctx.state.backend);
    ctx.body = { public: false, role: resource.auth, ...(await store.admitted(access, cursor(ctx.query.after), PAGE_SIZE)) };
  });

  /**
   * `xmlrest explain`, on the console: may this user (by name) call this method at this path, and why. On a
   * backend with its own AuthQuery the roles come from that query, which needs the password: the answer is then
   * "cannot tell" (allowed null), and POST with the password runs the query as a login does (it counts as one).
   */
  const explainRoute = (ctx: ConsoleContext, method: unknown, served: unknown, user: unknown) => {
    if (typeof user !== 'string' || typeof method !== 'string' || typeof served !== 'string' || user === '')
      throw new HttpError(400, 'explain needs user, method and path');
    const route = findRoute(routesOf([ctx.state.backend]), method, served.startsWith(options.basePath) ? served.slice(options.basePath.length) : served);
    if (!route) throw new HttpError(404, `No route ${method.toUpperCase()} ${served} on ${ctx.state.backend.name}`);
    return { route, user };
  };
  router.get('/b/:backend/explain', async (ctx) => {
    const { route, user } = explainRoute(ctx, ctx.query.method, ctx.query.path, ctx.query.user);
    if (!manageable(ctx.state.backend)) {
      ctx.body = cannotTell(route, user, ctx.state.backend.name);
      return;
    }
    const id = await store.idOf(user);
    if (id === undefined) {
      ctx.body = { ...explain(route, user, null), reason: `there is no user ${user}` };
      return;
    }
    const held = await store.user(id);
    ctx.body = { ...explain(route, user, held?.roles ?? []), ends: held?.ends ?? {} };
  });
  router.post('/b/:backend/explain', console.json, async (ctx) => {
    const body = ((ctx.request as { body?: unknown }).body ?? {}) as Record<string, unknown>;
    const { route, user } = explainRoute(ctx, body.method, body.path, body.user);
    if (typeof body.password !== 'string' || body.password === '') throw new HttpError(400, "explain with a password needs the user's password");
    if (credentialProblem('user', user) || credentialProblem('password', body.password)) throw new HttpError(400, 'That user name or password is too long');
    const guard = options.server()?.guardFor(ctx.state.backend.name);
    if (!guard) throw new HttpError(503, 'The server is starting: try again in a moment', { 'Retry-After': '1' });
    // A login in all but name: the same query, the same limits and counts as the API's (a wrong password counts).
    const checked = await guard.credentials.check(user, body.password, ctx.ip);
    ctx.body = explainChecked(route, user, ctx.state.backend.authScheme, checked);
  });

  /** `xmlrest explain --claims`, on the console: may the user a token's claims describe (an outside issuer's) call this route. */
  router.post('/b/:backend/explain-claims', console.json, async (ctx) => {
    const { claims, method, path: served } = ((ctx.request as { body?: unknown }).body ?? {}) as { claims?: unknown; method?: unknown; path?: unknown };
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims) || typeof method !== 'string' || typeof served !== 'string') {
      throw new HttpError(400, "explain-claims needs claims (a token's payload, as a JSON object), method and path");
    }
    const route = findRoute(routesOf([ctx.state.backend]), method, served.startsWith(options.basePath) ? served.slice(options.basePath.length) : served);
    if (!route) throw new HttpError(404, `No route ${method.toUpperCase()} ${served} on ${ctx.state.backend.name}`);
    ctx.body = await explainClaims(route, ctx.state.backend, claims, (sql, values) => options.database.select(sql, values));
  });
}

const STATUS = { invalid: 400, changed: 409, 'no-request': 404, refused: 422 } as const;

/**
 * A console edit rewrites this server's resource files and reloads this server's routes: other servers on
 * the same database (runtime/peers.ts) would keep the old rule until they restart, so the console refuses it
 * there, saying why. Role and user changes live in the database and reach every server; they stay allowed.
 */
async function refuseBesideOtherServers(console: Console): Promise<void> {
  const peers = console.options.server()?.peers;
  if (!peers) throw new HttpError(503, 'The server is starting: try again in a moment', { 'Retry-After': '1' });
  let others: Peer[];
  try {
    others = await peers.others();
  } catch (error) {
    if (errnoOf(error) !== NO_TABLE) throw error;
    throw new HttpError(409, 'This server cannot tell whether other servers share its database (the table xmlrest_server is missing): run npx xmlrest db init');
  }
  if (others.length === 0) return;
  const named = others.map((peer) => `${peer.host} pid ${peer.pid}`).join(', ');
  throw new HttpError(
    409,
    `Several servers serve this database (this one and ${others.length} more: ${named}): a console edit would change this server's resource files only, and the others would keep the old rule until they restart. Change resources/ in the repository and deploy`,
  );
}

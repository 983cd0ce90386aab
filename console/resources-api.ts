import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setAuthAttribute } from '../generator/index.js';
import { HttpError } from '../runtime/errors.js';
import type { Peer } from '../runtime/index.js';
import { explain, findRoute, routesOf } from './access.js';
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
 * resource's `auth` (the XML file rewritten, the module regenerated, the
 * server enforcing it within the request), what such a change would do to
 * whom, who may call a resource, and why a user may or may not call a route.
 */
export function resourcesApi(router: ConsoleRouter, console: Console): void {
  const { options, store } = console;

  router.get('/b/:backend/resources', (ctx) => {
    const backend = ctx.state.backend;
    ctx.body = {
      resources: backend.resources.map((resource) => ({
        ...describe(options.basePath, backend, resource),
        etag: etagOf(path.join(options.root, resource.source)),
      })),
    };
  });

  const findResource = (ctx: ConsoleContext) => {
    const resource = ctx.state.backend.resources.find((candidate) => candidate.name === ctx.params.name && candidate.version === ctx.params.version);
    if (!resource) throw new HttpError(404, 'No such resource');
    return resource;
  };

  router.put('/b/:backend/resources/:name/:version/auth', console.json, async (ctx) => {
    const resource = findResource(ctx);
    const body = (ctx.request as { body?: { auth?: unknown; etag?: unknown } }).body ?? {};
    const access = parseAccess(body.auth);
    (await RoleScope.of(ctx.state.backend, options.backends(), store)).requireNameable(rolesOf(access));
    await refuseBesideOtherServers(console);
    const auth = access === null ? null : access === '*' ? '*' : access.join(' ');
    const file = path.join(options.root, resource.source);
    const before = readFileSync(file, 'utf8');
    if (body.etag !== etag(before)) throw new HttpError(409, `${resource.source} changed since the page loaded it: reload and try again`);
    const edited = setAuthAttribute(before, auth);
    writeAtomically(file, edited);
    const result = await options.regenerate().catch((error: unknown) => ({ ok: false, ms: 0, errors: [`xmlrest: ${(error as Error).message}`] }));
    if (!result.ok) {
      // Put the file back, unless someone changed it again meanwhile, and serve what was served before.
      if (readFileSync(file, 'utf8') === edited) writeAtomically(file, before);
      await options.regenerate().catch(() => undefined);
      // The generator's own words (file:line:col and why), to the operator and to the log.
      const errors = result.errors?.length ? result.errors : ['the generator gave no reason'];
      options.logger?.warn({ requestId: ctx.state.requestId, source: resource.source, auth, errors }, 'console change refused by the generator');
      throw new HttpError(422, `${resource.source} is as it was: the project does not generate with this change: ${errors.join('; ')}`);
    }
    await console.record(
      ctx,
      auth === null ? 'clear auth' : 'set auth',
      `${resource.name} v${resource.version}`,
      `${resource.auth ?? 'public'} -> ${auth ?? 'public'}`,
    );
    ctx.body = { auth, etag: etagOf(file), enforcedAfterMs: Math.round(result.ms) };
  });

  /** Before a role change is saved: the users who would gain access and the users who would lose it. */
  router.get('/b/:backend/resources/:name/:version/impact', async (ctx) => {
    const resource = findResource(ctx);
    requireManageable(ctx.state.backend);
    const after = parseAccess(typeof ctx.query.auth === 'string' ? ctx.query.auth : null);
    const inherit = Object.entries(resource.operations)
      .filter(([, operation]) => JSON.stringify(operation!.access) === JSON.stringify(resourceAccess(resource)))
      .map(([method]) => method);
    ctx.body = { methods: inherit, ...(await store.impact(resourceAccess(resource), after)) };
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

  /** `xmlrest explain`, on the console: may this user (by name) call this method at this path, and why. */
  router.get('/b/:backend/explain', async (ctx) => {
    const { user, method, path: served } = ctx.query;
    if (typeof user !== 'string' || typeof method !== 'string' || typeof served !== 'string' || user === '')
      throw new HttpError(400, 'explain needs user, method and path');
    const route = findRoute(routesOf([ctx.state.backend]), method, served.startsWith(options.basePath) ? served.slice(options.basePath.length) : served);
    if (!route) throw new HttpError(404, `No route ${method.toUpperCase()} ${served} on ${ctx.state.backend.name}`);
    let holds: string[] | null = null;
    if (manageable(ctx.state.backend)) {
      const id = await store.idOf(user);
      holds = id === undefined ? null : ((await store.user(id))?.roles ?? null);
      if (id === undefined) {
        ctx.body = { ...explain(route, user, null), reason: `there is no user ${user}` };
        return;
      }
    }
    ctx.body = explain(route, user, holds);
  });
}

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
    if ((error as { errno?: number }).errno !== 1146) throw error;
    throw new HttpError(409, 'This server cannot tell whether other servers share its database (the table xmlrest_server is missing): run npx xmlrest db init');
  }
  if (others.length === 0) return;
  const named = others.map((peer) => `${peer.host} pid ${peer.pid}`).join(', ');
  throw new HttpError(
    409,
    `Several servers serve this database (this one and ${others.length} more: ${named}): a console edit would change this server's resource files only, and the others would keep the old rule until they restart. Change resources/ in the repository and deploy`,
  );
}

function etag(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function etagOf(file: string): string {
  return etag(readFileSync(file, 'utf8'));
}

/** A crash mid-write leaves the old file or the new one, never half of one: write a sibling, then rename. */
function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

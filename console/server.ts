import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import type Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { setAuthAttribute } from '../generator/index.js';
import { credentialProblem, MAX_PASSWORD_BYTES } from '../runtime/auth/bounds.js';
import { revokeUserTokens } from '../runtime/auth/revocations.js';
import { HttpError } from '../runtime/errors.js';
import type { BackendModule, Database, ReloadableApp, ResourceModule } from '../runtime/index.js';
import type { Logger } from '../runtime/log.js';
import { checkRoleName, checkUserName } from './names.js';
import { consolePage } from './page.js';
import { UserStore } from './store.js';

/**
 * The admin console (docs/contract.md §6) at `{base}/_console/`: the page,
 * and its JSON API under `{base}/_console/api/`. Every API call but the list
 * of backends authenticates with the backend's own scheme and needs the
 * backend's console role, checked here on the server. Credentials travel
 * only in the Authorization header the page sets from memory: no cookie, so
 * no request forged from another site can carry them.
 */
export interface ConsoleOptions {
  basePath: string;
  /** The backends served now (they change when a role is set). */
  backends: () => readonly BackendModule[];
  database: Database;
  /** The project folder that resource sources are relative to. */
  root: string;
  /** Regenerates the project and swaps the new routes into the running server; `errors` are the generator's. */
  regenerate: () => Promise<{ ok: boolean; ms: number; errors?: readonly string[] }>;
  /** The built page (vite build of console/ui). */
  assetsDir: string;
  /**
   * The server the console is part of (late-bound: the console is among its middleware). Operators sign in
   * through the very authenticator the API uses, so that a revoked token does not open the console, guesses
   * here count with guesses at the API, and a role change here reaches the API's remembered logins.
   */
  server: () => Pick<ReloadableApp, 'guardFor' | 'revocations'> | undefined;
  logger?: Logger;
}

interface State {
  requestId: string;
  backend: BackendModule;
}

const PAGE_SIZE = 50;

export function consoleMiddleware(options: ConsoleOptions): Koa.Middleware {
  const prefix = `${options.basePath}/_console`;
  const store = new UserStore(options.database);
  const json = bodyParser({ enableTypes: ['json'], jsonLimit: '64kb', strict: true });
  const router = new Router<State>({ prefix: `${prefix}/api` });

  router.get('/backends', (ctx) => {
    // Public: the sign-in screen needs each backend's scheme; the names are in every URL anyway.
    ctx.body = { backends: options.backends().map((backend) => ({ name: backend.name, authScheme: backend.authScheme, consoleRole: backend.consoleRole })) };
  });

  // Everything below: the backend's own credentials and its console role.
  router.use('/b/:backend', async (ctx, next) => {
    const backend = options.backends().find((candidate) => candidate.name === ctx.params.backend);
    if (!backend || backend.authScheme === null) throw new HttpError(404, 'No such backend, or it has no authentication');
    const auth = options.server()?.guardFor(backend.name);
    if (!auth) throw new HttpError(503, 'The server is starting: try again in a moment', { 'Retry-After': '1' });
    // Changes need a header no form and no other site can send: with Basic credentials a browser may
    // remember and resend them by itself, which would otherwise let a cross-site form act as the operator.
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.get('X-XMLRest-Console') !== '1') {
      throw new HttpError(403, 'Console changes need the X-XMLRest-Console header');
    }
    try {
      await auth.authenticate(ctx.headers.authorization, backend.consoleRole, ctx.ip);
    } catch (error) {
      // No WWW-Authenticate: a browser would offer its own login box, then resend what it was told everywhere.
      if (error instanceof HttpError) throw new HttpError(error.status, error.message);
      throw error;
    }
    ctx.state.backend = backend;
    ctx.set('Cache-Control', 'no-store');
    await next();
  });

  router.get('/b/:backend/me', (ctx) => {
    ctx.body = { backend: ctx.state.backend.name, consoleRole: ctx.state.backend.consoleRole, manageable: manageable(ctx.state.backend) };
  });

  router.get('/b/:backend/resources', (ctx) => {
    const backend = ctx.state.backend;
    ctx.body = {
      resources: backend.resources.map((resource) => ({
        ...describe(options.basePath, backend, resource),
        etag: etagOf(path.join(options.root, resource.source)),
      })),
    };
  });

  router.put('/b/:backend/resources/:name/:version/auth', json, async (ctx) => {
    const backend = ctx.state.backend;
    const resource = backend.resources.find((candidate) => candidate.name === ctx.params.name && candidate.version === ctx.params.version);
    if (!resource) throw new HttpError(404, 'No such resource');
    const body = (ctx.request as { body?: { auth?: unknown; etag?: unknown } }).body ?? {};
    let role: string | null = null;
    if (body.auth !== null && body.auth !== '') {
      const checked = checkRoleName(body.auth);
      if (!checked.ok) throw new HttpError(400, checked.message);
      role = checked.name;
    }
    const file = path.join(options.root, resource.source);
    const before = readFileSync(file, 'utf8');
    if (body.etag !== etag(before)) throw new HttpError(409, `${resource.source} changed since the page loaded it: reload and try again`);
    const edited = setAuthAttribute(before, role);
    writeAtomically(file, edited);
    const result = await options.regenerate().catch((error: unknown) => ({ ok: false, ms: 0, errors: [`xmlrest: ${(error as Error).message}`] }));
    if (!result.ok) {
      // Put the file back, unless someone changed it again meanwhile, and serve what was served before.
      if (readFileSync(file, 'utf8') === edited) writeAtomically(file, before);
      await options.regenerate().catch(() => undefined);
      // The generator's own words (file:line:col and why), to the operator and to the log.
      const errors = result.errors?.length ? result.errors : ['the generator gave no reason'];
      options.logger?.warn({ requestId: ctx.state.requestId, source: resource.source, auth: role, errors }, 'console change refused by the generator');
      throw new HttpError(422, `${resource.source} is as it was: the project does not generate with this change: ${errors.join('; ')}`);
    }
    ctx.body = { auth: role, etag: etagOf(file), enforcedAfterMs: Math.round(result.ms) };
  });

  router.get('/b/:backend/roles', async (ctx) => {
    const backend = ctx.state.backend;
    const roles = manageable(backend) ? await store.roles() : new Map<string, number>();
    for (const resource of backend.resources) if (resource.auth !== null && !roles.has(resource.auth)) roles.set(resource.auth, 0);
    if (!roles.has(backend.consoleRole)) roles.set(backend.consoleRole, 0);
    ctx.body = {
      manageable: manageable(backend),
      roles: [...roles]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, holders]) => ({
          name,
          holders,
          resources: backend.resources.filter((resource) => resource.auth === name).map((resource) => label(resource)),
        })),
    };
  });

  router.post('/b/:backend/roles', json, async (ctx) => {
    requireManageable(ctx.state.backend);
    const checked = checkRoleName((ctx.request as { body?: { name?: unknown } }).body?.name);
    if (!checked.ok) throw new HttpError(400, checked.message);
    const name = checked.name;
    await store.createRole(name);
    ctx.status = 201;
    ctx.body = { name };
  });

  router.get('/b/:backend/roles/:role/users', async (ctx) => {
    requireManageable(ctx.state.backend);
    ctx.body = await store.holders(ctx.params.role ?? '', cursor(ctx.query.after), PAGE_SIZE);
  });

  router.get('/b/:backend/users', async (ctx) => {
    requireManageable(ctx.state.backend);
    const prefix = typeof ctx.query.q === 'string' ? ctx.query.q.slice(0, 190) : '';
    ctx.body = await store.users(cursor(ctx.query.after), PAGE_SIZE, prefix);
  });

  router.post('/b/:backend/users', json, async (ctx) => {
    requireManageable(ctx.state.backend);
    const body = (ctx.request as { body?: { name?: unknown; password?: unknown } }).body ?? {};
    const checked = checkUserName(body.name);
    if (!checked.ok) throw new HttpError(400, checked.message);
    if (typeof body.password !== 'string' || body.password.length < 8) throw new HttpError(400, 'A password needs at least 8 characters');
    if (credentialProblem('password', body.password)) throw new HttpError(400, `A password has at most ${MAX_PASSWORD_BYTES} bytes`);
    const id = await store.addUser(checked.name, body.password);
    ctx.status = 201;
    ctx.body = await store.user(id);
  });

  router.put('/b/:backend/users/:id/roles/:role', async (ctx) => {
    requireManageable(ctx.state.backend);
    const user = await existingUser(ctx.params.id ?? '');
    const checked = checkRoleName(ctx.params.role ?? '');
    if (!checked.ok) throw new HttpError(400, checked.message);
    await store.grant(user, checked.name);
    // The user tables' triggers record the change; reading it now makes this server see it at once.
    await options.server()?.revocations.refresh();
    ctx.body = await store.user(user);
  });

  router.delete('/b/:backend/users/:id/roles/:role', async (ctx) => {
    requireManageable(ctx.state.backend);
    const user = await existingUser(ctx.params.id ?? '');
    await store.revoke(user, ctx.params.role ?? '');
    // The user tables' triggers revoke the user's tokens on every backend and tell every server to forget
    // its remembered logins; reading that now makes this server refuse them at once, the others within a poll.
    await options.server()?.revocations.refresh();
    ctx.body = await store.user(user);
  });

  router.post('/b/:backend/users/:id/revoke-tokens', async (ctx) => {
    requireManageable(ctx.state.backend);
    const user = await existingUser(ctx.params.id ?? '');
    await revokeUserTokens(options.database, ctx.state.backend.name, String(user));
    await options.server()?.revocations.refresh();
    ctx.body = { revoked: true, user };
  });

  router.get('/b/:backend/users/:id/access', async (ctx) => {
    requireManageable(ctx.state.backend);
    const user = await store.user(await existingUser(ctx.params.id ?? ''));
    const roles = new Set(user?.roles ?? []);
    ctx.body = {
      user,
      resources: ctx.state.backend.resources
        .filter((resource) => resource.auth === null || roles.has(resource.auth))
        .map((resource) => ({ ...describe(options.basePath, ctx.state.backend, resource), because: resource.auth ?? 'public' })),
    };
  });

  router.get('/b/:backend/resources/:name/:version/access', async (ctx) => {
    const resource = ctx.state.backend.resources.find((candidate) => candidate.name === ctx.params.name && candidate.version === ctx.params.version);
    if (!resource) throw new HttpError(404, 'No such resource');
    if (resource.auth === null) {
      ctx.body = { public: true, role: null, users: [], next: null };
      return;
    }
    requireManageable(ctx.state.backend);
    ctx.body = { public: false, role: resource.auth, ...(await store.holders(resource.auth, cursor(ctx.query.after), PAGE_SIZE)) };
  });

  router.all('/{*rest}', () => {
    throw new HttpError(404, 'Not found');
  });

  const page = consolePage(prefix, options.assetsDir);
  const routes = router.routes();
  return async (ctx, next) => {
    if (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`)) return next();
    if (ctx.path.startsWith(`${prefix}/api/`)) return routes(ctx as never, next);
    return page(ctx, next);
  };

  async function existingUser(id: string): Promise<number> {
    if (!/^[0-9]{1,10}$/.test(id)) throw new HttpError(400, 'Not a user id');
    if (!(await store.user(Number(id)))) throw new HttpError(404, 'No such user');
    return Number(id);
  }
}

/**
 * The console manages the default user tables only. A backend whose
 * AuthQuery reads other tables keeps its users there: writing to the default
 * ones would change nothing it checks.
 */
function manageable(backend: BackendModule): boolean {
  return backend.defaultTables;
}

function requireManageable(backend: BackendModule): void {
  if (!manageable(backend)) {
    throw new HttpError(409, `Backend ${backend.name} checks credentials with its own AuthQuery over other tables: manage its users and roles there`);
  }
}

function describe(basePath: string, backend: BackendModule, resource: ResourceModule) {
  return {
    name: resource.name,
    version: resource.version,
    path: `${basePath}/${backend.name}/v${resource.version}/${resource.name}`,
    methods: Object.keys(resource.operations),
    auth: resource.auth,
    source: resource.source,
  };
}

function label(resource: ResourceModule): string {
  return `${resource.name} v${resource.version}`;
}

function cursor(value: unknown): number {
  return typeof value === 'string' && /^[0-9]{1,10}$/.test(value) ? Number(value) : 0;
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

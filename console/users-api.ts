import { credentialProblem, MAX_PASSWORD_BYTES } from '../runtime/auth/bounds.js';
import { revokeUserTokens } from '../runtime/auth/tokens/revocations.js';
import { HttpError } from '../runtime/errors.js';
import { admits, routesOf } from './access.js';
import {
  type Console,
  type ConsoleContext,
  type ConsoleRouter,
  cursor,
  describe,
  label,
  manageable,
  PAGE_SIZE,
  requireManageable,
  rolesOf,
} from './context.js';
import { grantDetail, grantEnd } from './grants.js';
import { KeyStore } from './keys.js';
import { checkRoleName, checkUserName } from './names.js';
import { RoleScope } from './scope.js';
import type { UserRow } from './store.js';
import { userTools } from './tools.js';
import { backendsReading, setUserTenant, tenantProblem, userTenantColumn } from './user-tenant.js';

/**
 * The console's users and roles, in the default user tables: listing and
 * finding users, creating, removing, disabling and enabling them, resetting
 * passwords, granting and revoking roles, creating and deleting roles, and
 * the history of every change. Only the roles its backend uses, and no user
 * who operates another backend (console/scope.ts). Every change is written to
 * the audit log; the user tables' triggers end revoked roles everywhere within
 * a poll, and this server reads them at once.
 */
export function usersApi(router: ConsoleRouter, console: Console): void {
  const { options, store } = console;
  const scopeOf = (ctx: ConsoleContext) => RoleScope.of(ctx.state.backend, options.backends(), store);
  /** The column of usr that holds this backend's users' tenant; undefined without one (console/user-tenant.ts). */
  const tenantColumn = (ctx: ConsoleContext) => userTenantColumn(ctx.state.backend);

  /** The roles this backend uses, and those no backend uses (a resource may name them); never another backend's alone. */
  router.get('/b/:backend/roles', async (ctx) => {
    const backend = ctx.state.backend;
    const roles = manageable(backend) ? await store.heldRoles() : new Map<string, number>();
    const scope = manageable(backend) ? await scopeOf(ctx) : undefined;
    const named = new Set(backend.resources.flatMap((resource) => Object.values(resource.operations).flatMap((operation) => rolesOf(operation!.access))));
    for (const role of [...named, backend.consoleRole, ...(scope?.created ?? [])]) if (!roles.has(role)) roles.set(role, 0);
    ctx.body = {
      manageable: manageable(backend),
      roles: [...roles]
        .filter(([name]) => scope?.listed(name) ?? true)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, holders]) => ({
          name,
          holders,
          resources: backend.resources
            .filter((resource) => Object.values(resource.operations).some((operation) => rolesOf(operation!.access).includes(name)))
            .map(label),
          grantable: scope?.grantable(name) ?? false,
        })),
    };
  });

  router.post('/b/:backend/roles', console.json, async (ctx) => {
    requireManageable(ctx.state.backend);
    const checked = checkRoleName((ctx.request as { body?: { name?: unknown } }).body?.name);
    if (!checked.ok) throw new HttpError(400, checked.message);
    (await scopeOf(ctx)).requireNew(checked.name);
    if (!(await store.createRole(checked.name, ctx.state.backend.name))) throw new HttpError(409, `The role ${checked.name} exists already`);
    await console.record(ctx, 'create role', checked.name);
    ctx.status = 201;
    ctx.body = { name: checked.name };
  });

  /** Deletes a role and its grants; the page asks the operator first. Resources that still name it are listed. */
  router.delete('/b/:backend/roles/:role', async (ctx) => {
    requireManageable(ctx.state.backend);
    const role = ctx.params.role ?? '';
    if (role === ctx.state.backend.consoleRole) throw new HttpError(409, `The role ${role} opens this console: it cannot be deleted here`);
    (await scopeOf(ctx)).requireGrantable(role);
    const grants = await store.deleteRole(role, ctx.state.backend.name);
    await console.refresh();
    await console.record(ctx, 'delete role', role, `${grants} grant${grants === 1 ? '' : 's'} removed`);
    const stillNamed = ctx.state.backend.resources.filter((resource) =>
      Object.values(resource.operations).some((operation) => rolesOf(operation!.access).includes(role)),
    );
    ctx.body = { deleted: role, grants, stillNamedBy: stillNamed.map(label) };
  });

  router.get('/b/:backend/roles/:role/users', async (ctx) => {
    requireManageable(ctx.state.backend);
    ctx.body = await store.holders(ctx.params.role ?? '', cursor(ctx.query.after), PAGE_SIZE);
  });

  router.get('/b/:backend/users', async (ctx) => {
    requireManageable(ctx.state.backend);
    const prefix = typeof ctx.query.q === 'string' ? ctx.query.q.slice(0, 190) : '';
    ctx.body = await store.users(cursor(ctx.query.after), PAGE_SIZE, prefix, tenantColumn(ctx));
  });

  router.post('/b/:backend/users', console.json, async (ctx) => {
    requireManageable(ctx.state.backend);
    const body = (ctx.request as { body?: { name?: unknown; password?: unknown } }).body ?? {};
    const checked = checkUserName(body.name);
    if (!checked.ok) throw new HttpError(400, checked.message);
    const password = checkedPassword(body.password);
    if ((await store.idOf(checked.name)) !== undefined) throw new HttpError(409, `A user named ${checked.name} exists already`);
    const id = await store.addUser(checked.name, password);
    await console.record(ctx, 'create user', checked.name);
    ctx.status = 201;
    ctx.body = await store.user(id, tenantColumn(ctx));
  });

  router.delete('/b/:backend/users/:id', async (ctx) => {
    const user = await target(ctx);
    if (String(user.id) === ctx.state.operator) throw new HttpError(409, 'You cannot remove yourself');
    (await scopeOf(ctx)).requireChangeable(user.row);
    await store.removeUser(user.id);
    // Its keys go with it on every backend (the delete trigger of `xmlrest db init` says so too): none comes back
    // to life when the id is used again.
    const keys = await new KeyStore(options.database).revokeUser(String(user.id));
    await console.refresh();
    await console.record(ctx, 'remove user', user.name, keys > 0 ? `${keys} API key${keys === 1 ? '' : 's'} revoked` : '');
    ctx.body = { removed: user.id };
  });

  for (const disabled of [true, false]) {
    router.post(`/b/:backend/users/:id/${disabled ? 'disable' : 'enable'}`, async (ctx) => {
      const user = await target(ctx);
      if (disabled && String(user.id) === ctx.state.operator) throw new HttpError(409, 'You cannot disable yourself');
      (await scopeOf(ctx)).requireChangeable(user.row);
      await store.setDisabled(user.id, disabled);
      // A disabled user's tokens end with it, on every backend (the trigger on the password column says so too,
      // once `xmlrest db init` has put it there).
      if (disabled) await revokeUserTokens(options.database, '*', String(user.id));
      await console.refresh();
      await console.record(ctx, disabled ? 'disable user' : 'enable user', user.name);
      ctx.body = await store.user(user.id, tenantColumn(ctx));
    });
  }

  router.put('/b/:backend/users/:id/password', console.json, async (ctx) => {
    const user = await target(ctx);
    (await scopeOf(ctx)).requireChangeable(user.row);
    const password = checkedPassword((ctx.request as { body?: { password?: unknown } }).body?.password);
    await store.setPassword(user.id, password);
    // A reset password ends the sessions the old one opened.
    await revokeUserTokens(options.database, '*', String(user.id));
    await console.refresh();
    await console.record(ctx, 'reset password', user.name);
    ctx.body = await store.user(user.id, tenantColumn(ctx));
  });

  /** Grants a role, for good, or until a time (`{"until": ISO}`) or for a while (`{"for": "8h"}`): runtime/auth/users/grants.ts. */
  router.put('/b/:backend/users/:id/roles/:role', console.json, async (ctx) => {
    const user = await target(ctx);
    const checked = checkRoleName(ctx.params.role ?? '');
    if (!checked.ok) throw new HttpError(400, checked.message);
    const body = ((ctx.request as { body?: unknown }).body ?? {}) as { until?: unknown; for?: unknown };
    const end = grantEnd(body.until, body.for);
    if (!end.ok) throw new HttpError(400, end.message);
    const scope = await scopeOf(ctx);
    scope.requireChangeable(user.row);
    scope.requireGrantable(checked.name);
    const outcome = await store.grant(user.id, checked.name, end.until);
    await console.refresh();
    if (outcome !== 'unchanged') await console.record(ctx, 'grant role', user.name, grantDetail(checked.name, end.until));
    ctx.body = await store.user(user.id, tenantColumn(ctx));
  });

  router.delete('/b/:backend/users/:id/roles/:role', async (ctx) => {
    const user = await target(ctx);
    const scope = await scopeOf(ctx);
    scope.requireChangeable(user.row);
    scope.requireGrantable(ctx.params.role ?? '');
    await store.revoke(user.id, ctx.params.role ?? '');
    // The next login reads the roles without it. The triggers revoke the user's tokens on every backend;
    // reading that now makes this server refuse them at once, the others within a poll.
    await console.refresh();
    await console.record(ctx, 'revoke role', user.name, ctx.params.role ?? '');
    ctx.body = await store.user(user.id, tenantColumn(ctx));
  });

  // Any user's tokens and API keys of this backend only: ending sessions here changes nothing anywhere else.
  router.post('/b/:backend/users/:id/revoke-tokens', async (ctx) => {
    const user = await target(ctx);
    await revokeUserTokens(options.database, ctx.state.backend.name, String(user.id));
    const keys = await new KeyStore(options.database).revokeUser(String(user.id), ctx.state.backend.name);
    await console.refresh();
    await console.record(ctx, 'revoke tokens', user.name, keys > 0 ? `and ${keys} API key${keys === 1 ? '' : 's'}` : '');
    ctx.body = { revoked: true, user: user.id, keys };
  });

  /**
   * The backend's tenant as the users page shows it: none; a column of usr that the page sets; or a TenantQuery
   * (or an AuthQuery of its own), whose tables are the backend's own to change: nothing to set here.
   */
  router.get('/b/:backend/tenant', (ctx) => {
    const tenant = ctx.state.backend.tenant;
    ctx.body = { tenant: tenant === undefined ? null : { type: tenant.type, column: tenant.column, settable: tenantColumn(ctx) !== undefined } };
  });

  /**
   * Sets a user's tenant (`{"tenant": "42"}`, or null for none), checked against the tenant's type. The user's
   * tokens, sessions and API keys end on every backend that reads the column, as a user's revocation ends them:
   * each carries the tenant it was issued with.
   */
  router.put('/b/:backend/users/:id/tenant', console.json, async (ctx) => {
    const user = await target(ctx);
    const column = tenantColumn(ctx);
    if (column === undefined) {
      throw new HttpError(
        409,
        ctx.state.backend.tenant === undefined
          ? `Backend ${ctx.state.backend.name} has no tenant`
          : `Backend ${ctx.state.backend.name} reads its users' tenant with its TenantQuery: change it in the tables that query reads`,
      );
    }
    const given = ((ctx.request as { body?: unknown }).body ?? {}) as { tenant?: unknown };
    if (given.tenant !== null && typeof given.tenant !== 'string') throw new HttpError(400, 'Send {"tenant": "<tenant>"}, or {"tenant": null} for none');
    const problem = given.tenant === null ? undefined : tenantProblem(ctx.state.backend.tenant!.type, given.tenant);
    if (problem) throw new HttpError(400, `Not a tenant: ${problem}`);
    (await scopeOf(ctx)).requireChangeable(user.row);
    const readers = backendsReading(column, options.backends());
    const { keys } = await setUserTenant(options.database, column, readers, user.id, given.tenant);
    await console.refresh();
    const keysEnded = keys > 0 ? `; ${keys} API key${keys === 1 ? '' : 's'} revoked` : '';
    await console.record(ctx, 'set tenant', user.name, `${given.tenant ?? 'none'}${keysEnded}`);
    ctx.body = await store.user(user.id, column);
  });

  /**
   * Everything a user may call on this backend, method by method, and through which role; and on a backend with MCP,
   * the tools their agent sees there (console/tools.ts), null elsewhere.
   */
  router.get('/b/:backend/users/:id/access', async (ctx) => {
    const { row: user } = await target(ctx);
    const holds = user.roles;
    const routes = routesOf([ctx.state.backend]);
    ctx.body = {
      user,
      resources: ctx.state.backend.resources.flatMap((resource) => {
        const callable = routes.filter((route) => route.path.endsWith(`/v${resource.version}/${resource.name}`) && admits(route.access, holds));
        if (callable.length === 0) return [];
        const through = new Set(
          callable.map((route) =>
            route.access === null ? 'public' : route.access === '*' ? '*' : route.access.filter((role) => holds.includes(role)).join(', '),
          ),
        );
        return [
          { ...describe(options.basePath, ctx.state.backend, resource), methods: callable.map((route) => route.method), because: [...through].join('; ') },
        ];
      }),
      mcp: await userTools(options.basePath, ctx.state.backend, options.server()?.toolsFor(ctx.state.backend.name), user),
    };
  });

  // Changes to the default user tables made elsewhere (the command line, a grant's end) are recorded under `*`:
  // every console of those tables shows them.
  router.get('/b/:backend/history', async (ctx) => {
    ctx.body = await console.audit.history(ctx.state.backend.name, cursor(ctx.query.before), PAGE_SIZE, manageable(ctx.state.backend));
  });

  async function target(ctx: ConsoleContext): Promise<{ id: number; name: string; row: UserRow }> {
    requireManageable(ctx.state.backend);
    const row = await console.existingUser(ctx.params.id ?? '');
    return { id: row.user_id, name: row.user_name, row };
  }
}

function checkedPassword(value: unknown): string {
  if (typeof value !== 'string' || value.length < 8) throw new HttpError(400, 'A password needs at least 8 characters');
  if (credentialProblem('password', value)) throw new HttpError(400, `A password has at most ${MAX_PASSWORD_BYTES} bytes`);
  return value;
}

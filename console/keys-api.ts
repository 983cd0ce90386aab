import { HttpError } from '../runtime/errors.js';
import { type Console, type ConsoleContext, type ConsoleRouter, requireManageable } from './context.js';
import { checkNewKey, KeyStore, parseExpiry } from './keys.js';
import { RoleScope } from './scope.js';

/**
 * The console's Keys page (docs/internals/contract.md §10): a backend's API keys, per
 * user; a new key, shown once in the answer that made it; revoking one. Only
 * on a backend with `api_keys="on"` and the default user tables, for the
 * users its console may change (console/scope.ts), each change in the history.
 */
export function keysApi(router: ConsoleRouter, console: Console): void {
  const { options, store } = console;
  const keys = new KeyStore(options.database);

  const backendOf = (ctx: ConsoleContext) => {
    requireManageable(ctx.state.backend);
    if (!ctx.state.backend.apiKeys) throw new HttpError(404, `Backend ${ctx.state.backend.name} takes no API keys (api_keys="on" in its backend.xml)`);
    return ctx.state.backend;
  };

  router.get('/b/:backend/keys', async (ctx) => {
    const backend = backendOf(ctx);
    const user = typeof ctx.query.user === 'string' && /^[0-9]{1,10}$/.test(ctx.query.user) ? ctx.query.user : undefined;
    ctx.body = { keys: await keys.list({ backend: backend.name, userId: user }) };
  });

  router.post('/b/:backend/keys', console.json, async (ctx) => {
    const backend = backendOf(ctx);
    const body = ((ctx.request as { body?: unknown }).body ?? {}) as { user_id?: unknown; name?: unknown; roles?: unknown; expires?: unknown; rate?: unknown };
    const user = await console.existingUser(String(body.user_id ?? ''));
    (await RoleScope.of(backend, options.backends(), store)).requireChangeable(user);
    const roles = Array.isArray(body.roles) ? body.roles.filter((role): role is string => typeof role === 'string') : [];
    const expires = typeof body.expires === 'string' && body.expires !== '' ? parseExpiry(body.expires) : null;
    if (expires === undefined) throw new HttpError(400, 'expires is an ISO time or 30d, 12h, 90m');
    const wanted = {
      backend: backend.name,
      userId: String(user.user_id),
      name: typeof body.name === 'string' ? body.name : '',
      roles,
      expires,
      rate: typeof body.rate === 'string' && body.rate !== '' ? body.rate : null,
    };
    const checked = checkNewKey(
      wanted,
      user.roles,
      options.backends().map((served) => served.consoleRole),
    );
    if (!checked.ok) throw new HttpError(400, checked.message);
    const made = await keys.create(wanted);
    await console.record(ctx, 'create key', user.user_name, `${wanted.name} (${made.prefix}...)`);
    ctx.status = 201;
    ctx.body = { id: made.id, key: made.key, prefix: made.prefix };
  });

  router.post('/b/:backend/keys/:id/revoke', async (ctx) => {
    const backend = backendOf(ctx);
    const id = Number(ctx.params.id);
    const [row] = Number.isSafeInteger(id) ? await keys.list({ backend: backend.name, id }) : [];
    if (!row) throw new HttpError(404, `No key ${ctx.params.id} on ${backend.name}`);
    if (row.user_name !== null) {
      const user = await console.existingUser(row.user_id);
      (await RoleScope.of(backend, options.backends(), store)).requireChangeable(user);
    }
    if (!(await keys.revoke(id, backend.name))) throw new HttpError(409, `Key ${id} is revoked already`);
    await console.record(ctx, 'revoke key', row.user_name ?? row.user_id, `${row.name} (${row.prefix}...)`);
    ctx.body = { revoked: id };
  });
}

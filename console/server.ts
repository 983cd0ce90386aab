import Router from '@koa/router';
import type Koa from 'koa';
import { principalName } from '../runtime/auth/scheme.js';
import { tokenShapeA } from '../runtime/auth/tokens/token-a.js';
import { credentialsOf } from '../runtime/auth/transport/transport.js';
import { fieldReader } from '../runtime/body.js';
import { HttpError } from '../runtime/errors.js';
import { Console, type ConsoleOptions, manageable, type State } from './context.js';
import { eventsApi } from './events-api.js';
import { keysApi } from './keys-api.js';
import { consolePage } from './page.js';
import { resourcesApi } from './resources-api.js';
import { usersApi } from './users-api.js';

export type { ConsoleOptions } from './context.js';

/**
 * The admin console (docs/internals/contract.md §6, §8) at `{base}/_console/`: the
 * page, and its JSON API under `{base}/_console/api/`. Every API call but the
 * list of backends authenticates with the backend's own scheme, through the
 * server's own guard, and needs the backend's console role, checked here on
 * the server: a person's own credentials, never an API key. Credentials
 * travel only in the Authorization header the page sets from memory: no
 * cookie, so no request forged from another site can carry them.
 */
export function consoleMiddleware(options: ConsoleOptions): Koa.Middleware {
  const prefix = `${options.basePath}/_console`;
  const shared = new Console(options);
  const router = new Router<State>({ prefix: `${prefix}/api` });

  router.get('/backends', (ctx) => {
    // Public: the sign-in screen needs each backend's scheme; the names are in every URL anyway.
    ctx.body = { backends: options.backends().map((backend) => ({ name: backend.name, authScheme: backend.authScheme, consoleRole: backend.consoleRole })) };
  });

  // Signing in to a Bearer backend: its token request (shape A), here too, because with CONSOLE=admin the page
  // is served on the admin port, where the API is not. The same guard, limits and counts as the API's.
  const readFields = fieldReader();
  router.post('/token/:backend', async (ctx) => {
    const backend = options.backends().find((candidate) => candidate.name === ctx.params.backend);
    if (!backend || backend.authScheme !== 'Bearer') throw new HttpError(404, 'No such backend, or it issues no tokens');
    const guard = options.server()?.guardFor(backend.name);
    if (!guard) throw new HttpError(503, 'The server is starting: try again in a moment', { 'Retry-After': '1' });
    // The console's page is its own origin: no other site's page may sign in through it.
    await tokenShapeA(guard, readFields, { requireTls: options.requireTlsForCredentials ?? false, allowedOrigins: new Set() })(ctx as never, async () => {});
  });

  // Everything below: the backend's own credentials and its console role.
  router.use('/b/:backend', async (ctx, next) => {
    const backend = options.backends().find((candidate) => candidate.name === ctx.params.backend);
    if (!backend || backend.authScheme === null) throw new HttpError(404, 'No such backend, or it has no authentication');
    const guard = options.server()?.guardFor(backend.name);
    if (!guard) throw new HttpError(503, 'The server is starting: try again in a moment', { 'Retry-After': '1' });
    // Changes need a header no form and no other site can send: with Basic credentials a browser may
    // remember and resend them by itself, which would otherwise let a cross-site form act as the operator.
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.get('X-XMLRest-Console') !== '1') {
      throw new HttpError(403, 'Console changes need the X-XMLRest-Console header', {}, 'console_header');
    }
    try {
      // A person only: an API key, in any header, opens no console, whatever roles it lists (runtime/auth/guard.ts).
      const { authorization, apiKey } = credentialsOf(ctx);
      const operator = await guard.identifyPerson(authorization, [backend.consoleRole], ctx.ip, apiKey);
      // An outside issuer's user is named with its issuer, as the log and the audit name it (runtime/auth/scheme.ts).
      ctx.state.operator = principalName(operator);
      ctx.state.credential = operator.credential;
    } catch (error) {
      // No WWW-Authenticate: a browser would offer its own login box, then resend what it was told everywhere.
      if (error instanceof HttpError) throw new HttpError(error.status, error.message, {}, error.reason);
      throw error;
    }
    ctx.state.backend = backend;
    ctx.set('Cache-Control', 'no-store');
    await next();
  });

  router.get('/b/:backend/me', (ctx) => {
    ctx.body = {
      backend: ctx.state.backend.name,
      consoleRole: ctx.state.backend.consoleRole,
      manageable: manageable(ctx.state.backend),
      apiKeys: ctx.state.backend.apiKeys,
      operator: ctx.state.operator,
    };
  });
  resourcesApi(router, shared);
  usersApi(router, shared);
  keysApi(router, shared);
  eventsApi(router, shared);
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
}

import cors from '@koa/cors';
import type Koa from 'koa';
import { type CredentialRules, screenCredentials } from '../auth/transport/transport.js';
import { frontDoor, type InFlight } from '../front-door.js';
import type { Readiness } from '../health.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ServerOptions } from './options.js';

/**
 * The layers in front of the routes: the proxies trusted, the front door, CORS when origins are allowed, the rules
 * for credentials, then the middleware given (the console). Returns the rules, which the routes and the admin
 * listener apply too.
 */
export function frontLayers(
  app: Koa,
  options: ServerOptions,
  { logger, metrics, readiness, inFlight }: { logger: Logger; metrics: Metrics; readiness: Readiness; inFlight: InFlight },
): { credentials: CredentialRules; screen: (ctx: Koa.Context) => void } {
  // Errors are logged by the front door, with their request id; Koa's own printer would log them again.
  app.silent = true;
  // Client address and scheme come from X-Forwarded-* only when told proxies stand in front, and then only
  // from the entry the outermost of them added (that many from the right): the ones before it are whatever the
  // client sent. Koa takes the first of the last `maxIpsCount` entries.
  const hops = options.proxyHops ?? (options.trustProxy ? 1 : 0);
  app.proxy = hops > 0;
  app.maxIpsCount = hops;
  // The rules for credentials, in whichever header they travel (HTTPS when required, no write from another
  // site's page), before the console and the routes so that no step runs for a refused request. They run inside
  // a layer that is there anyway, never one of their own: a request without credentials pays two lookups.
  const credentials: CredentialRules = { requireTls: options.requireTlsForCredentials ?? false, allowedOrigins: new Set(options.corsOrigins) };
  const screen = (ctx: Koa.Context) => screenCredentials(ctx, credentials);
  const corsOn = credentials.allowedOrigins.size > 0;
  // Request id and log line, in-flight count, security headers, health and readiness, error bodies: one
  // layer (front-door.ts). The docs and console pages add helmet's set for HTML and their own CSP.
  app.use(frontDoor({ logger, metrics, readiness, inFlight, screen: corsOn ? undefined : screen, tracing: options.tracing }));
  if (corsOn) {
    const allowCors = cors({
      origin: (ctx) => (credentials.allowedOrigins.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
      // A page may revalidate a GET (If-None-Match, ETag), write under a precondition (If-Match), retry its POSTs with an
      // Idempotency-Key and read whether an answer was a replay (docs/internals/contract.md §15).
      allowHeaders: ['Authorization', 'Content-Type', 'X-API-Key', 'If-None-Match', 'If-Match', 'Idempotency-Key'],
      exposeHeaders: ['X-Request-Id', 'WWW-Authenticate', 'ETag', 'Idempotent-Replayed', 'Retry-After'],
    }) as Koa.Middleware;
    // Inside CORS's layer: a page of an allowed origin can read the 403 it gets (over plain HTTP, say).
    app.use((ctx, next) =>
      allowCors(ctx, () => {
        screen(ctx);
        return next();
      }),
    );
  }
  for (const middleware of options.middleware ?? []) app.use(middleware);
  return { credentials, screen };
}

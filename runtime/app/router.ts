import type Koa from 'koa';
import type { AuditTrail } from '../audit/index.js';
import { Guard } from '../auth/guard.js';
import type { IssuerKeyRing } from '../auth/issuer/index.js';
import type { CredentialRules } from '../auth/transport/transport.js';
import { fieldReader } from '../body.js';
import type { BackendModule } from '../contract.js';
import type { Events } from '../events/index.js';
import type { RateLimiter } from '../limits/index.js';
import { CursorKey, Lists, pagedBackends } from '../lists/index.js';
import type { Logger } from '../log.js';
import type { McpTool } from '../mcp/tools.js';
import type { Metrics } from '../metrics.js';
import { buildRoutes, type Routes } from '../routes.js';
import type { ServerOptions } from './options.js';
import type { SharedAuth } from './shared-auth.js';

export interface RouterParts extends SharedAuth {
  basePath: string;
  issuerKeys: IssuerKeyRing;
  credentials: CredentialRules;
  metrics: Metrics;
  rateLimiter: RateLimiter;
  events: Events;
  audit: AuditTrail;
  logger: Logger;
}

/**
 * The generated routes, mounted last on `app`: built from the backends given (a guard for each), and built again
 * on a reload, each request taking the routes current when it starts.
 */
export function reloadableRoutes(
  app: Koa,
  options: ServerOptions,
  {
    basePath,
    jwtKey,
    keyFor,
    revocations,
    limiter,
    cache,
    hashing,
    issuerKeys,
    apiKeys,
    credentials,
    metrics,
    rateLimiter,
    events,
    audit,
    logger,
  }: RouterParts,
): {
  guardFor(backend: string): Guard | undefined;
  toolsFor(backend: string): Promise<readonly McpTool[]> | undefined;
  reload(backends: readonly BackendModule[], openapi?: object): void;
} {
  // Page cursors are signed with a key derived from the same secret (runtime/lists/cursor.ts), made once.
  let cursorKey: CursorKey | null = null;
  const lists = new Lists(() => (cursorKey ??= new CursorKey(jwtKey().all)));

  const readFields = fieldReader();
  const build = (backends: readonly BackendModule[], openapi: object | undefined): Routes & { guards: Map<string, Guard> } => {
    // A webhook whose secret is missing or malformed refuses the start (or the reload), naming the variable.
    events.configure(backends);
    // A paged route signs its cursors with the server's key: without one, refuse to start (or reload) now.
    if (pagedBackends(backends).length > 0) {
      cursorKey ??= new CursorKey(jwtKey().all);
    }
    const guards = new Map(
      backends.map((backend) => [
        backend.name,
        new Guard(backend, options.database, { key: keyFor(backend), revocations, limiter, cache, hashing, issuerKeys, apiKeys }),
      ]),
    );
    const routes = buildRoutes({
      backends,
      guards,
      db: options.database,
      readFields,
      basePath,
      maxParams: options.maxParams ?? 100,
      etags: options.etags,
      credentials,
      openapi,
      metrics,
      limiter: rateLimiter,
      events,
      audit,
      lists,
      logger,
    });
    return { ...routes, guards };
  };
  let current = build(options.backends, options.openapi);
  events.start();
  // Each request takes the routes current when it starts, so a reload never cuts one off.
  app.use((ctx, next) => {
    const { routes, unmatched } = current;
    return routes(ctx, () => unmatched(ctx, next) as Promise<void>);
  });
  return {
    guardFor: (backend) => current.guards.get(backend),
    toolsFor: (backend) => current.tools.get(backend),
    reload: (backends, openapi) => {
      current = build(backends, openapi);
    },
  };
}

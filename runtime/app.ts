import Koa from 'koa';
import { adminAppMaker } from './app/admin.js';
import { pruneExpired, rateLimiterFor, watchRetries } from './app/database.js';
import { frontLayers } from './app/front.js';
import type { ServerOptions } from './app/options.js';
import { serverReadiness } from './app/readiness.js';
import { eventsAndAudit } from './app/records.js';
import { reloadableRoutes } from './app/router.js';
import { issuerKeyRing, sharedAuth } from './app/shared-auth.js';
import type { Guard } from './auth/guard.js';
import type { IssuerKeyRing } from './auth/issuer/index.js';
import type { Revocations } from './auth/tokens/revocations.js';
import type { BackendModule } from './contract.js';
import { InFlight } from './front-door.js';
import type { Readiness } from './health.js';
import { STOPPED } from './listen.js';
import { createLogger } from './log.js';
import type { McpTool } from './mcp/tools.js';
import { Metrics } from './metrics.js';
import { Peers } from './peers.js';

export type { ServerOptions } from './app/options.js';

export interface ReloadableApp {
  app: Koa;
  metrics: Metrics;
  /** Whether the server should get traffic (`/readyz`); `stop()` it when shutdown begins. */
  readiness: Readiness;
  /** Resolves once no request is in flight, or after `timeoutMs`; false when requests were still running. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Read again now, rather than at the next poll (after a revocation made here). */
  revocations: Revocations;
  /** The guard of a backend served now, shared with other doors to the same users (the console). */
  guardFor(backend: string): Guard | undefined;
  /**
   * The tools of a backend's MCP endpoint served now (docs/internals/contract.md §16), once runtime/mcp/ is loaded;
   * undefined without one.
   */
  toolsFor(backend: string): Promise<readonly McpTool[]> | undefined;
  /** The other servers on this database; `leave()` when a graceful stop begins. */
  peers: Peers;
  /** Outside issuers' keys (docs/internals/contract.md §9): start-up waits for their first fetch. */
  issuerKeys: IssuerKeyRing;
  /**
   * The admin listener's app (ADMIN_PORT): health, readiness and metrics, and the middleware given (the
   * console, with CONSOLE=admin), behind the same front door and transport rule as the API.
   */
  adminApp(middleware?: readonly Koa.Middleware[]): Koa;
  /** Stops the revocation poll and the announcements (the HTTP server is closed by whoever listens). */
  close(): void;
  /**
   * Ends the background work that writes to the database, before the pool closes (a graceful stop): no more
   * event claims, the deliveries in flight finish and their outcomes are written, and the audit rows waiting
   * are written.
   */
  settle(): Promise<void>;
  /**
   * Swaps in new backends (and OpenAPI document) for the requests that start
   * from now on; requests already running finish on the routes they began with.
   */
  reload(backends: readonly BackendModule[], openapi?: object): void;
}

export function createApp(options: ServerOptions): Koa {
  return createReloadableApp(options).app;
}

/**
 * The server: security headers, CORS, the transport rule, then the console
 * (or other middleware), then the generated routes, which can be replaced
 * while it runs (`npm run dev`, the console). Its parts are made in runtime/app/,
 * each by what it wires.
 */
export function createReloadableApp(options: ServerOptions): ReloadableApp {
  const logger = options.logger ?? createLogger();
  const basePath = normaliseBasePath(options.basePath);
  const { jwtKey, keyFor, cache, hashing, revocations, limiter, apiKeys } = sharedAuth(options, logger);
  const peers = new Peers(options.database, logger);
  if ((options.announceMs ?? 5000) > 0) void peers.start(options.announceMs ?? 5000);

  const metrics = new Metrics(options.database, hashing);
  const { events, audit, housekeeping } = eventsAndAudit(options, logger, metrics, peers);
  watchRetries(options, metrics, logger);
  const issuerKeys = issuerKeyRing(options, logger, metrics);
  const readiness = serverReadiness(options, issuerKeys);
  const inFlight = new InFlight();
  const rateLimiter = rateLimiterFor(options, metrics, logger);
  const pruning = pruneExpired(options, rateLimiter);

  const app = new Koa();
  // Background work ends with the server that `listen` started (or with `close()` below).
  app.once(STOPPED, () => {
    revocations.stop();
    peers.stop();
    clearInterval(pruning);
    housekeeping.stop();
    apiKeys.stop();
    void apiKeys.flush();
    void events.stop();
    void audit.stop();
  });
  const { credentials, screen } = frontLayers(app, options, { logger, metrics, readiness, inFlight });
  const router = reloadableRoutes(app, options, {
    basePath,
    jwtKey,
    keyFor,
    cache,
    hashing,
    revocations,
    limiter,
    apiKeys,
    issuerKeys,
    credentials,
    metrics,
    rateLimiter,
    events,
    audit,
    logger,
  });
  return {
    app,
    metrics,
    readiness,
    drain: (timeoutMs) => inFlight.drained(timeoutMs),
    revocations,
    guardFor: router.guardFor,
    toolsFor: router.toolsFor,
    peers,
    issuerKeys,
    adminApp: adminAppMaker(app, { logger, metrics, readiness, screen }),
    close: () => {
      revocations.stop();
      peers.stop();
      clearInterval(pruning);
      housekeeping.stop();
      apiKeys.stop();
    },
    settle: async () => {
      await Promise.all([events.stop(), audit.stop()]);
    },
    reload: router.reload,
  };
}

function normaliseBasePath(basePath: string | undefined): string {
  if (!basePath || basePath === '/') return '';
  return '/' + basePath.replace(/^\/+|\/+$/g, '');
}

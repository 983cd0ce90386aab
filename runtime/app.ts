import cors from '@koa/cors';
import Koa from 'koa';
import { AuditTrail } from './audit/index.js';
import { ApiKeys } from './auth/keys/api-key.js';
import { CredentialCache } from './auth/passwords/credential-cache.js';
import { DatabaseFailureStore } from './auth/limits/failure-store.js';
import { Guard } from './auth/guard.js';
import { Hashing } from './auth/passwords/hashing.js';
import { IssuerKeyRing, type KeyTimings } from './auth/issuer/index.js';
import { JwtKey } from './auth/tokens/jwt.js';
import { LoginLimiter, type LoginLimits } from './auth/limits/limiter.js';
import { Revocations } from './auth/tokens/revocations.js';
import { pruneSessions } from './auth/sessions/session-tables.js';
import { type CredentialRules, screenCredentials } from './auth/transport/transport.js';
import { fieldReader } from './body.js';
import type { BackendModule } from './contract.js';
import { type Database, errnoOf, NO_TABLE } from './db/index.js';
import { type DeliverySettings, Events } from './events/index.js';
import { frontDoor, InFlight } from './front-door.js';
import { healthRoutes, Readiness } from './health.js';
import { Housekeeping } from './housekeeping.js';
import { DatabaseLeases, RateLimiter } from './limits/index.js';
import { STOPPED } from './listen.js';
import { CursorKey, Lists, pagedBackends } from './lists/index.js';
import { createLogger, type Logger } from './log.js';
import { Metrics } from './metrics.js';
import { Peers } from './peers.js';
import { buildRoutes, type Routes } from './routes.js';
import type { Tracing } from './tracing/index.js';

export interface ServerOptions {
  backends: readonly BackendModule[];
  database: Database;
  /** Required when any backend uses Bearer tokens; at least 32 bytes. */
  jwtSecret?: string | undefined;
  /** Prefix of every path, such as `/api`. */
  basePath?: string | undefined;
  /** The generated OpenAPI document; when given, served with an API reference page. */
  openapi?: object | undefined;
  /** More middleware, run before the generated routes and kept across reloads (the admin console). */
  middleware?: readonly Koa.Middleware[];
  logger?: Logger;
  /** Origins allowed to call from a browser (CORS); none by default, which leaves CORS off. */
  corsOrigins?: readonly string[];
  /** Most query-string and body fields one request may carry; default 100. */
  maxParams?: number;
  /** How often to read token revocations from the database; default 5 s, 0 never. */
  revocationPollMs?: number;
  /** How often to announce this server to the others on its database (xmlrest_server); default 5 s, 0 never. */
  announceMs?: number;
  /** Failed-login limits; default 10 per user name from one address and 50 per address in 5 minutes. */
  loginLimits?: LoginLimits;
  /** Where failure counts live: this process (default), or the database, shared by every server. */
  loginCounters?: 'memory' | 'database';
  /**
   * How many proxies in front of the server append to X-Forwarded-For: the client address is that many entries
   * from the right, and X-Forwarded-Proto is trusted. Default 0 (neither header is read), or 1 with `trustProxy`.
   */
  proxyHops?: number;
  /** The older form of `proxyHops: 1`. */
  trustProxy?: boolean;
  /** Refuse credentials sent over plain HTTP from anywhere but loopback. */
  requireTlsForCredentials?: boolean;
  /** Outside issuers' keys: how long the last good ones serve through an outage, and how often they may be fetched. */
  issuerKeyTimings?: KeyTimings;
  /** Environment values by name: each webhook's `secret` names one (docs/contract.md §12). Default none. */
  webhookSecrets?: Readonly<Record<string, string | undefined>>;
  /** Events: whether this server delivers (default yes), the delivery timings and bounds, the largest event. */
  events?: { deliver?: boolean; delivery?: Partial<DeliverySettings>; maxBytes?: number };
  /** The API audit: how many days its rows are kept (default 90). */
  audit?: { retentionDays?: number };
  /** Each request a span, each SQL step a child span (runtime/tracing/, `startTracing`); none by default. */
  tracing?: Tracing | undefined;
}

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
  /** The other servers on this database; `leave()` when a graceful stop begins. */
  peers: Peers;
  /** Outside issuers' keys (docs/contract.md §9): start-up waits for their first fetch. */
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
 * while it runs (`npm run dev`, the console).
 */
export function createReloadableApp(options: ServerOptions): ReloadableApp {
  const logger = options.logger ?? createLogger();
  const basePath = normaliseBasePath(options.basePath);
  // Made when a Bearer backend first needs it: a short or missing secret refuses to start
  // (or to reload) rather than serve forgeable tokens.
  let key: JwtKey | null = null;
  const jwtKey = () => (key ??= new JwtKey(options.jwtSecret ?? ''));
  const keyFor = (backend: BackendModule) => (backend.authScheme === 'Bearer' ? jwtKey() : key);
  // Page cursors are signed with a key derived from the same secret (runtime/lists/cursor.ts), made once.
  let cursorKey: CursorKey | null = null;
  const lists = new Lists(() => (cursorKey ??= new CursorKey(jwtKey().all)));
  // One cache, one limiter and one bound on hashing for the server's life, shared by every backend: reloading
  // routes must not reset the count of failed logins, and a flood on one backend must not take every core.
  const cache = new CredentialCache();
  const hashing = new Hashing();
  const revocations = new Revocations(options.database, logger);
  const limiter = new LoginLimiter(options.loginLimits, options.loginCounters === 'database' ? new DatabaseFailureStore(options.database) : undefined);
  if ((options.revocationPollMs ?? 5000) > 0) void revocations.start(options.revocationPollMs ?? 5000);
  const apiKeys = new ApiKeys(options.database, logger, limiter);
  if ((options.revocationPollMs ?? 5000) > 0) apiKeys.start();
  const peers = new Peers(options.database, logger);
  if ((options.announceMs ?? 5000) > 0) void peers.start(options.announceMs ?? 5000);

  const metrics = new Metrics(options.database, hashing);
  // Events and the audit (docs/contract.md §12): one of each for the server's life; a reload reconfigures the webhooks.
  const events = new Events({
    database: options.database,
    logger,
    registry: metrics.registry,
    secrets: options.webhookSecrets ?? {},
    serverId: peers.id,
    ...options.events,
  });
  const audit = new AuditTrail(options.database, logger, metrics.registry, options.audit?.retentionDays);
  // Delivered events and audit rows past their retention: pruned by one server at a time, a batch a tick.
  const housekeeping = new Housekeeping(peers, logger);
  housekeeping.start([events.pruning(), audit.pruning()]);
  options.database.on('retry', ({ reason, attempt }) => {
    metrics.retried(reason);
    logger.warn({ reason, attempt }, 'database operation run again');
  });
  const issuerKeys = new IssuerKeyRing(
    {
      fetched: (iss, outcome) => metrics.keyFetched(iss, outcome),
      failed: (iss, problem) => logger.warn({ issuer: iss, problem }, "identity provider's keys not fetched"),
    },
    options.issuerKeyTimings,
  );
  // Ready when the database answers and every outside issuer's keys can serve (§9: /readyz names the issuer).
  const readiness = new Readiness({
    check: async () => {
      await options.database.ping(1000);
      const keys = issuerKeys.unavailable();
      if (keys !== undefined) throw new Error(keys);
    },
  });
  const inFlight = new InFlight();
  // One limiter for the server's life: a reload keeps every caller's count and lease.
  let quietUntil = 0;
  const rateLimiter = new RateLimiter(new DatabaseLeases(options.database), {
    failedOpen: (error) => {
      metrics.limitFailedOpen();
      // Said once in 10 s at most: a database that is down would otherwise write a line per lease.
      if (Date.now() < quietUntil) return;
      quietUntil = Date.now() + 10_000;
      const missing = errnoOf(error) === NO_TABLE;
      logger.warn(
        { error: (error as Error).message },
        missing
          ? 'rate limits admit every call: the table xmlrest_rate_limit is missing (run xmlrest db init)'
          : 'rate limits admit every call for a second: the database did not answer',
      );
    },
  });
  // Rows of rate windows and sessions long over: removed now and then by every server (a delete that finds nothing is cheap).
  const pruning = setInterval(() => {
    void rateLimiter.prune().catch(() => undefined);
    void pruneSessions(options.database).catch(() => undefined);
  }, 600_000);
  pruning.unref();

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
      allowHeaders: ['Authorization', 'Content-Type', 'X-API-Key'],
      exposeHeaders: ['X-Request-Id', 'WWW-Authenticate'],
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
      credentials,
      openapi,
      metrics,
      limiter: rateLimiter,
      events,
      audit,
      lists,
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
    app,
    metrics,
    readiness,
    drain: (timeoutMs) => inFlight.drained(timeoutMs),
    revocations,
    guardFor: (backend) => current.guards.get(backend),
    peers,
    issuerKeys,
    adminApp: (middleware = []) => {
      const admin = new Koa();
      admin.silent = true;
      admin.proxy = app.proxy;
      admin.maxIpsCount = app.maxIpsCount;
      if (middleware.length > 0) {
        // Requests other than probes and scrapes (the console) get what the API's get: an id, a log line, the
        // API's headers, JSON errors, the rules for credentials. A listener of health checks alone stays as quiet as before.
        admin.use(frontDoor({ logger, metrics, readiness, inFlight: new InFlight(), screen }));
      }
      admin.use(healthRoutes(readiness, metrics));
      for (const more of middleware) admin.use(more);
      admin.use((ctx) => {
        ctx.status = 404;
        ctx.body = { message: 'Not found', status: 404 };
      });
      return admin;
    },
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
    reload: (backends, openapi) => {
      current = build(backends, openapi);
    },
  };
}

function normaliseBasePath(basePath: string | undefined): string {
  if (!basePath || basePath === '/') return '';
  return '/' + basePath.replace(/^\/+|\/+$/g, '');
}

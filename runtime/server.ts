import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import cors from '@koa/cors';
import helmet from 'koa-helmet';
import { Authenticator } from './auth/authenticator.js';
import { MAX_PASSWORD_BYTES, MAX_USER_BYTES } from './auth/bounds.js';
import { CredentialCache } from './auth/credential-cache.js';
import { DatabaseFailureStore, LoginLimiter, type LoginLimits } from './auth/limiter.js';
import type { Database } from './db.js';
import { badRequest, httpErrorFromDatabase, HttpError } from './errors.js';
import { mountDocs } from './docs.js';
import { JwtKey } from './jwt.js';
import { Revocations } from './revocations.js';
import { createLogger, type Logger } from './log.js';
import { readParams } from './params.js';
import type { BackendModule, ErrorBody, HttpMethod, Operation, ParamSpecs, PluginContext, Queryable, RequestScope, ResourceModule } from './contract.js';

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
  /** Failed-login limits; default 10 per user name and 50 per address in 5 minutes. */
  loginLimits?: LoginLimits;
  /** Where failure counts live: this process (default), or the database, shared by every server. */
  loginCounters?: 'memory' | 'database';
  /** Trust X-Forwarded-For and X-Forwarded-Proto: only behind a proxy that sets them. */
  trustProxy?: boolean;
  /** How many trusted proxies append to X-Forwarded-For; default 1. */
  proxyHops?: number;
  /** Refuse credentials sent over plain HTTP from anywhere but loopback. */
  requireTlsForCredentials?: boolean;
}

interface State {
  requestId: string;
}
type Context = Koa.ParameterizedContext<State>;
type BodyParser = ReturnType<typeof bodyParser>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Emitted on the Koa app when the server `listen` started closes: its background work stops too. */
const STOPPED = 'xmlrest:stopped';

/** The path a resource is served at (seed §4): `{base}/<backend>/v<version>/<name>`. */
export function resourcePath(basePath: string, backend: string, resource: ResourceModule): string {
  return `${basePath}/${backend}/v${resource.version}/${resource.name}`;
}

export function createApp(options: ServerOptions): Koa<State> {
  return createReloadableApp(options).app;
}

export interface ReloadableApp {
  app: Koa<State>;
  /** Read again now, rather than at the next poll (after a revocation made here). */
  revocations: Revocations;
  /** The authenticator of a backend served now, shared with other doors to the same users (the console). */
  authenticatorFor(backend: string): Authenticator | undefined;
  /** Stops the revocation poll (the HTTP server is closed by whoever listens). */
  close(): void;
  /**
   * Swaps in new backends (and OpenAPI document) for the requests that start
   * from now on; requests already running finish on the routes they began with.
   */
  reload(backends: readonly BackendModule[], openapi?: object): void;
}

/** The server with routes that can be replaced while it runs (`npm run dev`). */
export function createReloadableApp(options: ServerOptions): ReloadableApp {
  const logger = options.logger ?? createLogger();
  const basePath = normaliseBasePath(options.basePath);
  // Made when a Bearer backend first needs it: a short or missing secret refuses to start
  // (or to reload) rather than serve forgeable tokens.
  let key: JwtKey | null = null;
  const keyFor = (backend: BackendModule) => (backend.authScheme === 'Bearer' ? (key ??= new JwtKey(options.jwtSecret ?? '')) : key);
  // One cache and one limiter for the server's life, shared by every backend: reloading routes must not
  // reset the count of failed logins, and a change of a user's roles must reach every backend's cache.
  const credentials = new CredentialCache();
  const revocations = new Revocations(options.database, logger, (userId) => credentials.forget(userId));
  const limiter = new LoginLimiter(options.loginLimits, options.loginCounters === 'database' ? new DatabaseFailureStore(options.database) : undefined);
  if ((options.revocationPollMs ?? 5000) > 0) void revocations.start(options.revocationPollMs ?? 5000);

  const app = new Koa<State>();
  // Background work ends with the server that `listen` started (or with `close()` below).
  app.once(STOPPED, () => revocations.stop());

  // Errors are logged by errorMiddleware, with their request id; Koa's own printer would log them again.
  app.silent = true;
  // Client address and scheme come from X-Forwarded-* only when told to trust a proxy, and then only
  // from the entry that proxy added (the rightmost): the ones before it are whatever the client sent.
  app.proxy = options.trustProxy ?? false;
  app.maxIpsCount = options.proxyHops ?? 1;
  app.use(errorMiddleware(logger));
  // Security headers on every response (helmet's defaults: no sniffing, no framing, HSTS, a strict CSP
  // for anything a browser renders); the docs and console pages set their own CSP.
  app.use(helmet() as Koa.Middleware<State>);
  if (options.corsOrigins && options.corsOrigins.length > 0) {
    const allowed = new Set(options.corsOrigins);
    app.use(cors({ origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''), allowHeaders: ['Authorization', 'Content-Type'], exposeHeaders: ['X-Request-Id', 'WWW-Authenticate'] }) as Koa.Middleware<State>);
  }
  if (options.requireTlsForCredentials) {
    app.use((ctx, next) => {
      if (ctx.headers.authorization !== undefined) refuseInsecureCredentials(ctx);
      return next();
    });
  }
  const maxParams = options.maxParams ?? 100;
  for (const middleware of options.middleware ?? []) app.use(middleware as Koa.Middleware<State>);

  // Parsed only when a handler reads parameters, so that routing and auth answer first (contract §3).
  const parseBody = bodyParser({ enableTypes: ['json', 'form'], jsonLimit: '1mb', formLimit: '1mb', strict: true });

  const build = (backends: readonly BackendModule[], openapi: object | undefined) => {
    const router = new Router<State>();
    const allowed = new Map<string, string>();
    const authenticators = new Map<string, Authenticator>();
    for (const backend of backends) {
      const auth = new Authenticator(backend, options.database, { key: keyFor(backend), revocations, limiter, credentials });
      authenticators.set(backend.name, auth);
      for (const resource of backend.resources) {
        mountResource(maxParams, options.requireTlsForCredentials ?? false, router, allowed, resourcePath(basePath, backend.name, resource), resource, auth, options.database, parseBody);
      }
      if (backend.authScheme === 'Bearer') mountTokenShapeA(router, allowed, `${basePath}/${backend.name}`, auth, parseBody, options.requireTlsForCredentials ?? false);
    }
    if (openapi) mountDocs(router, basePath, openapi);
    return { routes: router.routes(), unmatched: unmatched(allowed), authenticators };
  };
  let current = build(options.backends, options.openapi);
  // Each request takes the routes current when it starts, so a reload never cuts one off.
  app.use((ctx, next) => {
    const { routes, unmatched: fallback } = current;
    return routes(ctx as Parameters<typeof routes>[0], () => fallback(ctx, next) as Promise<void>);
  });
  return {
    app,
    revocations,
    authenticatorFor: (backend) => current.authenticators.get(backend),
    close: () => revocations.stop(),
    reload: (backends, openapi) => {
      current = build(backends, openapi);
    },
  };
}

/**
 * The scope a generated handler runs with. A class rather than an object of
 * closures: one small allocation per request on the hot path.
 */
class Scope implements RequestScope {
  constructor(
    private readonly ctx: Context,
    private readonly auth: Authenticator,
    readonly db: Database,
    private readonly parseBody: BodyParser,
    private readonly maxParams: number,
    private readonly requireTls: boolean,
  ) {}

  authenticate(role: string): Promise<string> {
    return this.auth.authenticate(this.ctx.headers.authorization, role, this.ctx.ip);
  }

  async params<Params>(specs: ParamSpecs): Promise<Params> {
    return readParams<Params>(this.ctx.query, await requestBody(this.ctx, this.parseBody, this.maxParams), specs);
  }

  transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  get plugin(): PluginContext {
    return pluginContext(this.auth, this.ctx.state.requestId, this.ctx.ip, () => this.requireTls && refuseInsecureCredentials(this.ctx));
  }
}

function mountResource(
  maxParams: number,
  requireTls: boolean,
  router: Router<State>,
  allowed: Map<string, string>,
  path: string,
  resource: ResourceModule,
  auth: Authenticator,
  database: Database,
  parseBody: BodyParser,
): void {
  const methods = Object.keys(resource.operations) as HttpMethod[];
  for (const method of methods) {
    const operation = resource.operations[method] as Operation;
    router.register(path, [method], async (ctx) => {
      const result = await operation.handler(new Scope(ctx, auth, database, parseBody, maxParams, requireTls));
      ctx.status = operation.status;
      ctx.body = result;
    });
  }
  allowed.set(path, allowHeader(methods));
}

const SHAPE_A_FIELDS = {
  auth: { kind: 'string', nullable: false, maxBytes: 16 },
  userid: { kind: 'string', nullable: false, maxBytes: MAX_USER_BYTES },
  password: { kind: 'string', nullable: false, maxBytes: MAX_PASSWORD_BYTES },
} as const satisfies ParamSpecs;

/** Token shape A (contract §5): `POST {base}/<backend>/` with `auth=bearer&userid=..&password=..`. */
function mountTokenShapeA(router: Router<State>, allowed: Map<string, string>, backendPath: string, auth: Authenticator, parseBody: BodyParser, requireTls: boolean): void {
  allowed.set(`${backendPath}/`, allowHeader(['POST']));
  // One route answers with and without the trailing slash: the router is not strict about it.
  router.post(backendPath, async (ctx) => {
    if (requireTls) refuseInsecureCredentials(ctx);
    // Body only: a password in the query string would end up in access logs and browser history.
    // Bounded before anything else happens: no query and no hash for an over-long name or password.
    const fields = readParams<Record<keyof typeof SHAPE_A_FIELDS, string>>({}, await requestBody(ctx, parseBody, 10), SHAPE_A_FIELDS);
    if (fields.auth.toLowerCase() !== 'bearer') throw badRequest("Parameter 'auth' must be 'bearer'");
    const token = await auth.issueForCredentials(fields.userid, fields.password, ctx.ip);
    ctx.status = 200;
    ctx.body = { token, type: 'Bearer' };
  });
}

function allowHeader(methods: readonly HttpMethod[]): string {
  return [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
}

/**
 * After the router: a known path with another method is 405 with Allow
 * (OPTIONS answers 204 with the same list); anything else is 404. One map
 * lookup, so that matched requests pay nothing for it.
 */
function unmatched(allowed: ReadonlyMap<string, string>): Koa.Middleware<State> {
  return (ctx) => {
    // The router is not strict about one trailing slash; neither is this.
    const allow = allowed.get(ctx.path) ?? allowed.get(ctx.path.replace(/\/$/, '')) ?? allowed.get(`${ctx.path}/`);
    if (allow === undefined) throw new HttpError(404, 'Not found');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    throw new HttpError(405, `Method ${ctx.method} not allowed`, { Allow: allow });
  };
}

async function requestBody(ctx: Context, parseBody: BodyParser, maxParams: number): Promise<unknown> {
  if (Object.keys(ctx.query).length > maxParams) throw badRequest(`Too many parameters: at most ${maxParams}`);
  const request = ctx.request as typeof ctx.request & { body?: unknown };
  // No body at all (a GET, say): nothing to parse, and no parser round trip on the hot path.
  if (ctx.req.headers['content-length'] === undefined && ctx.req.headers['transfer-encoding'] === undefined) return undefined;
  if (request.body === undefined) {
    try {
      await parseBody(ctx as never, async () => {});
    } catch (error) {
      // A body that cannot be read (bad JSON, bad gzip, an aborted upload) is the client's fault,
      // whether or not the parser gave it a status; only the size and type limits keep theirs.
      const status = (error as { status?: unknown }).status;
      if (status === 413 || status === 415) throw error;
      throw new HttpError(400, 'Malformed request body');
    }
  }
  if (typeof request.body === 'object' && request.body !== null && Object.keys(request.body).length > maxParams) {
    throw badRequest(`Too many parameters: at most ${maxParams}`);
  }
  return request.body;
}

function pluginContext(auth: Authenticator, requestId: string, address: string, insecure: () => void): PluginContext {
  const guard = auth.loginGuard(address);
  return {
    backend: auth.backend,
    requestId,
    signToken: (claims) => auth.sign(claims),
    verifyPassword: (user, supplied, stored) => auth.verifyPassword(user, supplied, stored),
    // A plug-in that checks credentials (the token generator) is a login: the transport rule applies too.
    login: {
      begin: (user) => {
        insecure();
        return guard.begin(user);
      },
      succeeded: guard.succeeded,
    },
  };
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** Credentials over plain HTTP from another host could be read on the way: refused when configured. */
function refuseInsecureCredentials(ctx: Koa.Context | Context): void {
  if (!ctx.secure && !LOOPBACK.test(ctx.ip)) throw new HttpError(403, 'Credentials must be sent over HTTPS');
}

/** Request id, access log, and the one place where failures become JSON bodies. */
function errorMiddleware(logger: Logger): Koa.Middleware<State> {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } catch (error) {
      const known = error instanceof HttpError ? error : (httpErrorFromDatabase(error) ?? clientErrorFromKoa(error));
      let body: ErrorBody;
      if (known) {
        ctx.status = known.status;
        ctx.set(known.headers);
        body = { message: known.message, status: known.status };
      } else {
        // The SQL and the driver's text go to the log only, never to the client.
        const detail = error as { message?: unknown; code?: unknown; sql?: unknown; stack?: unknown };
        logger.error('request failed', {
          requestId,
          method: ctx.method,
          path: ctx.path,
          error: String(detail.message ?? error),
          code: detail.code,
          sql: detail.sql,
          stack: detail.stack,
        });
        ctx.status = 500;
        body = { message: 'Internal error', status: 500, requestId };
      }
      ctx.body = body;
    }
    if (logger.enabled('info')) logger.info('request', {
      requestId,
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  };
}

/** Errors raised by koa-bodyparser and Koa itself carry a 4xx status and `expose`. */
function clientErrorFromKoa(error: unknown): HttpError | undefined {
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (status === 413) return new HttpError(413, 'Request body too large');
  if (status === 415) return new HttpError(415, 'Unsupported body type: send JSON or form-encoded');
  if (status === 400) return new HttpError(400, 'Malformed request body');
  return new HttpError(status, (error as Error).message);
}

function normaliseBasePath(basePath: string | undefined): string {
  if (!basePath || basePath === '/') return '';
  return '/' + basePath.replace(/^\/+|\/+$/g, '');
}

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Listens on `port` (0 for a free one) and resolves once accepting connections. */
export interface ListenOptions {
  maxHeaderBytes?: number | undefined;
  /** Longest a client may take to send a whole request; default 30 s. Slow clients are cut off (408). */
  requestTimeoutMs?: number | undefined;
  /** Longest a client may take to send its headers; default 10 s (never more than the request's). */
  headersTimeoutMs?: number | undefined;
  /** PEM certificate chain and key: serve HTTPS. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
}

export async function listen(app: Koa<State>, port: number, host = '127.0.0.1', options: ListenOptions = {}): Promise<RunningServer> {
  // Larger header blocks are answered 431 by Node itself, before any of this code runs. A client that
  // trickles its headers or body is cut off by Node too, checked every second, so that a few slow
  // connections cannot hold the server's sockets and memory (slowloris); 0 turns a limit off.
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout || Infinity);
  const limits = {
    maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
    requestTimeout,
    headersTimeout: headersTimeout === Infinity ? 0 : headersTimeout,
    connectionsCheckingInterval: 1000,
  };
  const server = options.tls ? createHttpsServer({ ...limits, cert: options.tls.cert, key: options.tls.key }, app.callback()) : createServer(limits, app.callback());
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `${options.tls ? 'https' : 'http'}://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        app.emit(STOPPED);
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

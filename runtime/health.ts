import Koa from 'koa';
import type { Metrics } from './metrics.js';

/** What readiness asks of the database: one round trip, and (on Galera) whether the node is synced. */
export interface ReadinessProbe {
  /** Resolves when the database answered and can serve; rejects with the reason otherwise. */
  check(): Promise<void>;
}

/** How long a readiness check may take before the answer is "not ready" (docs/internals/contract.md §7). */
const READY_WITHIN_MS = 1000;

/**
 * Whether this server should get traffic: not once shutdown has begun, and
 * not while a database round trip fails or takes longer than a second.
 * Concurrent probes share one check.
 */
export class Readiness {
  private stopping = false;
  private running: Promise<string | undefined> | undefined;

  constructor(private readonly probe: ReadinessProbe) {}

  /** From now on, not ready: the server is shutting down. */
  stop(): void {
    this.stopping = true;
  }

  get stopped(): boolean {
    return this.stopping;
  }

  /** Undefined when ready, else why not. */
  async reason(): Promise<string | undefined> {
    if (this.stopping) return 'shutting down';
    this.running ??= this.check().finally(() => (this.running = undefined));
    return this.running;
  }

  private async check(): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('database did not answer within 1 s'), READY_WITHIN_MS)));
    try {
      return await Promise.race([
        this.probe.check().then(
          () => undefined,
          (error: Error) => error.message || 'database unavailable',
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * `GET /healthz` (the process serves; never touches the database) and
 * `GET /readyz` (docs/internals/contract.md §7), outside BASE_PATH, on the main port
 * and on ADMIN_PORT; `/metrics` too when `metrics` is given (ADMIN_PORT only).
 */
export function healthRoutes(readiness: Readiness, metrics?: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    if (!(await answerHealth(ctx, readiness, metrics))) await next();
  };
}

/**
 * Answers /healthz, /readyz (and /metrics when given) and says true; false,
 * at once and without a promise, for every other request (the front door
 * asks on each one).
 */
export function answerHealth(ctx: Koa.Context, readiness: Readiness, metrics?: Metrics): boolean | Promise<boolean> {
  // Node's method and Koa's request, not the context's delegates: this runs on every request.
  const method = ctx.req.method;
  if (method !== 'GET' && method !== 'HEAD') return false;
  const path = ctx.request.path;
  if (path === '/healthz') {
    ctx.body = { status: 'ok' };
    return true;
  }
  if (path === '/readyz') {
    return readiness.reason().then((reason) => {
      ctx.status = reason === undefined ? 200 : 503;
      ctx.body = reason === undefined ? { status: 'ready' } : { status: 'unavailable', reason };
      if (reason !== undefined) ctx.set('Retry-After', '1');
      return true;
    });
  }
  if (metrics && path === '/metrics') {
    return metrics.registry.metrics().then((text) => {
      ctx.type = metrics.registry.contentType;
      ctx.body = text;
      return true;
    });
  }
  return false;
}

/** The admin listener's app (ADMIN_PORT): health, readiness and metrics, nothing else (ReloadableApp.adminApp adds the console). */
export function adminApp(readiness: Readiness, metrics: Metrics): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(healthRoutes(readiness, metrics));
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { message: 'Not found', status: 404 };
  });
  return app;
}

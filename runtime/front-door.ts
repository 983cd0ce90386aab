import type Koa from 'koa';
import { errorResponder } from './errors.js';
import { answerHealth, type Readiness } from './health.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { RequestLog, type RequestState } from './request-log.js';
import { API_HEADERS, HSTS } from './security-headers.js';
import type { Tracing } from './tracing/index.js';

/**
 * What every request goes through before anything else, in one middleware
 * rather than five (each layer of Koa's onion is a promise and a hop on every
 * request): its id and access log line (request-log.ts), the count of
 * requests in flight that a graceful stop waits for, the security headers an
 * API needs (security-headers.ts), /healthz and /readyz (health.ts), the
 * rules a request meets before anything runs for it (`screen`), and the JSON
 * body of whatever it throws (errors.ts).
 */
export function frontDoor(options: {
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  inFlight: InFlight;
  /** Throws an HttpError to refuse the request before the console or a route sees it (app.ts: credentials' rules). */
  screen?: ((ctx: Koa.Context) => void) | undefined;
  /** Each request a span, when tracing is on (runtime/tracing/). */
  tracing?: Tracing | undefined;
}): Koa.Middleware {
  const { readiness, inFlight, screen, tracing } = options;
  const log = new RequestLog(options.logger, options.metrics);
  const respondWithError = errorResponder(options.logger);
  return async (ctx, next) => {
    const started = log.begin(ctx);
    if (tracing !== undefined) (ctx.state as RequestState).trace = tracing.begin(ctx.headers, ctx.method, ctx.path, started);
    inFlight.enter(ctx);
    // Straight to Node's response: Koa's `ctx.set` is a hop and a check per header on every request.
    const res = ctx.res;
    for (const [name, value] of API_HEADER_LIST) res.setHeader(name, value);
    if (ctx.request.secure) res.setHeader(HSTS.name, HSTS.value);
    try {
      const health = answerHealth(ctx, readiness);
      if (health === false || !(await health)) {
        screen?.(ctx);
        await next();
      }
    } catch (error) {
      respondWithError(ctx, error);
    }
    // Once shutdown began, no connection is kept alive for another request.
    if (readiness.stopped) ctx.set('Connection', 'close');
    log.end(ctx, started);
    if (tracing !== undefined) endTrace(ctx);
    writeText(ctx);
  };
}

/** The API's headers as pairs, walked without an iterator of the object's keys on every request. */
const API_HEADER_LIST: readonly (readonly [string, string])[] = Object.entries(API_HEADERS);

/** Statuses whose answer has no body (RFC 9110 §6.4.1); Koa's respond strips the body of these, and so is left them. */
const BODILESS = new Set([204, 205, 304]);

/**
 * A text answer (every route's, ready made: routes.ts, conditional/reads.ts) written here, once its log line and
 * trace are done, with the one `res.end(text)` Koa's respond would make after walking its checks; its headers are
 * the response's as set, Content-Length among them (Koa's body setter). Anything else (an error's or health's
 * object, a stream, a buffer, no body, a status with no body, HEAD, a response already ended or written by its
 * door) is left to Koa's respond.
 */
function writeText(ctx: Koa.Context): void {
  // Koa's response itself, not the context's delegates: each of those is a hop through one shared getter.
  const response = ctx.response;
  const body = response.body;
  const res = ctx.res;
  if (typeof body !== 'string' || ctx.respond === false || BODILESS.has(res.statusCode) || ctx.req.method === 'HEAD' || !response.writable) return;
  ctx.respond = false;
  res.end(body);
}

function endTrace(ctx: Koa.Context): void {
  const state = ctx.state as RequestState;
  state.trace?.end({
    status: ctx.status,
    route: state.route,
    backend: state.backend,
    resource: state.resource,
    reason: state.reason,
    requestId: state.requestId,
  });
}

/** Requests being served now: shutdown waits for them to finish. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];
  /** One listener function for every request, not a closure each. */
  private readonly left = () => {
    if (--this.count === 0) for (const wake of this.waiters.splice(0)) wake();
  };

  /**
   * Counted until the answer has left (or the connection is gone), not until the handler returns: Koa writes
   * the body after the middleware, and a shutdown must not cut it off.
   */
  enter(ctx: Koa.Context): void {
    this.count++;
    // `on`, not `once`: a response closes once, and once() would wrap the listener anew for every request.
    ctx.res.on('close', this.left);
  }

  drained(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.count === 0), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from './log.js';
import type { Metrics, RouteSeries } from './metrics.js';
import type { RequestTrace } from './tracing/index.js';

/** An incoming X-Request-Id is kept when it is this tame; otherwise the server makes one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * What a request leaves in `ctx.state` for its log line: the route sets the
 * backend, the resource and its metrics series, the guard the user id, a
 * refusal its reason.
 */
export interface RequestState {
  requestId: string;
  backend?: string;
  resource?: string;
  series?: RouteSeries;
  userId?: string;
  /** The API key the caller presented (its id), when it came with one. */
  keyId?: number;
  /** The caller's tenant on a tenant backend's route (docs/internals/contract.md §14, scope.caller). */
  tenant?: string;
  reason?: string;
  /** The served path of the route it reached (`/shop/v1.0/orders`): a trace's `http.route`. */
  route?: string;
  /** Its trace, when tracing is on (runtime/tracing/). */
  trace?: RequestTrace;
}

/**
 * Each request's id (`ctx.state.requestId`, sent back as X-Request-Id), its
 * count and time in the metrics, and one access log line when it ends
 * (docs/internals/contract.md §7), whatever the answer. The line never holds a header,
 * a body or a query string, where credentials travel. `begin` and `end` run
 * in the front door (front-door.ts), around everything else.
 */
export class RequestLog {
  /**
   * The line's own logger, without the server's redaction: the line holds no key it names (no header, body or
   * credential), yet pino passes every value of a logger whose paths have a wildcard (`*.password`) through the
   * redactor, a copy and a walk each: a fifth of the line's cost. Its level is the server's.
   */
  private readonly logger: Logger;

  constructor(
    logger: Logger,
    private readonly metrics: Metrics,
  ) {
    this.logger = logger.child({}, { redact: [] });
  }

  /** Gives the request its id; returns when it started. */
  begin(ctx: Koa.Context): number {
    // Node's own header and response, not Koa's `get` and `set` (a lookup by any spelling, a hop each).
    const incoming = ctx.req.headers['x-request-id'];
    const state = ctx.state as RequestState;
    state.requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.res.setHeader('X-Request-Id', state.requestId);
    return performance.now();
  }

  end(ctx: Koa.Context, started: number): void {
    const state = ctx.state as RequestState;
    const seconds = (performance.now() - started) / 1000;
    const method = ctx.req.method as string;
    const status = ctx.res.statusCode;
    this.metrics.record(state.series, method, status, seconds, state.reason);
    if (this.logger.isLevelEnabled('info')) {
      this.logger.info(
        {
          requestId: state.requestId,
          method,
          path: ctx.path,
          status,
          ms: Math.round(seconds * 10_000) / 10,
          backend: state.backend,
          resource: state.resource,
          userId: state.userId,
          keyId: state.keyId,
          tenant: state.tenant,
          reason: state.reason,
          trace_id: state.trace?.traceId,
        },
        'request',
      );
    }
  }
}

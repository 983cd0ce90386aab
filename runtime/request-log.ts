import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';

/** An incoming X-Request-Id is kept when it is this tame; otherwise the server makes one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * What a request leaves in `ctx.state` for its log line: the route sets the
 * backend and resource, the guard the user id, a refusal its reason.
 */
export interface RequestState {
  requestId: string;
  backend?: string;
  resource?: string;
  userId?: string;
  reason?: string;
}

/**
 * The outermost middleware: gives each request its id (`ctx.state.requestId`,
 * sent back as X-Request-Id), counts it in the metrics and writes one access
 * log line when it ends (docs/contract.md §7), whatever the answer. The line
 * never holds a header, a body or a query string, where credentials travel.
 */
export function requestLog(logger: Logger, metrics: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const state = ctx.state as RequestState;
    state.requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', state.requestId);
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    metrics.record({ backend: state.backend ?? '', resource: state.resource ?? '', method: ctx.method, status: ctx.status, seconds, reason: state.reason });
    if (logger.isLevelEnabled('info')) {
      logger.info(
        {
          requestId: state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(seconds * 10_000) / 10,
          backend: state.backend,
          resource: state.resource,
          userId: state.userId,
          reason: state.reason,
        },
        'request',
      );
    }
  };
}

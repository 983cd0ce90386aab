import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from './log.js';

/** An incoming X-Request-Id is kept when it is this tame; otherwise the server makes one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The outermost middleware: gives each request its id (`ctx.state.requestId`,
 * sent back as X-Request-Id) and writes one access-log line when it ends,
 * whatever the answer. The line never holds a header, a body or a query
 * string (credentials travel in some of them).
 */
export function requestLog(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    await next();
    if (logger.enabled('info')) {
      logger.info('request', { requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((performance.now() - started) * 10) / 10 });
    }
  };
}

import Koa from 'koa';
import { frontDoor, InFlight } from '../front-door.js';
import { healthRoutes, type Readiness } from '../health.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';

/** Makes the admin listener's app (ADMIN_PORT), trusting proxies as `app` does. */
export function adminAppMaker(
  app: Koa,
  { logger, metrics, readiness, screen }: { logger: Logger; metrics: Metrics; readiness: Readiness; screen: (ctx: Koa.Context) => void },
): (middleware?: readonly Koa.Middleware[]) => Koa {
  return (middleware = []) => {
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
  };
}

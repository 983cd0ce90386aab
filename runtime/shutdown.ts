import type { ReloadableApp } from './app.js';
import type { Database } from './db/index.js';
import type { RunningServer } from './listen.js';
import type { Logger } from './log.js';
import type { Tracing } from './tracing/index.js';

export interface ShutdownOptions {
  app: ReloadableApp;
  /** The API's listener: it stops accepting at once. */
  server: RunningServer;
  /** The admin listener (ADMIN_PORT): it keeps answering, "not ready", until the requests in flight are done. */
  admin?: RunningServer | undefined;
  database: Database;
  logger: Logger;
  /** Longest to wait for requests in flight (SHUTDOWN_TIMEOUT_MS). */
  timeoutMs: number;
  /** Sends the spans still queued, last (runtime/tracing/). */
  tracing?: Tracing | undefined;
}

/**
 * A graceful stop (docs/internals/contract.md §7): readiness turns 503 (a load balancer
 * stops sending), the server leaves the list of those on its database
 * (runtime/peers.ts), the listeners stop accepting, idle keep-alive
 * connections close, every request in flight finishes (its connection closes
 * after its answer), event deliveries in flight end and the audit rows
 * waiting are written (runtime/events/, runtime/audit/), then the pool closes. Requests still running after
 * `timeoutMs` are cut off. Resolves true when nothing was cut off.
 */
export async function shutDown(options: ShutdownOptions): Promise<boolean> {
  const { app, server, admin, database, logger } = options;
  app.readiness.stop();
  // The others on this database know at once that this server is going (the console asks them).
  const left = app.peers.leave();
  server.server.close();
  server.server.closeIdleConnections();
  const drained = await app.drain(options.timeoutMs);
  if (!drained) logger.warn({ timeoutMs: options.timeoutMs }, 'requests still running at the shutdown limit: cut off');
  await Promise.all([server.close(), admin?.close()]);
  app.close();
  // Deliveries in flight end (each within its own timeout) and their outcomes, and the audit rows waiting, are
  // written before the pool closes; an event cut off here is delivered again by another server after its lease.
  await Promise.race([app.settle(), new Promise((resolve) => setTimeout(resolve, options.timeoutMs).unref())]);
  // A database that does not answer holds the stop a second at most: the row then ages out (runtime/peers.ts).
  await Promise.race([left, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  await database.end().catch(() => undefined);
  // The last requests' spans, sent within a few seconds or given up: an unreachable collector never holds the stop.
  if (options.tracing) await Promise.race([options.tracing.shutdown().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
  return drained;
}

import { pruneSessions } from '../auth/sessions/session-tables.js';
import { errnoOf, NO_TABLE } from '../db/index.js';
import { DatabaseLeases, RateLimiter } from '../limits/index.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ServerOptions } from './options.js';

/** Each database operation run again: counted, and said in the log. */
export function watchRetries(options: ServerOptions, metrics: Metrics, logger: Logger): void {
  options.database.on('retry', ({ reason, attempt }) => {
    metrics.retried(reason);
    logger.warn({ reason, attempt }, 'database operation run again');
  });
}

/** The rate limits' leases, kept in the database; when it fails they admit every call, and say so. */
export function rateLimiterFor(options: ServerOptions, metrics: Metrics, logger: Logger): RateLimiter {
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
  return rateLimiter;
}

/** The pruning of old rate windows and sessions; clear the interval it returns when the server stops. */
export function pruneExpired(options: ServerOptions, rateLimiter: RateLimiter): NodeJS.Timeout {
  // Rows of rate windows and sessions long over: removed now and then by every server (a delete that finds nothing is cheap).
  const pruning = setInterval(() => {
    void rateLimiter.prune().catch(() => undefined);
    void pruneSessions(options.database).catch(() => undefined);
  }, 600_000);
  pruning.unref();
  return pruning;
}

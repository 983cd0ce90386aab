import type Koa from 'koa';
import type { KeyTimings } from '../auth/issuer/index.js';
import type { LoginLimits } from '../auth/limits/limiter.js';
import type { BackendModule } from '../contract.js';
import type { Database } from '../db/index.js';
import type { DeliverySettings } from '../events/index.js';
import type { Logger } from '../log.js';
import type { Tracing } from '../tracing/index.js';

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
  /** ETags and 304 on GETs (docs/internals/contract.md §15); default on. */
  etags?: boolean;
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
  /** Environment values by name: each webhook's `secret` names one (docs/internals/contract.md §12). Default none. */
  webhookSecrets?: Readonly<Record<string, string | undefined>>;
  /** Events: whether this server delivers (default yes), the delivery timings and bounds, the largest event. */
  events?: { deliver?: boolean; delivery?: Partial<DeliverySettings>; maxBytes?: number };
  /** The API audit: how many days its rows are kept (default 90). */
  audit?: { retentionDays?: number };
  /** Idempotency-Key records (docs/internals/contract.md §15): how many seconds they are kept (default 86400). */
  idempotency?: { retentionSeconds?: number };
  /** Each request a span, each SQL step a child span (runtime/tracing/, `startTracing`); none by default. */
  tracing?: Tracing | undefined;
}

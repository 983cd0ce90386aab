import { existsSync } from 'node:fs';
import { resolveEnvironment } from './config/environment.js';
import { ConfigError } from './config/error.js';
import { databaseUrlOf, secretOf, webhookSecretsOf } from './config/secrets.js';
import { bounded, type ConsoleMode, consoleModeOf, etagsOf, flag, loginCounters, portOf, proxyHops, tlsFiles, whole } from './config/values.js';
import { DEFAULT_IDEMPOTENCY_RETENTION_SECONDS } from './contract/safe-writes.js';
import type { BackendModule } from './contract.js';
import { DEFAULT_DELIVERY, DEFAULT_EVENT_BYTES, type DeliverySettings } from './events/index.js';
import { type LogLevel, parseLogLevel } from './log.js';
import { tracingEndpoint } from './tracing/index.js';

export { resolveEnvironment } from './config/environment.js';
export { ConfigError } from './config/error.js';
export { MAKE_A_SECRET } from './config/secrets.js';
export { type ConsoleMode, consoleModeOf } from './config/values.js';

export interface ConfigNeeds {
  /** The backends that sign and check Bearer tokens: they need JWT_SECRET. */
  bearerBackends?: readonly string[];
  /** The webhooks' secrets (docs/internals/contract.md §12): each names the variable that must hold one. */
  webhookSecrets?: readonly { variable: string; backend: string; url: string }[];
  /** The backends with paged routes, whose cursors are signed with a key derived from JWT_SECRET (docs/internals/contract.md §11). */
  pagedBackends?: readonly string[];
  /** The backends served, whose `${NAME}` settings are read from the environment (docs/internals/contract.md §7). */
  backends?: readonly BackendModule[];
}

/** Server settings from the environment (docs/internals/contract.md §1); a `.env` file may supply them. */
export interface ServerConfig {
  databaseUrl: string;
  jwtSecret: string | undefined;
  port: number;
  /** A second listener for /healthz, /readyz and /metrics; undefined for none. */
  adminPort: number | undefined;
  host: string;
  basePath: string;
  logLevel: LogLevel;
  /** Browser origins allowed by CORS; empty leaves CORS off. */
  corsOrigins: string[];
  maxParams: number;
  /** Validators on reads (docs/internals/contract.md §15): ETags and 304 on GETs; ETAGS=off for neither. */
  etags: boolean;
  maxHeaderBytes: number;
  /** Longest a client may take to send a whole request (headers and body); slower ones are cut off. */
  requestTimeoutMs: number;
  /** Longest a client may take to send its headers. */
  headersTimeoutMs: number;
  statementTimeoutMs: number;
  /** Longest a request waits for a pooled database connection. */
  acquireTimeoutMs: number;
  /** Most requests waiting for a database connection at once. */
  queueLimit: number;
  /** Longest a shutdown waits for requests in flight. */
  shutdownTimeoutMs: number;
  /** On Galera, causal reads (wsrep_sync_wait=1) on every session. */
  syncWait: boolean;
  loginLimits: { perUser: number; perAddress: number; windowSeconds: number; backoffMaxMs: number; sessionsPerUser: number };
  /** PEM files: the server speaks HTTPS itself. */
  tls: { cert: Buffer; key: Buffer } | undefined;
  /**
   * How many proxies in front of the server append to X-Forwarded-For (PROXY_HOPS, or 1 for TRUST_PROXY=true):
   * the client is that many entries from the right, and X-Forwarded-Proto is trusted; 0 trusts neither header.
   */
  proxyHops: number;
  requireTlsForCredentials: boolean;
  loginCounters: 'memory' | 'database';
  /** Where the admin console is served: the main port (`on`), the admin port only (`admin`), or nowhere (`off`). */
  console: ConsoleMode;
  /** Outside issuers' keys (docs/internals/contract.md §9): the stale window through an outage, and the least time between two fetches. */
  issuerKeys: { staleSeconds: number; refetchSeconds: number };
  /** Events (docs/internals/contract.md §12): whether this server delivers, how, and the largest event. */
  events: { deliver: boolean; delivery: DeliverySettings; maxBytes: number };
  /** Each webhook's secret, by the variable its `secret` names; checked, never printed. */
  webhookSecrets: Record<string, string>;
  /** The backends of `needs`, each `${NAME}` replaced by its variable's value, checked (runtime/config/environment.ts). */
  backends: readonly BackendModule[];
  /** The API audit (docs/internals/contract.md §12): rows older than this many days are pruned (AUDIT_RETENTION_DAYS). */
  audit: { retentionDays: number };
  /** Idempotency-Key records (docs/internals/contract.md §15): pruned after this many seconds (IDEMPOTENCY_RETENTION_SECONDS). */
  idempotency: { retentionSeconds: number };
  /** Where traces go (OTEL_EXPORTER_OTLP_ENDPOINT, or its _TRACES_ form); unset, tracing is off (runtime/tracing/). */
  otlpEndpoint: string | undefined;
}

/**
 * The server's settings from the environment (or `.env`), every one checked
 * before anything connects: all problems are reported together, each with
 * what to do (ConfigError).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, envFile = '.env', needs: ConfigNeeds = {}): ServerConfig {
  // Values already in the environment win over the file (process.loadEnvFile never overwrites).
  if (env === process.env && existsSync(envFile)) process.loadEnvFile(envFile);
  const problems: string[] = [];
  // Reads one setting; a wrong one is noted and the others are read on, so that one run names them all.
  const checked: Checked = (read, fallback) => {
    try {
      return read();
    } catch (error) {
      problems.push(...(error instanceof ConfigError ? error.problems : [(error as Error).message]));
      return fallback;
    }
  };
  const config: ServerConfig = {
    databaseUrl: checked(() => databaseUrlOf(env.DATABASE_URL), ''),
    jwtSecret: checked(() => secretOf(env.JWT_SECRET, needs.bearerBackends ?? [], needs.pagedBackends ?? []), undefined),
    port: checked(() => portOf(env.PORT, 3000, 'PORT'), 3000),
    adminPort: checked(() => portOf(env.ADMIN_PORT, undefined, 'ADMIN_PORT'), undefined),
    webhookSecrets: checked(() => webhookSecretsOf(env, needs.webhookSecrets ?? []), {}),
    backends: checked(() => resolveEnvironment(needs.backends ?? [], env), needs.backends ?? []),
    ...settingsFrom(env, checked),
  };
  if (config.console === 'admin' && config.adminPort === undefined && !problems.some((problem) => problem.startsWith('ADMIN_PORT'))) {
    problems.push(
      'CONSOLE=admin serves the console on the admin port, but ADMIN_PORT is not set: set ADMIN_PORT to the port of a listener only operators reach, or CONSOLE=off',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

type Checked = <T>(read: () => T, fallback: T) => T;

/** EVENTS_*: how this server delivers events; every value bounded, and the lease longer than three attempts. */
function eventsOf(env: NodeJS.ProcessEnv, checked: Checked): ServerConfig['events'] {
  const within = (name: string, fallback: number, min: number, max: number) => checked(() => bounded(env[name], fallback, min, max, name), fallback);
  const delivery: DeliverySettings = {
    pollMs: within('EVENTS_POLL_MS', DEFAULT_DELIVERY.pollMs, 10, 60_000),
    leaseSeconds: within('EVENTS_LEASE_SECONDS', DEFAULT_DELIVERY.leaseSeconds, 1, 3600),
    timeoutMs: within('EVENTS_TIMEOUT_MS', DEFAULT_DELIVERY.timeoutMs, 100, 60_000),
    retryBaseMs: within('EVENTS_RETRY_BASE_MS', DEFAULT_DELIVERY.retryBaseMs, 10, 3_600_000),
    retryMaxMs: within('EVENTS_RETRY_MAX_MS', DEFAULT_DELIVERY.retryMaxMs, 10, 86_400_000),
    retryWindowSeconds: within('EVENTS_RETRY_SECONDS', DEFAULT_DELIVERY.retryWindowSeconds, 1, 30 * 86_400),
    retentionSeconds: within('EVENTS_RETENTION_SECONDS', DEFAULT_DELIVERY.retentionSeconds, 1, 365 * 86_400),
    concurrency: within('EVENTS_CONCURRENCY', DEFAULT_DELIVERY.concurrency, 1, 256),
  };
  // A lease that ends while its delivery may still be running would let a second server send it meanwhile. A
  // claimed event may wait for one attempt in the server's queue (it claims as many ahead as it has slots), take
  // its own, and wait for its outcome to be written.
  checked(() => {
    if (delivery.leaseSeconds * 1000 < 3 * delivery.timeoutMs)
      throw new Error(
        `EVENTS_LEASE_SECONDS (${delivery.leaseSeconds}) must be at least three times EVENTS_TIMEOUT_MS (${delivery.timeoutMs} ms): a claimed event is the server's until its delivery is over, and it may wait for one attempt before its own`,
      );
  }, undefined);
  const deliver = checked(() => {
    const value = env.EVENTS_DELIVERY;
    if (value === undefined || value === '' || value === 'on') return true;
    if (value === 'off') return false;
    throw new Error(`EVENTS_DELIVERY is on or off, not ${value}`);
  }, true);
  return { deliver, delivery, maxBytes: within('EVENTS_MAX_BYTES', DEFAULT_EVENT_BYTES, 1024, 1024 * 1024) };
}

function settingsFrom(
  env: NodeJS.ProcessEnv,
  checked: Checked,
): Omit<ServerConfig, 'databaseUrl' | 'jwtSecret' | 'port' | 'adminPort' | 'webhookSecrets' | 'backends'> {
  const number = (value: string | undefined, fallback: number, name: string) => checked(() => whole(value, fallback, name), fallback);
  const yes = (value: string | undefined, name: string) => checked(() => flag(value, name), false);
  return {
    host: env.HOST || '127.0.0.1',
    basePath: env.BASE_PATH ?? '',
    logLevel: checked(() => parseLogLevel(env.LOG_LEVEL), 'info' as LogLevel),
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    maxParams: number(env.MAX_PARAMS, 100, 'MAX_PARAMS'),
    etags: checked(() => etagsOf(env.ETAGS), true),
    maxHeaderBytes: number(env.MAX_HEADER_BYTES, 16 * 1024, 'MAX_HEADER_BYTES'),
    requestTimeoutMs: number(env.REQUEST_TIMEOUT_MS, 30_000, 'REQUEST_TIMEOUT_MS'),
    headersTimeoutMs: number(env.HEADERS_TIMEOUT_MS, 10_000, 'HEADERS_TIMEOUT_MS'),
    statementTimeoutMs: number(env.QUERY_TIMEOUT_MS, 10_000, 'QUERY_TIMEOUT_MS'),
    acquireTimeoutMs: number(env.DB_ACQUIRE_TIMEOUT_MS, 1000, 'DB_ACQUIRE_TIMEOUT_MS'),
    queueLimit: number(env.DB_QUEUE_LIMIT, 200, 'DB_QUEUE_LIMIT'),
    shutdownTimeoutMs: number(env.SHUTDOWN_TIMEOUT_MS, 10_000, 'SHUTDOWN_TIMEOUT_MS'),
    syncWait: env.DB_SYNC_WAIT === undefined || env.DB_SYNC_WAIT === '' ? true : yes(env.DB_SYNC_WAIT, 'DB_SYNC_WAIT'),
    loginLimits: {
      perUser: number(env.LOGIN_MAX_FAILURES, 10, 'LOGIN_MAX_FAILURES'),
      perAddress: number(env.LOGIN_MAX_FAILURES_PER_ADDRESS, 50, 'LOGIN_MAX_FAILURES_PER_ADDRESS'),
      windowSeconds: number(env.LOGIN_WINDOW_SECONDS, 300, 'LOGIN_WINDOW_SECONDS'),
      backoffMaxMs: number(env.LOGIN_BACKOFF_MAX_MS, 3000, 'LOGIN_BACKOFF_MAX_MS'),
      sessionsPerUser: number(env.LOGIN_MAX_SESSIONS, 60, 'LOGIN_MAX_SESSIONS'),
    },
    tls: checked(() => tlsFiles(env.TLS_CERT_FILE, env.TLS_KEY_FILE), undefined),
    proxyHops: checked(() => proxyHops(env.TRUST_PROXY, env.PROXY_HOPS), 0),
    requireTlsForCredentials: yes(env.REQUIRE_TLS_FOR_CREDENTIALS, 'REQUIRE_TLS_FOR_CREDENTIALS'),
    loginCounters: checked(() => loginCounters(env.LOGIN_COUNTERS), 'memory' as const),
    console: checked(() => consoleModeOf(env.CONSOLE), 'on' as const),
    issuerKeys: {
      staleSeconds: checked(() => bounded(env.IDP_STALE_SECONDS, 3600, 0, 86_400, 'IDP_STALE_SECONDS'), 3600),
      refetchSeconds: checked(() => bounded(env.IDP_REFETCH_SECONDS, 30, 1, 3600, 'IDP_REFETCH_SECONDS'), 30),
    },
    events: eventsOf(env, checked),
    audit: { retentionDays: checked(() => bounded(env.AUDIT_RETENTION_DAYS, 90, 1, 36_500, 'AUDIT_RETENTION_DAYS'), 90) },
    idempotency: {
      retentionSeconds: checked(
        () => bounded(env.IDEMPOTENCY_RETENTION_SECONDS, DEFAULT_IDEMPOTENCY_RETENTION_SECONDS, 1, 31_536_000, 'IDEMPOTENCY_RETENTION_SECONDS'),
        DEFAULT_IDEMPOTENCY_RETENTION_SECONDS,
      ),
    },
    otlpEndpoint: checked(() => tracingEndpoint(env), undefined),
  };
}

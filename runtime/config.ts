import { existsSync, readFileSync } from 'node:fs';
import { type LogLevel, parseLogLevel } from './log.js';

/** Server settings from the environment (docs/contract.md §1); a `.env` file may supply them. */
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
  loginLimits: { perUser: number; perAddress: number; windowSeconds: number };
  /** PEM files: the server speaks HTTPS itself. */
  tls: { cert: Buffer; key: Buffer } | undefined;
  trustProxy: boolean;
  requireTlsForCredentials: boolean;
  loginCounters: 'memory' | 'database';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, envFile = '.env'): ServerConfig {
  // Values already in the environment win over the file (process.loadEnvFile never overwrites).
  if (env === process.env && existsSync(envFile)) process.loadEnvFile(envFile);
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set (mysql://user:pass@host:port/db)');
  const port = portOf(env.PORT, 3000, 'PORT')!;
  const adminPort = portOf(env.ADMIN_PORT, undefined, 'ADMIN_PORT');
  return {
    databaseUrl,
    jwtSecret: env.JWT_SECRET || undefined,
    port,
    adminPort,
    host: env.HOST || '127.0.0.1',
    basePath: env.BASE_PATH ?? '',
    logLevel: parseLogLevel(env.LOG_LEVEL),
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    maxParams: whole(env.MAX_PARAMS, 100, 'MAX_PARAMS'),
    maxHeaderBytes: whole(env.MAX_HEADER_BYTES, 16 * 1024, 'MAX_HEADER_BYTES'),
    requestTimeoutMs: whole(env.REQUEST_TIMEOUT_MS, 30_000, 'REQUEST_TIMEOUT_MS'),
    headersTimeoutMs: whole(env.HEADERS_TIMEOUT_MS, 10_000, 'HEADERS_TIMEOUT_MS'),
    statementTimeoutMs: whole(env.QUERY_TIMEOUT_MS, 10_000, 'QUERY_TIMEOUT_MS'),
    acquireTimeoutMs: whole(env.DB_ACQUIRE_TIMEOUT_MS, 1000, 'DB_ACQUIRE_TIMEOUT_MS'),
    queueLimit: whole(env.DB_QUEUE_LIMIT, 200, 'DB_QUEUE_LIMIT'),
    shutdownTimeoutMs: whole(env.SHUTDOWN_TIMEOUT_MS, 10_000, 'SHUTDOWN_TIMEOUT_MS'),
    syncWait: env.DB_SYNC_WAIT === undefined || env.DB_SYNC_WAIT === '' ? true : flag(env.DB_SYNC_WAIT, 'DB_SYNC_WAIT'),
    loginLimits: {
      perUser: whole(env.LOGIN_MAX_FAILURES, 10, 'LOGIN_MAX_FAILURES'),
      perAddress: whole(env.LOGIN_MAX_FAILURES_PER_ADDRESS, 50, 'LOGIN_MAX_FAILURES_PER_ADDRESS'),
      windowSeconds: whole(env.LOGIN_WINDOW_SECONDS, 300, 'LOGIN_WINDOW_SECONDS'),
    },
    tls: tlsFiles(env.TLS_CERT_FILE, env.TLS_KEY_FILE),
    trustProxy: flag(env.TRUST_PROXY, 'TRUST_PROXY'),
    requireTlsForCredentials: flag(env.REQUIRE_TLS_FOR_CREDENTIALS, 'REQUIRE_TLS_FOR_CREDENTIALS'),
    loginCounters: loginCounters(env.LOGIN_COUNTERS),
  };
}

function portOf<T extends number | undefined>(value: string | undefined, fallback: T, name: string): number | T {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!/^[0-9]{1,5}$/.test(value) || port > 65535) throw new Error(`${name} is not a port number: ${value}`);
  return port;
}

function whole(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^[0-9]+$/.test(value)) throw new Error(`${name} is a whole number, not ${value}`);
  return Number(value);
}

function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new Error(`${name} is true or false, not ${value}`);
}

function tlsFiles(cert: string | undefined, key: string | undefined): { cert: Buffer; key: Buffer } | undefined {
  if (!cert && !key) return undefined;
  if (!cert || !key) throw new Error('HTTPS needs both TLS_CERT_FILE and TLS_KEY_FILE');
  return { cert: readFileSync(cert), key: readFileSync(key) };
}

function loginCounters(value: string | undefined): 'memory' | 'database' {
  if (value === undefined || value === '' || value === 'memory') return 'memory';
  if (value === 'database') return 'database';
  throw new Error(`LOGIN_COUNTERS is memory or database, not ${value}`);
}

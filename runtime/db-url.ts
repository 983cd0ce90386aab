import mysql from 'mysql2/promise';
import { Database, DEFAULT_TIMINGS, type ConnectionSource, type DatabaseTimings } from './db.js';

export interface DatabaseOptions {
  /** Longest a statement may run, in milliseconds (QUERY_TIMEOUT_MS): MariaDB aborts it (max_statement_time). */
  statementTimeoutMs?: number;
  /** Longest to wait for a pooled connection (DB_ACQUIRE_TIMEOUT_MS). */
  acquireTimeoutMs?: number;
  /** Most requests waiting for a connection (DB_QUEUE_LIMIT); past it, 503 at once. */
  queueLimit?: number;
}

/**
 * `mysql://user:pass@host:port/db`; query options such as `?connectionLimit=20` pass to mysql2. The pool
 * connects lazily: a server starts while its database is down, and recovers by itself when it returns.
 */
export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Node's own error would print the input, password included.
    throw new Error('DATABASE_URL is not a valid URL: percent-encode special characters in the user and password');
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') throw new Error('DATABASE_URL must start with mysql://');
  const timings: DatabaseTimings = {
    ...DEFAULT_TIMINGS,
    ...(options.statementTimeoutMs !== undefined ? { queryTimeoutMs: options.statementTimeoutMs } : {}),
    ...(options.acquireTimeoutMs !== undefined ? { acquireTimeoutMs: options.acquireTimeoutMs } : {}),
  };
  const extra: Record<string, string> = Object.fromEntries(parsed.searchParams);
  const pool = mysql.createPool({
    host: parsed.hostname || 'localhost',
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || undefined,
    socketPath: extra.socketPath,
    connectionLimit: extra.connectionLimit ? Number(extra.connectionLimit) : 10,
    queueLimit: options.queueLimit ?? 200,
    // A host that accepts the connection but never answers (a stopped process) fails within the statement limit.
    connectTimeout: Math.max(timings.queryTimeoutMs, 1000),
    // Two statements in one string are never what a resource meant.
    multipleStatements: false,
    // DATETIME values come back as they are stored, never shifted by the server's zone.
    dateStrings: false,
    timezone: 'Z',
    // BIGINT and DECIMAL come back as exact strings, as the generated row types say (generator/types.ts).
    supportBigNumbers: true,
    bigNumberStrings: true,
    enableKeepAlive: true,
  });
  if (timings.queryTimeoutMs > 0) {
    // Every new connection gets the limit before its first statement (it queues behind this). MariaDB only;
    // MySQL ignores the unknown variable, and the client's own timeout still applies.
    pool.pool.on('connection', (connection) => {
      connection.query(`set session max_statement_time = ${Number(timings.queryTimeoutMs) / 1000}`, () => {});
    });
  }
  return new Database(poolSource(pool), timings);
}

/** The internals of mysql2's pool the statistics need; kept to this one place. */
interface PoolInternals {
  _allConnections: { length: number };
  _freeConnections: { length: number };
  _connectionQueue: { length: number };
}

function poolSource(pool: mysql.Pool): ConnectionSource {
  const internals = pool.pool as unknown as PoolInternals;
  return {
    getConnection: () => pool.getConnection(),
    stats: () => ({
      inUse: internals._allConnections.length - internals._freeConnections.length,
      idle: internals._freeConnections.length,
      queued: internals._connectionQueue.length,
    }),
    end: () => pool.end(),
  };
}

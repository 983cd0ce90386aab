import mysql from 'mysql2';
import { type ConnectionSource, Database, type DatabaseTimings, DEFAULT_TIMINGS } from './database.js';
import { type DatabaseHost, parseDatabaseUrl } from './url.js';

export interface DatabaseOptions {
  /** Longest a statement may run, in milliseconds (QUERY_TIMEOUT_MS): MariaDB aborts it (max_statement_time). */
  statementTimeoutMs?: number;
  /** Longest to wait for a pooled connection (DB_ACQUIRE_TIMEOUT_MS). */
  acquireTimeoutMs?: number;
  /** Most requests waiting for a connection (DB_QUEUE_LIMIT); past it, 503 at once. */
  queueLimit?: number;
  /** On Galera, make every read see every write committed before it, on any node (DB_SYNC_WAIT); default on. */
  syncWait?: boolean;
  /** How long a failed host is left alone before it is tried again; default 2 s. */
  restoreHostMs?: number;
}

/**
 * `mysql://user:pass@host:port/db`, or several hosts for a cluster
 * (`mysql://user:pass@h1:3306,h2:3306,h3:3306/db`, docs/internals/contract.md §7);
 * its options (`?connectionLimit=20`, `ssl-mode` and friends, url.ts and
 * tls.ts) set the pool's size and every connection's TLS. Pools connect
 * lazily: a server starts while its database is down, and recovers by itself
 * when it returns.
 */
export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  const { hosts, config } = parseDatabaseUrl(url);
  const timings: DatabaseTimings = {
    ...DEFAULT_TIMINGS,
    ...(options.statementTimeoutMs !== undefined ? { queryTimeoutMs: options.statementTimeoutMs } : {}),
    ...(options.acquireTimeoutMs !== undefined ? { acquireTimeoutMs: options.acquireTimeoutMs } : {}),
  };
  const pool: mysql.PoolOptions = {
    ...config,
    queueLimit: options.queueLimit ?? 200,
    // A host that accepts the connection but never answers (a stopped process) fails within the statement limit.
    connectTimeout: Math.max(timings.queryTimeoutMs, 1000),
    // Two statements in one string are never what a resource meant.
    multipleStatements: false,
    // DATETIME values come back as they are stored, never shifted by the server's zone.
    dateStrings: false,
    timezone: 'Z',
    // BIGINT and DECIMAL come back as exact strings, as the generated row types say (generator/types/columns.ts).
    supportBigNumbers: true,
    bigNumberStrings: true,
    enableKeepAlive: true,
    // No stack trace captured on every statement (mysql2's promise API does by default, for errors'
    // call sites): it cost 3-4% of a request's CPU, and a fault is logged with its request id and reason.
    trace: false,
  };
  const session = sessionSetup(timings.queryTimeoutMs, options.syncWait ?? true);
  const source =
    hosts.length === 1 ? poolSource(mysql.createPool({ ...pool, ...hosts[0] }), session) : clusterSource(hosts, pool, session, options.restoreHostMs ?? 2000);
  return new Database(source, timings);
}

/**
 * Run once on every new connection, before its first statement: the
 * statement limit (MariaDB's max_statement_time), and on a Galera node
 * (`wsrep_on`) causal reads, so that a write through one server is read
 * through any other at once. MySQL knows neither variable: the error is
 * ignored, and the client's own timeout still applies.
 */
function sessionSetup(queryTimeoutMs: number, syncWait: boolean): string {
  const settings = [`max_statement_time = ${Number(queryTimeoutMs) / 1000}`];
  if (syncWait) settings.push('wsrep_sync_wait = if(@@wsrep_on, 1, 0)');
  return `set session ${settings.join(', ')}`;
}

/** Connections the session setup has run on. */
const prepared = new WeakSet<object>();

/**
 * A pooled connection, as one promise over mysql2's callback API, with the
 * session setup run on it once, before its first statement.
 */
function acquire(get: (callback: (error: Error | null, connection: mysql.PoolConnection) => void) => void, session: string): Promise<mysql.PoolConnection> {
  return new Promise((resolve, reject) => {
    get((error, connection) => {
      if (error) return reject(error);
      if (prepared.has(connection)) return resolve(connection);
      connection.query(session, (failure: (Error & { errno?: number }) | null) => {
        // MySQL: unknown variables. A connection that failed the statement for any other reason fails the next one too.
        if (failure && failure.errno !== 1193) {
          connection.destroy();
          return reject(failure);
        }
        prepared.add(connection);
        resolve(connection);
      });
    });
  });
}

function ended(end: (callback: (error?: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => end((error) => (error ? reject(error) : resolve())));
}

/** The internals of mysql2's pool the statistics need; kept to this one place. */
interface PoolInternals {
  _allConnections: { length: number };
  _freeConnections: { length: number };
  _connectionQueue: { length: number };
}

function statsOf(pools: readonly PoolInternals[]): { inUse: number; idle: number; queued: number } {
  let inUse = 0;
  let idle = 0;
  let queued = 0;
  for (const pool of pools) {
    inUse += pool._allConnections.length - pool._freeConnections.length;
    idle += pool._freeConnections.length;
    queued += pool._connectionQueue.length;
  }
  return { inUse, idle, queued };
}

function poolSource(pool: mysql.Pool, session: string): ConnectionSource {
  const internals = pool as unknown as PoolInternals;
  const get = pool.getConnection.bind(pool);
  return {
    getConnection: () => acquire(get, session),
    failed: () => {},
    stats: () => statsOf([internals]),
    // mysql2's pool hands over its last idle connection synchronously.
    hasIdle: () => internals._freeConnections.length > 0,
    end: () => ended((callback) => pool.end(callback)),
  };
}

/** What the pool cluster's internals offer to take a host out of rotation; kept to this one place. */
interface ClusterNode {
  id: string;
  errorCount: number;
  pool: PoolInternals & { _freeConnections: { toArray(): { destroy(): void }[] } };
}
interface ClusterInternals {
  _nodes: Record<string, ClusterNode>;
  _removeNodeErrorCount: number;
  _increaseErrorCount(node: ClusterNode): void;
}

/**
 * Several hosts on mysql2's own pool cluster, selector ORDER: every
 * connection from the first host that is up (one writer, as Galera
 * advises), the next when it fails, and back to the first once it answers
 * again (the cluster retries a failed host after `restoreHostMs`). A host
 * whose connection failed mid-statement, or that says it is not ready
 * (1047), is taken out of rotation the same way, so that the operation's
 * next try goes to the next host.
 */
function clusterSource(hosts: readonly DatabaseHost[], pool: mysql.PoolOptions, session: string, restoreHostMs: number): ConnectionSource {
  const cluster = mysql.createPoolCluster({ canRetry: true, removeNodeErrorCount: 1, restoreNodeTimeout: restoreHostMs, defaultSelector: 'ORDER' });
  for (const [index, host] of hosts.entries()) cluster.add(`host${index + 1}`, { ...pool, ...host });
  const internals = cluster as unknown as ClusterInternals;
  const get = (callback: (error: Error | null, connection: mysql.PoolConnection) => void) =>
    cluster.getConnection('*', 'ORDER', callback as (error: NodeJS.ErrnoException | null, connection: mysql.PoolConnection) => void);
  return {
    getConnection: () => acquire(get, session),
    failed: (connection) => {
      const node = internals._nodes[(connection as unknown as { _clusterId?: string })._clusterId ?? ''];
      if (!node) return;
      node.errorCount = Math.max(node.errorCount, internals._removeNodeErrorCount - 1);
      internals._increaseErrorCount(node);
      // Its idle connections are most likely as dead as this one: they go, and the host's first use after
      // its rest makes a fresh one.
      for (const idle of node.pool._freeConnections.toArray()) idle.destroy();
    },
    stats: () => statsOf(Object.values(internals._nodes).map((node) => node.pool)),
    // Which host serves next is the cluster's choice: always bound the wait.
    hasIdle: () => false,
    end: () => ended((callback) => cluster.end(callback)),
  };
}

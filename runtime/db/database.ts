import { EventEmitter } from 'node:events';
import type { PoolConnection } from 'mysql2';
import { bounded, DatabaseFault, faultOf, mayRunAgain, POOL_EXHAUSTED, pause, remaining, TIMED_OUT } from './faults.js';
import { execute, type Queryable, query, type SqlValue, StatementRunner, type WriteResult } from './statements.js';

/** Where connections come from: one pool, or a pool per host in order (pool.ts). Narrow, so a cluster can stand in. */
export interface ConnectionSource {
  getConnection(): Promise<PoolConnection>;
  /** The connection failed, or its host said it cannot serve: in a cluster, that host rests and the next one serves. */
  failed(connection: PoolConnection): void;
  /** Connections in use, idle, and requests waiting for one. */
  stats(): { inUse: number; idle: number; queued: number };
  /** Whether `getConnection` would hand over an idle connection now, without waiting. */
  hasIdle(): boolean;
  end(): Promise<void>;
}

export interface DatabaseTimings {
  /** Longest a statement may run (QUERY_TIMEOUT_MS): the database aborts it, and the client stops waiting soon after. */
  queryTimeoutMs: number;
  /** Longest to wait for a pooled connection (DB_ACQUIRE_TIMEOUT_MS). */
  acquireTimeoutMs: number;
  /** How many times an operation runs in all: the first try and up to 3 more (docs/internals/contract.md §7). */
  attempts: number;
}

export const DEFAULT_TIMINGS: DatabaseTimings = { queryTimeoutMs: 10_000, acquireTimeoutMs: 1000, attempts: 4 };

/**
 * An operation's whole time (acquiring a connection, its statements, its
 * retries) stays within the statement limit and a margin, so that a hung
 * database (a stopped process) still gets every request answered within
 * QUERY_TIMEOUT_MS + 1 s.
 */
const MARGIN_MS = 750;

/**
 * The database as the server uses it: every operation bounded in time,
 * every fault a `DatabaseFault` (503, never 500, never a hang), reads and
 * whole transactions run again when that is safe:
 * - a transaction the database rolled back (deadlock, Galera conflict, lock
 *   wait) runs again, up to 3 more times with jittered backoff;
 * - a connection that failed before COMMIT was sent committed nothing: the
 *   operation runs again on another connection (another host, in a cluster);
 * - a failure during COMMIT leaves the outcome unknown: 503, never again.
 */
export class Database extends EventEmitter<{ retry: [{ reason: string; attempt: number }] }> implements Queryable {
  constructor(
    readonly source: ConnectionSource,
    readonly timings: DatabaseTimings = DEFAULT_TIMINGS,
  ) {
    super();
  }

  /** Autocommit statement: a read, or a write whose retry is safe only when it never reached the server. */
  select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]> {
    // A read runs again after a connection fault; an autocommit write might have been applied, so it does not.
    return this.attempt(AUTOCOMMIT_READ, (connection) => execute<Row[]>(connection, sql, values));
  }

  write(sql: string, values: readonly SqlValue[]): Promise<WriteResult> {
    return this.attempt(AUTOCOMMIT_WRITE, (connection) => new StatementRunner(connection).write(sql, values));
  }

  /**
   * Runs `work` on one connection inside one transaction; any failure rolls every step back (`TransactionOptions`
   * say how it starts and how it commits).
   */
  transaction<T>(work: (db: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.attempt({ transaction: true, retryConnectionFaults: true, withinMs: options?.withinMs }, async (connection) => {
      const runner = new StatementRunner(connection);
      if (options?.isolation === 'read committed') await query(connection, 'set transaction isolation level read committed');
      await query(connection, 'start transaction');
      const result = await work(runner);
      try {
        const committing = options?.commit?.(runner) ?? false;
        if (committing === false || !(await committing)) await query(connection, 'commit');
      } catch (error) {
        const fault = faultOf(error);
        // The COMMIT may or may not have been applied: running the work again could apply it twice.
        if (fault && fault.kind !== 'conflict') throw new DatabaseFault(fault.kind, 'db_commit_unknown', { cause: error });
        throw error;
      }
      return result;
    });
  }

  /**
   * One round trip within `withinMs`, and on a Galera node (`wsrep_on`) that
   * node synced: what readiness asks (docs/internals/contract.md §7). Throws why not.
   */
  async ping(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    const connection = await this.acquire(deadline);
    let broken = true;
    try {
      type State = { wsrep: number | string; state: string | null }[];
      const rows = await query<State>(connection, { sql: GALERA_STATE, timeout: remaining(deadline) }).catch(async (error: { errno?: number }) => {
        // MySQL has no wsrep variables: a plain round trip says enough.
        if (error.errno !== 1193) throw error;
        return query<State>(connection, { sql: 'select 0 as wsrep, null as state', timeout: remaining(deadline) });
      });
      broken = false;
      const [row] = rows;
      if (Number(row?.wsrep) === 1 && row?.state !== 'Synced') {
        this.source.failed(connection);
        throw new Error(`the Galera node is not synced (${row?.state ?? 'unknown'})`);
      }
    } catch (error) {
      throw faultOf(error) ?? error;
    } finally {
      if (broken) connection.destroy();
      else connection.release();
    }
  }

  stats(): { inUse: number; idle: number; queued: number } {
    return this.source.stats();
  }

  end(): Promise<void> {
    return this.source.end();
  }

  /**
   * Acquires a connection and runs `operation` on it, again on a fresh one when
   * the fault allows, within one deadline. A connection that failed, or whose
   * statement timed out (it may still be running), is destroyed, not pooled.
   */
  private async attempt<T>(
    options: { transaction: boolean; retryConnectionFaults: boolean; withinMs?: number | undefined },
    operation: (connection: PoolConnection) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + (options.withinMs ?? this.timings.queryTimeoutMs) + MARGIN_MS;
    for (let attempt = 1; ; attempt++) {
      const connection = await this.acquire(deadline);
      let broken = false;
      try {
        // A database that stopped answering (a SIGSTOPped process) is not waited for past the deadline; the
        // connection is then destroyed below, so nothing of it is reused.
        return await bounded(operation(connection), remaining(deadline), TIMED_OUT);
      } catch (error) {
        const fault = faultOf(error);
        // A conflict or a full database undid the statement and left the connection sound: rolled back below, reused.
        broken = fault !== undefined && fault.kind !== 'conflict' && fault.kind !== 'full';
        if (fault && (fault.kind === 'connection' || fault.kind === 'unavailable')) this.source.failed(connection);
        if (options.transaction && !broken) {
          // A statement failed (a constraint, a deadlock): end the transaction before the connection goes back.
          await query(connection, { sql: 'rollback', timeout: Math.max(remaining(deadline), 1) }).catch(() => (broken = true));
        }
        if (!fault) throw error;
        if (!mayRunAgain(fault, options, attempt, this.timings.attempts, remaining(deadline))) throw fault;
        this.emit('retry', { reason: fault.reason, attempt });
        await pause(attempt, remaining(deadline));
      } finally {
        if (broken) connection.destroy();
        else connection.release();
      }
    }
  }

  /** A pooled connection within the acquire limit (and the operation's deadline), or a fault. */
  private async acquire(deadline: number): Promise<PoolConnection> {
    try {
      // An idle connection is handed over at once: there is no wait to bound, and no timer to arm and clear.
      if (this.source.hasIdle()) return await this.source.getConnection();
      // A connection that comes after all, too late, goes straight back.
      const limit = Math.min(this.timings.acquireTimeoutMs, remaining(deadline));
      return await bounded(this.source.getConnection(), limit, POOL_EXHAUSTED, (late) => late.release());
    } catch (error) {
      if (error instanceof DatabaseFault) throw error;
      if (error instanceof Error && /Queue limit reached|No connections available/.test(error.message))
        throw new DatabaseFault('timeout', 'db_pool_exhausted', { cause: error });
      // Whatever the driver or the database says stops a connection being made or set up (the database
      // refusing the server's user or its database, 1045 and 1044, as much as a refused socket) is the
      // database's to mend, never the client's: 503, with the driver's words in the log. No request ran on it.
      // An error of no driver's (a bug) stays what it is.
      const fault = faultOf(error);
      if (fault) throw fault;
      if (typeof (error as { code?: unknown } | null)?.code === 'string') throw new DatabaseFault('connection', 'db_unreachable', { cause: error });
      throw error;
    }
  }
}

export interface TransactionOptions {
  /**
   * The transaction's level (the server's default, REPEATABLE READ, otherwise): READ COMMITTED for a locking
   * scan that must not hold gap locks against other writers (runtime/events/ claims).
   */
  isolation?: 'read committed';
  /**
   * Runs once `work` is done, in place of the COMMIT when it answers true: a last statement that commits too,
   * so that the two take one round trip (runtime/events/: a request's event and its COMMIT). False, or a
   * promise of false: it wrote what it had, if anything, and the COMMIT follows (plain false costs a
   * transaction with nothing of its own no wait). A failure of it is a failure of the COMMIT: the transaction
   * rolls back, or, when the connection failed, its outcome is unknown.
   */
  commit?: (db: Queryable) => Promise<boolean> | false;
  /**
   * How long the whole transaction may take, retries included (QUERY_TIMEOUT_MS otherwise): a batch's own bound
   * (runtime/batch/), longer or shorter than one statement's. Each statement stays within QUERY_TIMEOUT_MS.
   */
  withinMs?: number;
}

const AUTOCOMMIT_READ = { transaction: false, retryConnectionFaults: true } as const;
const AUTOCOMMIT_WRITE = { transaction: false, retryConnectionFaults: false } as const;

/** Whether the server is a Galera node, and if so its state (Synced when it may serve). */
const GALERA_STATE = `select @@wsrep_on as wsrep,
  (select variable_value from information_schema.global_status where variable_name = 'WSREP_LOCAL_STATE_COMMENT') as state`;

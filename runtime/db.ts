import { EventEmitter } from 'node:events';
import type { ExecuteValues, PoolConnection, QueryOptions, ResultSetHeader } from 'mysql2';
import { DatabaseFault, faultOf } from './db-faults.js';

/**
 * A value bound to a `?` placeholder; nothing is ever spliced into SQL text.
 * Request parameters are scalars; a value read from an earlier step's row is
 * whatever the driver returned for that column (a Date, a Buffer, ...).
 */
export type SqlValue = unknown;

/** What a write statement reports (docs/contract.md §3). */
export interface WriteResult {
  affectedRows: number;
  /** null when the statement generated no id. */
  insertId: number | null;
}

/** What generated handlers run their steps on: the pool, or one transaction's connection. */
export interface Queryable {
  select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]>;
  write(sql: string, values: readonly SqlValue[]): Promise<WriteResult>;
}

/** Where connections come from: one pool, or a pool per host in order (db-url.ts). Narrow, so a cluster can stand in. */
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
  /** How many times an operation runs in all: the first try and up to 3 more (docs/contract.md §7). */
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
 * One statement on a connection, as one promise over mysql2's callback API
 * (its promise API wraps every connection and statement in objects and
 * promises of its own), run as the connection's prepared statement for its
 * text (`heldStatements`). The SQL goes as a string: mysql2's options-object
 * form, the only one taking a per-statement timeout, builds each statement's
 * options by object spread, which cost a third more CPU per statement here;
 * the operation's deadline bounds its statements instead (`Database.attempt`).
 */
function execute<T>(connection: PoolConnection, sql: string, values: readonly SqlValue[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = (error: (Error & { sql?: string }) | null, result: unknown) => {
      if (error === null) return resolve(result as T);
      // As connection.execute names it, for the log of a failed request (errors.ts).
      error.sql ??= sql;
      reject(error);
    };
    // Values mysql2 refuses: its own TypeError, as before.
    if (!values.every(isBindable)) return void connection.execute(sql, values as ExecuteValues, done);
    const held = heldStatements.get(connection)?.get(sql);
    if (held !== undefined) return void held.execute(values, done);
    connection.prepare(sql, (error, statement) => {
      if (error) return done(error, undefined);
      hold(connection, sql, statement);
      statement.execute(values, done);
    });
  });
}

type PreparedStatement = Parameters<NonNullable<Parameters<PoolConnection['prepare']>[1]>>[1];

/**
 * Each connection's prepared statements, by their SQL text. A statement run
 * through `connection.execute` is two commands, a Prepare that finds the
 * statement in the connection's cache and then the Execute, after an options
 * object, a check of every value and the tracing hooks: running the held
 * statement itself is one command (co-run against the same build without it:
 * 3% more Bearer GETs a second, 6% more public GETs, at 3% and 6% less CPU per
 * request). A generated project has a fixed set of statements, but a plug-in
 * may make its own texts: at most HELD_STATEMENTS are held per connection, the
 * oldest dropped first. mysql2 closes a statement only when its own cache
 * (maxPreparedStatements, 16,000 by default) evicts it, after that many other
 * texts were prepared since it was last asked for; the runtime asks for a text
 * only when it does not hold it, and holds fewer than that: a held statement
 * is always open.
 */
const heldStatements = new WeakMap<PoolConnection, Map<string, PreparedStatement>>();
const HELD_STATEMENTS = 256;

function hold(connection: PoolConnection, sql: string, statement: PreparedStatement): void {
  let held = heldStatements.get(connection);
  if (held === undefined) heldStatements.set(connection, (held = new Map()));
  if (held.size >= Math.min(HELD_STATEMENTS, (connection.config.maxPreparedStatements ?? 16_000) - 1)) held.delete(held.keys().next().value!);
  held.set(sql, statement);
}

/** What mysql2's execute accepts as a value (it throws a TypeError for the others). */
function isBindable(value: SqlValue): boolean {
  return value !== undefined && typeof value !== 'function';
}

/** A statement without parameters (transaction control, the readiness probe); options may bound it in time. */
function query<T>(connection: PoolConnection, sql: string | QueryOptions): Promise<T> {
  return new Promise((resolve, reject) => {
    connection.query(sql as QueryOptions, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result as T)));
  });
}

/** The statements of one operation, on its connection. */
class StatementRunner implements Queryable {
  constructor(private readonly connection: PoolConnection) {}

  select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]> {
    return execute<Row[]>(this.connection, sql, values);
  }

  async write(sql: string, values: readonly SqlValue[]): Promise<WriteResult> {
    const { affectedRows, insertId } = await execute<ResultSetHeader>(this.connection, sql, values);
    return { affectedRows, insertId: insertId === 0 ? null : insertId };
  }
}

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

  /** Runs `work` on one connection inside one transaction; any failure rolls every step back. */
  transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    return this.attempt({ transaction: true, retryConnectionFaults: true }, async (connection) => {
      const runner = new StatementRunner(connection);
      await query(connection, 'start transaction');
      const result = await work(runner);
      try {
        await query(connection, 'commit');
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
   * node synced: what readiness asks (docs/contract.md §7). Throws why not.
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
    options: { transaction: boolean; retryConnectionFaults: boolean },
    operation: (connection: PoolConnection) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + this.timings.queryTimeoutMs + MARGIN_MS;
    for (let attempt = 1; ; attempt++) {
      const connection = await this.acquire(deadline);
      let broken = false;
      try {
        // A database that stopped answering (a SIGSTOPped process) is not waited for past the deadline; the
        // connection is then destroyed below, so nothing of it is reused.
        return await bounded(operation(connection), remaining(deadline), TIMED_OUT);
      } catch (error) {
        const fault = faultOf(error);
        broken = fault !== undefined && fault.kind !== 'conflict';
        if (fault && (fault.kind === 'connection' || fault.kind === 'unavailable')) this.source.failed(connection);
        if (options.transaction && !broken) {
          // A statement failed (a constraint, a deadlock): end the transaction before the connection goes back.
          await query(connection, { sql: 'rollback', timeout: Math.max(remaining(deadline), 1) }).catch(() => (broken = true));
        }
        if (!fault) throw error;
        const again =
          attempt < this.timings.attempts &&
          fault.reason !== 'db_commit_unknown' &&
          // 1047 (a node not ready) ran nothing: any operation may run again, on the next host.
          (fault.kind === 'conflict' || fault.kind === 'unavailable' || (fault.kind === 'connection' && options.retryConnectionFaults)) &&
          remaining(deadline) > 50;
        if (!again) throw fault;
        this.emit('retry', { reason: fault.reason, attempt });
        // Full jitter: anywhere up to an exponentially growing bound, so that two requests that collided do
        // not collide again in step.
        await sleep(Math.min(remaining(deadline) / 2, Math.random() * 50 * 2 ** attempt));
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

const AUTOCOMMIT_READ = { transaction: false, retryConnectionFaults: true } as const;
const AUTOCOMMIT_WRITE = { transaction: false, retryConnectionFaults: false } as const;

/** Whether the server is a Galera node, and if so its state (Synced when it may serve). */
const GALERA_STATE = `select @@wsrep_on as wsrep,
  (select variable_value from information_schema.global_status where variable_name = 'WSREP_LOCAL_STATE_COMMENT') as state`;

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

const TIMED_OUT = () => new DatabaseFault('timeout', 'db_timeout');
const POOL_EXHAUSTED = () => new DatabaseFault('timeout', 'db_pool_exhausted');

/**
 * What `work` settles to, or the fault `timeout` makes once `ms` have passed.
 * Work that settles later settles nothing and is never unhandled; a value
 * that came too late is handed to `late` (a connection goes back to its pool).
 */
function bounded<T>(work: Promise<T>, ms: number, timeout: () => DatabaseFault, late?: (value: T) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      reject(timeout());
    }, ms);
    work.then(
      (value) => {
        if (expired) late?.(value);
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

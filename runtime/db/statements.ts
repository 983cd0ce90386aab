import type { ExecuteValues, PoolConnection, QueryOptions, ResultSetHeader } from 'mysql2';

/**
 * Statements on one connection: each text run as the connection's prepared
 * statement, held by the runtime, and the operation's statements as a
 * `Queryable`. What a statement means to a request (retries, deadlines,
 * transactions) is database.ts's.
 */

/**
 * A value bound to a `?` placeholder; nothing is ever spliced into SQL text.
 * Request parameters are scalars; a value read from an earlier step's row is
 * whatever the driver returned for that column (a Date, a Buffer, ...).
 */
export type SqlValue = unknown;

/** What a write statement reports (docs/internals/contract.md §3). */
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

/**
 * One statement on a connection, as one promise over mysql2's callback API
 * (its promise API wraps every connection and statement in objects and
 * promises of its own), run as the connection's prepared statement for its
 * text (`heldStatements`). The SQL goes as a string: mysql2's options-object
 * form, the only one taking a per-statement timeout, builds each statement's
 * options by object spread, which cost a third more CPU per statement here;
 * the operation's deadline bounds its statements instead (`Database.attempt`).
 */
export function execute<T>(connection: PoolConnection, sql: string, values: readonly SqlValue[]): Promise<T> {
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
export function query<T>(connection: PoolConnection, sql: string | QueryOptions): Promise<T> {
  return new Promise((resolve, reject) => {
    connection.query(sql as QueryOptions, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result as T)));
  });
}

/** The statements of one operation, on its connection. */
export class StatementRunner implements Queryable {
  constructor(private readonly connection: PoolConnection) {}

  select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]> {
    return execute<Row[]>(this.connection, sql, values);
  }

  async write(sql: string, values: readonly SqlValue[]): Promise<WriteResult> {
    const { affectedRows, insertId } = await execute<ResultSetHeader>(this.connection, sql, values);
    return { affectedRows, insertId: insertId === 0 ? null : insertId };
  }
}

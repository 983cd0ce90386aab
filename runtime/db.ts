import mysql from 'mysql2/promise';

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

/**
 * The few mysql2 methods the runtime needs (kysely's mysql dialect does the
 * same), so that a test or another driver can stand in.
 */
interface Executor {
  execute(sql: string, values: mysql.ExecuteValues[]): Promise<[unknown, unknown]>;
}

class StatementRunner implements Queryable {
  constructor(private readonly executor: Executor) {}

  async select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]> {
    const [rows] = await this.executor.execute(sql, values as mysql.ExecuteValues[]);
    return rows as Row[];
  }

  async write(sql: string, values: readonly SqlValue[]): Promise<WriteResult> {
    const [header] = await this.executor.execute(sql, values as mysql.ExecuteValues[]);
    const { affectedRows, insertId } = header as mysql.ResultSetHeader;
    return { affectedRows, insertId: insertId === 0 ? null : insertId };
  }
}

export class Database implements Queryable {
  private readonly runner: StatementRunner;

  constructor(readonly pool: mysql.Pool) {
    this.runner = new StatementRunner(pool);
  }

  select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]> {
    return this.runner.select<Row>(sql, values);
  }

  write(sql: string, values: readonly SqlValue[]): Promise<WriteResult> {
    return this.runner.write(sql, values);
  }

  /** Runs `work` on one connection inside one transaction; any failure rolls every step back. */
  async transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    const connection = await this.pool.getConnection();
    let broken = false;
    try {
      await connection.beginTransaction();
      const result = await work(new StatementRunner(connection));
      await connection.commit();
      return result;
    } catch (error) {
      // A connection that cannot roll back is discarded, which ends its transaction too.
      await connection.rollback().catch(() => (broken = true));
      throw error;
    } finally {
      if (broken) connection.destroy();
      else connection.release();
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

export interface DatabaseOptions {
  /**
   * Longest a statement may run, in milliseconds: the server aborts it
   * (MariaDB max_statement_time) and the client stops waiting shortly after.
   */
  statementTimeoutMs?: number;
}

/** `mysql://user:pass@host:port/db`; query options such as `?connectionLimit=20` pass to mysql2. */
export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Node's own error would print the input, password included.
    throw new Error('DATABASE_URL is not a valid URL: percent-encode special characters in the user and password');
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new Error('DATABASE_URL must start with mysql://');
  }
  const extra: Record<string, string> = Object.fromEntries(parsed.searchParams);
  const pool = mysql.createPool({
    host: parsed.hostname || 'localhost',
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || undefined,
    socketPath: extra.socketPath,
    connectionLimit: extra.connectionLimit ? Number(extra.connectionLimit) : 10,
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
  const timeout = options.statementTimeoutMs ?? 10_000;
  if (timeout > 0) {
    // Every new connection gets the limit before its first statement. MariaDB only; MySQL ignores the error.
    pool.pool.on('connection', (connection) => {
      connection.query(`set session max_statement_time = ${Number(timeout) / 1000}`, () => {});
    });
  }
  return new Database(pool);
}

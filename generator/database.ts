import mysql from 'mysql2/promise';
import { connectionOptions } from '../runtime/db/url.js';
import type { FieldInfo, StatementDescriber, TableColumn } from './types/columns.js';

/** The code of the error a call fails with when the database does not answer it in time. */
export const NO_ANSWER = 'XMLREST_NO_ANSWER';

/**
 * A connection that prepares statements to read their result columns, and
 * nothing else: to the first host of DATABASE_URL that answers, with its TLS
 * (the console regenerates inside the server, over the same kind of link as its pool).
 * A call the database does not answer within `deadlineMs` (10 s by default, as the server's QUERY_TIMEOUT_MS)
 * drops the connection and fails with a fatal error, code NO_ANSWER, as a lost connection does: a database
 * that stopped answering is never waited for.
 */
export async function openDescriber(url: string, options: { deadlineMs?: number } = {}): Promise<StatementDescriber & { close(): Promise<void> }> {
  const connection = answering(await firstAnswering(url), options.deadlineMs ?? 10_000);
  return {
    async describe(sql: string): Promise<FieldInfo[]> {
      const prepared = await connection.prepare(sql);
      try {
        // mysql2's promise wrapper keeps the driver's statement, which holds the column definitions.
        const statement = (prepared as unknown as { statement: { columns?: FieldInfo[] } }).statement;
        return statement.columns ?? [];
      } finally {
        // Closing a statement asks for no answer.
        await prepared.close();
      }
    },
    async columnsOf(table: string): Promise<TableColumn[]> {
      const [rows] = await connection.execute(
        `select column_name as name, data_type as dataType, column_type as columnType,
                is_nullable = 'YES' as nullable, character_maximum_length as maxLength, datetime_precision as \`precision\`,
                collation_name as collation
           from information_schema.columns
          where table_schema = database() and table_name = ?
          order by ordinal_position`,
        [table],
      );
      // What each column references (a foreign key): who owns a table's rows (analyse/ownership.ts).
      const [keys] = await connection.execute(
        `select column_name as name, concat(referenced_table_name, '.', referenced_column_name) as refers
           from information_schema.key_column_usage
          where table_schema = database() and table_name = ? and referenced_table_name is not null`,
        [table],
      );
      const references = new Map((keys as { name: string; refers: string }[]).map((key) => [key.name, key.refers]));
      return (
        rows as {
          name: string;
          dataType: string;
          columnType: string;
          nullable: number;
          maxLength: number | string | null;
          precision: number | string | null;
          collation: string | null;
        }[]
      ).map((row) => ({
        name: row.name,
        dataType: row.dataType,
        columnType: row.columnType,
        nullable: Boolean(row.nullable),
        maxLength: row.maxLength === null ? null : Number(row.maxLength),
        precision: row.precision === null ? null : Number(row.precision),
        collation: row.collation,
        ...(references.has(row.name) ? { references: references.get(row.name)! } : {}),
      }));
    },
    async uniqueKeysOf(table: string): Promise<string[][]> {
      const [rows] = await connection.execute(
        `select index_name as name, column_name as \`column\`
           from information_schema.statistics
          where table_schema = database() and table_name = ? and non_unique = 0
          order by index_name, seq_in_index`,
        [table],
      );
      const indexes = new Map<string, string[]>();
      for (const row of rows as { name: string; column: string }[]) indexes.set(row.name, [...(indexes.get(row.name) ?? []), row.column]);
      return [...indexes.values()];
    },
    async viewsAmong(tables: readonly string[]): Promise<string[]> {
      if (tables.length === 0) return [];
      const [rows] = await connection.execute(
        `select lower(table_name) as name from information_schema.tables
          where table_schema = database() and table_type = 'VIEW' and lower(table_name) in (${tables.map(() => '?').join(', ')})`,
        tables.map((table) => table.toLowerCase()),
      );
      return (rows as { name: string }[]).map((row) => row.name).sort();
    },
    async routines(): Promise<string[]> {
      const [rows] = await connection.execute(`select distinct lower(routine_name) as name from information_schema.routines where routine_schema = database()`);
      return (rows as { name: string }[]).map((row) => row.name).sort();
    },
    async tablesWithColumn(column: string): Promise<string[]> {
      const [rows] = await connection.execute(
        `select distinct table_name as name from information_schema.columns
          where table_schema = database() and lower(column_name) = lower(?)`,
        [column],
      );
      return (rows as { name: string }[]).map((row) => row.name).sort();
    },
    close: () => connection.end(),
  };
}

/** What the describer calls of a connection, each call failing past the deadline, the connection dropped. */
function answering(connection: mysql.Connection, deadlineMs: number): Pick<mysql.Connection, 'prepare' | 'execute' | 'end'> {
  let dropped = false;
  const answered = <T>(work: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        dropped = true;
        connection.destroy();
        reject(Object.assign(new Error(`the database did not answer within ${deadlineMs} ms`), { code: NO_ANSWER, fatal: true }));
      }, deadlineMs);
    });
    return Promise.race([work, late])
      .catch((error: unknown) => {
        // A lost connection is dropped too: ending it would wait for an answer that cannot come.
        if ((error as { fatal?: boolean }).fatal === true && !dropped) {
          dropped = true;
          connection.destroy();
        }
        throw error;
      })
      .finally(() => clearTimeout(timer));
  };
  return {
    prepare: ((...args: Parameters<mysql.Connection['prepare']>) => answered(connection.prepare(...args))) as mysql.Connection['prepare'],
    execute: ((...args: Parameters<mysql.Connection['execute']>) => answered(connection.execute(...args))) as mysql.Connection['execute'],
    // A dropped connection has nothing to end.
    end: () => (dropped ? Promise.resolve() : answered(connection.end())),
  };
}

async function firstAnswering(url: string): Promise<mysql.Connection> {
  let last: unknown;
  for (const host of connectionOptions(url)) {
    try {
      return await mysql.createConnection({ ...host, multipleStatements: false });
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

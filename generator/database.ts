import mysql from 'mysql2/promise';
import { connectionOptions } from '../runtime/db/url.js';
import type { FieldInfo, StatementDescriber, TableColumn } from './types.js';

/**
 * A connection that prepares statements to read their result columns, and
 * nothing else: to the first host of DATABASE_URL that answers, with its TLS
 * (the console regenerates inside the server, over the same kind of link as its pool).
 */
export async function openDescriber(url: string): Promise<StatementDescriber & { close(): Promise<void> }> {
  const connection = await firstAnswering(url);
  return {
    async describe(sql: string): Promise<FieldInfo[]> {
      const prepared = await connection.prepare(sql);
      try {
        // mysql2's promise wrapper keeps the driver's statement, which holds the column definitions.
        const statement = (prepared as unknown as { statement: { columns?: FieldInfo[] } }).statement;
        return statement.columns ?? [];
      } finally {
        await prepared.close();
      }
    },
    async columnsOf(table: string): Promise<TableColumn[]> {
      const [rows] = await connection.execute(
        `select column_name as name, data_type as dataType, column_type as columnType,
                is_nullable = 'YES' as nullable, character_maximum_length as maxLength, datetime_precision as \`precision\`
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
        rows as { name: string; dataType: string; columnType: string; nullable: number; maxLength: number | string | null; precision: number | string | null }[]
      ).map((row) => ({
        name: row.name,
        dataType: row.dataType,
        columnType: row.columnType,
        nullable: Boolean(row.nullable),
        maxLength: row.maxLength === null ? null : Number(row.maxLength),
        precision: row.precision === null ? null : Number(row.precision),
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
    close: () => connection.end(),
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

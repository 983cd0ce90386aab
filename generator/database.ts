import mysql from 'mysql2/promise';
import type { FieldInfo, StatementDescriber } from './types.js';

/** A connection that prepares statements to read their result columns, and nothing else. */
export async function openDescriber(url: string): Promise<StatementDescriber & { close(): Promise<void> }> {
  const connection = await mysql.createConnection({ uri: url, multipleStatements: false });
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
    close: () => connection.end(),
  };
}

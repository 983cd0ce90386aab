import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import type { TestProject } from 'vitest/node';
import { startPrivateMariadb } from '../../scripts/mariadb.js';
import { createDefaultTables } from '../../scripts/schema.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** Starts a fresh private MariaDB with the default and demo tables, once per test run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const database = await startPrivateMariadb({ dir: 'test/.tmp/mariadb', fresh: true, database: 'xmlrest_test', log });
  const connection = await mysql.createConnection({ uri: database.url, multipleStatements: true });
  await createDefaultTables(connection);
  await connection.query(readFileSync('scripts/demo.sql', 'utf8'));
  await connection.end();
  process.stdout.write(`private MariaDB ready in ${Date.now() - started} ms on port ${database.port}\n`);
  project.provide('databaseUrl', database.url);
  return () => database.stop();
}

import type { TestProject } from 'vitest/node';
import { startPrivateMariadb } from '../../scripts/mariadb.js';
import { createDemoDatabase } from '../../scripts/schema.js';

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
  await createDemoDatabase(database.url);
  process.stdout.write(`private MariaDB ready in ${Date.now() - started} ms on port ${database.port}\n`);
  project.provide('databaseUrl', database.url);
  return () => database.stop();
}

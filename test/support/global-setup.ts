import type { TestProject } from 'vitest/node';
import { startPrivateMariadb } from '../../scripts/mariadb.js';
import { createDemoDatabase } from '../../scripts/schema.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** The private MariaDB's socket, through which a test file makes a database of its own (own-database.ts); null with DATABASE_URL. */
    databaseSocket: string | null;
  }
}

/**
 * Once per test run of the integration project: the database the tests share, with the default and demo
 * tables. A fresh private MariaDB, or the one DATABASE_URL names (a Galera cluster included: no test assumes
 * consecutive ids); a test that stops or kills its database starts one of its own.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const external = process.env.DATABASE_URL;
  if (external) {
    await createDemoDatabase(external);
    project.provide('databaseUrl', external);
    project.provide('databaseSocket', null);
    log('testing against the database DATABASE_URL names');
    return undefined;
  }
  const started = Date.now();
  const database = await startPrivateMariadb({ dir: 'test/.tmp/mariadb', fresh: true, database: 'xmlrest_test', log });
  await createDemoDatabase(database.url);
  log(`private MariaDB ready in ${Date.now() - started} ms on port ${database.port}`);
  project.provide('databaseUrl', database.url);
  project.provide('databaseSocket', database.socket);
  return () => database.stop();
}

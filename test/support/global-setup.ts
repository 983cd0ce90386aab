import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { startPrivateMariadb } from '../../scripts/mariadb.js';
import { createDemoDatabase } from '../../scripts/schema.js';
import { CHROMIUM, ensurePackages, MARIADB, SQLMAP, XMLLINT } from '../../scripts/system-packages.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/**
 * Once per test run: the Debian packages the suites use (a fresh machine installs them here, in one apt-get
 * run, rather than inside a test's time limit), the build that `npm start` runs (tests of the built server
 * use it), and a fresh private MariaDB with the default and demo tables.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  ensurePackages([MARIADB, CHROMIUM, XMLLINT, SQLMAP], log);
  execFileSync('npm', ['run', '-s', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const started = Date.now();
  const database = await startPrivateMariadb({ dir: 'test/.tmp/mariadb', fresh: true, database: 'xmlrest_test', log });
  await createDemoDatabase(database.url);
  process.stdout.write(`private MariaDB ready in ${Date.now() - started} ms on port ${database.port}\n`);
  project.provide('databaseUrl', database.url);
  return () => database.stop();
}

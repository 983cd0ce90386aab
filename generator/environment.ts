import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a command finds its database. Apart from project.ts, which loads the whole generator (ts-morph among
 * it): a command that only reads DATABASE_URL (user add, explain) starts without it.
 */

/** Where `npm run demo` keeps the URL of its private MariaDB (scripts/demo.ts), relative to the project. */
export const DEMO_DATABASE_URL_FILE = '.xmlrest/demo-db/url';

/**
 * DATABASE_URL from the environment or `.env` (the environment wins); when neither sets it and the project
 * holds the demo's database, that one, said in one line on stderr: a command the demo or the README prints
 * then works pasted into a new terminal in the project folder, where the demo's own `export` was never run.
 */
export function databaseUrlFromEnvironment(root: string, note: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): string | undefined {
  if (!process.env.DATABASE_URL && existsSync(path.join(root, '.env'))) process.loadEnvFile(path.join(root, '.env'));
  if (!process.env.DATABASE_URL) {
    const saved = path.join(root, DEMO_DATABASE_URL_FILE);
    const url = existsSync(saved) ? readFileSync(saved, 'utf8').trim() : '';
    if (url !== '') {
      // Set for the rest of this process, so that it is said once and every part of the command sees the same.
      process.env.DATABASE_URL = url;
      note(`xmlrest: DATABASE_URL is not set: using the demo's database (${DEMO_DATABASE_URL_FILE}; npm run demo starts it)`);
    }
  }
  return process.env.DATABASE_URL || undefined;
}

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a command finds its database. Apart from project.ts, which loads the whole generator (ts-morph among
 * it): a command that only reads DATABASE_URL (user add, explain) starts without it.
 */

/** Where `npm run demo` keeps the URL of its private MariaDB (scripts/demo.ts), relative to the project. */
export const DEMO_DATABASE_URL_FILE = '.xmlrest/demo-db/url';

/** Where `npm run dev` (`xmlrest dev`) keeps the URL of its private MariaDB (scripts/dev-server.ts), relative to the project. */
export const DEV_DATABASE_URL_FILE = '.xmlrest/dev-db/url';

/** The private databases a project may hold, in the order they are taken, and what starts each. */
const SAVED_DATABASES = [
  { file: DEMO_DATABASE_URL_FILE, what: "the demo's database", starts: 'npm run demo' },
  { file: DEV_DATABASE_URL_FILE, what: "npm run dev's database", starts: 'npm run dev' },
] as const;

/**
 * DATABASE_URL from the environment or `.env` (the environment wins); when neither sets it and the project
 * holds a private database of the demo's or of `npm run dev`, that one, said in one line on stderr: a command the
 * demo, `xmlrest init` or the README prints then works pasted into a new terminal in the project folder, where no
 * `export` was ever run. `skip` names a saved URL not to take: dev's own, when dev decides whether to start its database.
 */
export function databaseUrlFromEnvironment(
  root: string,
  note: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  { skip }: { skip?: string } = {},
): string | undefined {
  if (!process.env.DATABASE_URL && existsSync(path.join(root, '.env'))) process.loadEnvFile(path.join(root, '.env'));
  if (!process.env.DATABASE_URL) {
    for (const database of SAVED_DATABASES) {
      if (database.file === skip) continue;
      const file = path.join(root, database.file);
      const url = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
      if (url === '') continue;
      // Set for the rest of this process, so that it is said once and every part of the command sees the same.
      process.env.DATABASE_URL = url;
      note(`xmlrest: DATABASE_URL is not set: using ${database.what} (${database.file}; ${database.starts} starts it)`);
      break;
    }
  }
  return process.env.DATABASE_URL || undefined;
}

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cliPage } from './cli.js';
import { errorsPage } from './errors.js';
import { logsPage } from './logs.js';
import { page, table } from './markdown.js';
import { metricsPage, prepareMetrics } from './metrics.js';
import { parametersPage } from './parameters.js';
import { settingsPage } from './settings.js';
import { xmlPage } from './xml.js';

/**
 * `npm run docs`: docs/reference/, made from the code's own tables (one module per page), so that it cannot
 * go stale. `npm run docs -- --check` writes nothing and exits 1 naming each page that differs (and the first
 * line that does), as `generate --check` does; test/unit/reference.test.ts runs the same comparison.
 */
export const REFERENCE_DIR = 'docs/reference';

const PAGES: readonly { file: string; title: string; about: string; make: () => string }[] = [
  { file: 'xml.md', title: 'Resource files and backend.xml', about: 'every element and attribute, from the schema', make: xmlPage },
  { file: 'parameters.md', title: 'Parameters', about: 'every parameter type and the 400 a bad value gets', make: parametersPage },
  { file: 'settings.md', title: 'Settings', about: 'every environment setting npm start reads', make: settingsPage },
  { file: 'cli.md', title: 'The xmlrest command', about: 'every command, argument and option', make: cliPage },
  { file: 'errors.md', title: 'Errors', about: 'every error status, its body and reason code', make: errorsPage },
  { file: 'logs.md', title: 'Logs', about: 'every log message and the reasons of the request line', make: logsPage },
  { file: 'metrics.md', title: 'Metrics', about: 'every Prometheus metric', make: metricsPage },
];

function indexPage(): string {
  return page('Reference', 'scripts/docs/reference.ts', [
    'Made from the code by `npm run docs`, and checked by `test/unit/reference.test.ts`: a page that disagrees with the code fails the tests.',
    table(
      ['page', 'what it lists'],
      PAGES.map((entry) => [`[${entry.title}](${entry.file})`, entry.about]),
    ),
  ]);
}

/** Every page's text, by file name. */
export async function referencePages(): Promise<Map<string, string>> {
  await prepareMetrics();
  const pages = new Map<string, string>([['index.md', indexPage()]]);
  for (const entry of PAGES) pages.set(entry.file, entry.make());
  return pages;
}

/** What differs between the pages and docs/reference/: one line per page, naming its first differing line. */
export function differences(pages: ReadonlyMap<string, string>, dir = REFERENCE_DIR): string[] {
  const problems: string[] = [];
  let present: string[] = [];
  try {
    present = readdirSync(dir).filter((file) => file.endsWith('.md'));
  } catch {
    // No folder yet: every page is missing.
  }
  for (const file of present) if (!pages.has(file)) problems.push(`${dir}/${file}: no such page any more (remove it)`);
  for (const [file, text] of [...pages].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!present.includes(file)) {
      problems.push(`${dir}/${file}: missing`);
      continue;
    }
    const written = readFileSync(`${dir}/${file}`, 'utf8');
    if (written === text) continue;
    const want = text.split('\n');
    const have = written.split('\n');
    const line = want.findIndex((wanted, index) => wanted !== have[index]);
    const at = line < 0 ? Math.min(want.length, have.length) : line;
    problems.push(
      `${dir}/${file}:${at + 1}: differs from the code: is ${JSON.stringify(have[at] ?? '(end)')}, should be ${JSON.stringify(want[at] ?? '(end)')}`,
    );
  }
  return problems;
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const pages = await referencePages();
  const problems = differences(pages);
  if (check) {
    for (const problem of problems) process.stderr.write(`${problem}\n`);
    if (problems.length > 0) process.stderr.write('run npm run docs to write docs/reference/ from the code\n');
    process.exit(problems.length > 0 ? 1 : 0);
  }
  mkdirSync(REFERENCE_DIR, { recursive: true });
  for (const [file, text] of pages) {
    let written: string | undefined;
    try {
      written = readFileSync(`${REFERENCE_DIR}/${file}`, 'utf8');
    } catch {
      written = undefined;
    }
    if (written !== text) {
      writeFileSync(`${REFERENCE_DIR}/${file}`, text);
      process.stdout.write(`wrote ${REFERENCE_DIR}/${file}\n`);
    }
  }
  // Pages are never removed silently: one that is no longer made is named by --check and the test.
  process.exit(0);
}

if (import.meta.url === `file://${process.argv[1]}`) void main();

// Whether the build (dist/) is current: `npm start` and the `xmlrest` command refuse a missing or stale one,
// and `xmlrest doctor` says so. Plain JavaScript, so that it runs with no build at all.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Files `npm run build` copies into dist/ beside the compiled modules (build-files.mjs), which read them at run
 * time and tsc does not copy.
 */
export const COPIED_FILES = [
  // The server serves it, and the console's regeneration rewrites it.
  'generated/openapi.json',
  // `xmlrest db init --demo`.
  'scripts/demo.sql',
  // `xmlrest doctor` and the command itself say whether the build is current.
  'scripts/build-state.mjs',
];

/** What tsconfig.build.json compiles when it cannot be read (a deployment holding dist/ alone). */
const DEFAULT_ENTRIES = ['runtime', 'generated', 'plugins', 'scripts/serve.ts', 'scripts/project-host.ts', 'scripts/cli/xmlrest.ts', 'console/server.ts'];

/**
 * Sources changed since they were built: a module that tsconfig.build.json names (its folders, each file of
 * them, and its files) with no compiled module or an older one; any other compiled module (one of those
 * imports it: the generator, the console, the commands) older than its source; a file the build copies
 * (COPIED_FILES) older than its source; a console page older than its sources. A deployment holding only dist/
 * has no sources to compare, and starts.
 */
export function staleSources(root, dist = path.join(root, 'dist')) {
  const found = new Set();
  const mtime = (file) => statSync(file).mtimeMs;
  const compiledOf = (source) => path.join(dist, path.relative(root, source)).replace(/\.ts$/, '.js');
  const isSource = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !path.basename(file).startsWith('.');
  for (const entry of buildEntries(root)) {
    const absolute = path.join(root, entry);
    const sources = entry.endsWith('.ts') ? (existsSync(absolute) ? [absolute] : []) : walk(absolute).filter(isSource);
    for (const source of sources) {
      const compiled = compiledOf(source);
      if (!existsSync(compiled) || mtime(compiled) < mtime(source)) found.add(path.relative(root, source));
    }
  }
  // The modules the entries import, compiled beside them: each against its own source.
  for (const compiled of walk(dist)) {
    if (!compiled.endsWith('.js')) continue;
    const source = path.join(root, path.relative(dist, compiled)).replace(/\.js$/, '.ts');
    if (existsSync(source) && mtime(compiled) < mtime(source)) found.add(path.relative(root, source));
  }
  // The files the build copies beside the compiled modules (build-files.mjs): the build uses its copies.
  for (const file of COPIED_FILES) {
    const source = path.join(root, file);
    const copy = path.join(dist, file);
    if (existsSync(source) && (!existsSync(copy) || mtime(copy) < mtime(source))) found.add(file);
  }
  const page = path.join(dist, 'console-ui/index.html');
  for (const source of walk(path.join(root, 'console/ui'))) {
    if (!existsSync(page) || mtime(page) < mtime(source)) {
      found.add(path.relative(root, source));
      break;
    }
  }
  return [...found];
}

/**
 * What `npm start`, `xmlrest start` and the bin say of a build older than its sources (`then`: what to run after
 * the build), naming the first few.
 */
export function staleBuildLine(stale, then = '') {
  return `xmlrest: the build is older than its sources (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): run \`npm run build\`${then}\n`;
}

/** The folders and files tsconfig.build.json compiles (its `include`). */
function buildEntries(root) {
  try {
    const include = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')).include;
    return Array.isArray(include) ? include : DEFAULT_ENTRIES;
  } catch {
    return DEFAULT_ENTRIES;
  }
}

function walk(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.split(path.sep).includes('node_modules'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

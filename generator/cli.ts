import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generate, type SourceFile } from './index.js';

/**
 * `npm run generate [-- --check]`: rewrites generated/ from resources/,
 * writing only files whose contents changed and removing stale ones. With
 * --check it writes nothing and exits 1 naming every file that would change.
 */
export interface RunOptions {
  root: string;
  check: boolean;
  resourcesDir?: string;
  outDir?: string;
  log?: (line: string) => void;
}

export function run(options: RunOptions): number {
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const resourcesDir = options.resourcesDir ?? 'resources';
  const outDir = options.outDir ?? 'generated';
  const sources = readSources(options.root, resourcesDir);
  const result = generate(sources, {
    resourcesDir,
    outDir,
    exists: (file) => existsSync(path.join(options.root, file)),
  });
  if (!result.ok) {
    for (const line of result.errors) log(line);
    log(`xmlrest: ${result.errors.length} error${result.errors.length === 1 ? '' : 's'}; nothing was written`);
    return 1;
  }
  // Only modules are the generator's: anything else in the folder is left alone.
  const existing = listFiles(options.root, outDir).filter((file) => file.endsWith('.ts'));
  const changes: string[] = [];
  for (const [file, text] of result.files) {
    const absolute = path.join(options.root, file);
    const before = existsSync(absolute) ? readFileSync(absolute, 'utf8') : undefined;
    if (before === text) continue;
    changes.push(`${before === undefined ? 'create' : 'update'} ${file}`);
    if (!options.check) {
      mkdirSync(path.dirname(absolute), { recursive: true });
      writeFileSync(absolute, text);
    }
  }
  for (const file of existing) {
    if (result.files.has(file)) continue;
    changes.push(`remove ${file}`);
    if (!options.check) rmSync(path.join(options.root, file));
  }
  if (!options.check) removeEmptyFolders(path.join(options.root, outDir));
  if (options.check) {
    if (changes.length === 0) return 0;
    for (const change of changes) log(change);
    log(`xmlrest: ${outDir}/ is stale (${changes.length} file${changes.length === 1 ? '' : 's'}); run npm run generate`);
    return 1;
  }
  for (const change of changes) log(change);
  log(`xmlrest: ${result.files.size} modules from ${sources.length} files, ${changes.length} changed`);
  return 0;
}

/** Every .xml file under resources/, at any depth, so that misplaced files are reported, not ignored. */
export function readSources(root: string, resourcesDir: string): SourceFile[] {
  return listFiles(root, resourcesDir)
    .filter((file) => file.endsWith('.xml'))
    .map((file) => ({ path: file, text: readFileSync(path.join(root, file), 'utf8') }));
}

function listFiles(root: string, dir: string): string[] {
  const absolute = path.join(root, dir);
  if (!existsSync(absolute)) return [];
  return (readdirSync(absolute, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

function removeEmptyFolders(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const child = path.join(dir, entry.name);
    removeEmptyFolders(child);
    if (readdirSync(child).length === 0) rmSync(child, { recursive: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--check');
  if (unknown.length > 0) {
    process.stderr.write(`xmlrest generate: unknown option ${unknown[0]} (usage: generate [--check])\n`);
    process.exit(2);
  }
  process.exit(run({ root: process.cwd(), check: args.includes('--check') }));
}

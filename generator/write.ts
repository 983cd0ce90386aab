import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { FileTexts } from './file-texts.js';

/**
 * Stage 4: the emitted files onto disk. Only files whose text changed are
 * written, modules nobody emits any more are removed, and with `check`
 * nothing is written at all: the changes are only listed (sqlc's diff).
 */
export interface WriteOptions {
  root: string;
  outDir: string;
  check: boolean;
  /** What earlier runs of this process read and wrote (`npm run dev`); a fresh one otherwise. */
  texts?: FileTexts;
}

/** Writes (or, checking, only compares) `files`; returns the changes as `create|update|remove <file>`. */
export function writeOutput(files: ReadonlyMap<string, string>, options: WriteOptions): string[] {
  const existing = listFiles(options.root, options.outDir).filter((file) => file.endsWith('.ts'));
  const texts = options.texts ?? new FileTexts();
  const changes: string[] = [];
  for (const [file, text] of files) {
    const absolute = path.join(options.root, file);
    const before = texts.read(absolute);
    if (before === text) continue;
    changes.push(`${before === undefined ? 'create' : 'update'} ${file}`);
    if (!options.check) {
      mkdirSync(path.dirname(absolute), { recursive: true });
      texts.write(absolute, text);
    }
  }
  for (const file of existing) {
    if (files.has(file)) continue;
    changes.push(`remove ${file}`);
    if (!options.check) rmSync(path.join(options.root, file));
  }
  if (!options.check) removeEmptyFolders(path.join(options.root, options.outDir));
  return changes;
}

/** Every file under `dir`, as project-relative POSIX paths, sorted. */
export function listFiles(root: string, dir: string): string[] {
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

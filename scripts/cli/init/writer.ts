import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Files written all or none: every file is checked before any is written, and each is written to a temporary
 * file beside it and renamed over its place, so that a file is never seen half-written.
 */

/** A file to write: its path relative to the project's folder, its text, and the conflicts found in it already. */
export interface PlannedFile {
  path: string;
  text: string;
  /** Set for a file merged into (package.json): what it says that this would change. Else: existing is a conflict. */
  conflicts?: readonly string[];
}

/** What stands in the way, one line each: a file that exists with other text, or what a merged file says otherwise. */
export function conflictsOf(folder: string, files: readonly PlannedFile[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const at = path.join(folder, file.path);
    if (file.conflicts !== undefined) found.push(...file.conflicts);
    else if (existsSync(at) && (!statSync(at).isFile() || readFileSync(at, 'utf8') !== file.text)) found.push(file.path);
  }
  return found;
}

/**
 * What the folder holds besides what a new project may start with (a package.json and what `npm install xmlrest`
 * made beside it) and the files init writes: a folder holding a project already is not init's to write into.
 */
const MAY_HOLD = new Set(['package.json', 'package-lock.json', 'npm-shrinkwrap.json', '.npmrc', 'node_modules', '.git']);

export function strangersIn(folder: string, files: readonly PlannedFile[]): string[] {
  if (!existsSync(folder)) return [];
  const planned = new Set(files.map((file) => file.path));
  const found: string[] = [];
  // What npm made (node_modules/: thousands of files) is passed by, not walked through.
  const visit = (relative: string): void => {
    for (const entry of readdirSync(path.join(folder, relative), { withFileTypes: true })) {
      const file = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (relative === '' && MAY_HOLD.has(entry.name)) continue;
      if (entry.isDirectory()) visit(file);
      else if (!planned.has(file)) found.push(file);
    }
  };
  visit('');
  return found.sort();
}

/** What no --force may replace: a folder, or anything else not a file, where a file is to be written. */
export function blockedOf(folder: string, files: readonly PlannedFile[]): string[] {
  return files
    .filter((file) => existsSync(path.join(folder, file.path)) && !statSync(path.join(folder, file.path)).isFile())
    .map((file) => `${file.path} (not a file)`);
}

/** Writes every file whose text differs from what is there; answers the paths written. */
export function writeFiles(folder: string, files: readonly PlannedFile[]): string[] {
  const written: string[] = [];
  for (const file of files) {
    const at = path.join(folder, file.path);
    if (existsSync(at) && statSync(at).isFile() && readFileSync(at, 'utf8') === file.text) continue;
    mkdirSync(path.dirname(at), { recursive: true });
    const temporary = path.join(path.dirname(at), `.${path.basename(at)}.${process.pid}.xmlrest-init`);
    try {
      writeFileSync(temporary, file.text, { flag: 'wx' });
      renameSync(temporary, at);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
    written.push(file.path);
  }
  return written;
}

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';

/** A fresh copy of the project's own files at `root` (tracked, or new and not ignored), as a clone has them; not the tests. */
export function copyProject(root: string): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { encoding: 'utf8' })
    .split('\n')
    .filter((file) => file !== '' && !file.startsWith('test/') && existsSync(file));
  for (const file of files) cpSync(file, path.join(root, file), { recursive: true });
}

/**
 * A copy that the built server runs from and the console may rewrite: the project's files, its build (copied
 * last, so newer than its sources) and a link to this checkout's node_modules, so that no test edits the
 * resources of the checkout itself.
 */
export function copyBuiltProject(root: string): void {
  copyProject(root);
  symlinkSync(path.resolve('node_modules'), path.join(root, 'node_modules'), 'dir');
  cpSync('dist', path.join(root, 'dist'), { recursive: true });
}

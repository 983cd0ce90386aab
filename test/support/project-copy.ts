import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
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

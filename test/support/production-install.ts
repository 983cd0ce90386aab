import { execFileSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { copyProject } from './project-copy.js';

/** What a production install must not hold: the build tools, and the build-time half of the typed client. */
export const BUILD_TOOLS = ['tsx', 'typescript', 'vite', 'vitest', 'xmlrest-typed-client', '@biomejs/js-api'];

/**
 * A production install at `root`, as a user makes one: the project's files as a clone has them, `npm ci
 * --omit=dev` (from npm's cache when it can), then the build made where the dev dependencies are (the test
 * run's global setup), copied last so that it is newer than its sources.
 */
export function productionInstall(root: string): void {
  copyProject(root);
  execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: root, stdio: 'ignore' });
  const present = BUILD_TOOLS.filter((tool) => existsSync(path.join(root, 'node_modules', tool)));
  if (present.length > 0) throw new Error(`a production install holds ${present.join(', ')}`);
  cpSync('dist', path.join(root, 'dist'), { recursive: true });
}

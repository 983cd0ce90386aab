import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { copyProject } from './project-copy.js';

/** What a production install must not reach: the build tools, and the build-time half of the typed client. */
export const BUILD_TOOLS = ['tsx', 'typescript', 'vite', 'vitest', 'xmlrest-typed-client', '@biomejs/js-api'];

/**
 * A production install, as a user makes one, in a new folder under the system's temporary folder: outside this
 * checkout, so that no node_modules of a folder above it lends it a package it lacks (Node looks for a package
 * in every folder up to the root). The project's files as a clone has them, `npm ci --omit=dev` (from npm's
 * cache when it can), then the build made where the dev dependencies are (the test run's global setup),
 * copied last so that it is newer than its sources. Returns its folder; `remove` it when done.
 */
export function productionInstall(name: string): string {
  const root = mkdtempSync(path.join(tmpdir(), `xmlrest-${name}-`));
  copyProject(root);
  execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: root, stdio: 'ignore' });
  // As Node would find them for the install's own modules.
  const resolve = createRequire(path.join(root, 'package.json')).resolve;
  const reachable = BUILD_TOOLS.filter((tool) => {
    try {
      resolve(`${tool}/package.json`);
      return true;
    } catch {
      return false;
    }
  });
  if (reachable.length > 0) throw new Error(`a production install reaches ${reachable.join(', ')}`);
  cpSync('dist', path.join(root, 'dist'), { recursive: true });
  return root;
}

export function removeInstall(root: string | undefined): void {
  if (root) rmSync(root, { recursive: true, force: true });
}

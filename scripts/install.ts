import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { XMLREST_VERSION } from '../runtime/version.js';
import { staleSources } from './build-state.mjs';

/**
 * Facts about the install a command or the server runs from: where its package.json is, whether it runs
 * compiled (dist/) or from source (tsx), whether the build tools are there (not in a production install),
 * its version, and which of a project's sources are newer than its build.
 */

/** Whether this module runs compiled, from dist/. */
export const FROM_BUILD = import.meta.url.endsWith('.js');

/** The folder of package.json: one level up from scripts/, two from dist/scripts/. */
export const PACKAGE_ROOT = path.resolve(fileURLToPath(new URL('.', import.meta.url)), FROM_BUILD ? '../..' : '..');

/** The package's version (`xmlrest --version`, the name spans give their instrumentation), as the runtime reads it. */
export function packageVersion(): string {
  return XMLREST_VERSION;
}

/**
 * Whether the build tools (TypeScript: a dev dependency, of this repository and of a team's project `xmlrest init`
 * wrote) can be loaded from the project the command runs in, as Node finds a package: in its node_modules or any
 * folder above it. Not in a production install (`npm ci --omit=dev`).
 */
export function buildToolsInstalled(project: string = process.cwd()): boolean {
  const require = createRequire(path.join(path.resolve(project), 'package.json'));
  try {
    require.resolve('typescript/package.json');
    return true;
  } catch {
    return false;
  }
}

const staleness = new Map<string, readonly string[]>();

/**
 * The sources of the project at `root` that are newer than its build (build-state.mjs), found once per process:
 * the `xmlrest` bin hands over what it found (`knowStaleSources`), and explain, key create and doctor reuse it.
 */
export function staleSourcesOf(root: string): readonly string[] {
  const absolute = path.resolve(root);
  let found = staleness.get(absolute);
  if (found === undefined) staleness.set(absolute, (found = staleSources(absolute)));
  return found;
}

export function knowStaleSources(root: string, stale: readonly string[]): void {
  staleness.set(path.resolve(root), stale);
}

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BackendModule } from '../runtime/index.js';
import { staleSources } from './build-state.mjs';

/**
 * What a command knows of the project it runs in: the backends generated/ serves (explain, key create,
 * doctor), read as the server reads them. The `xmlrest` command runs compiled from dist/ (a production
 * install: no tsx, no TypeScript compiler) or from source through tsx (`npm run xmlrest`, and a checkout whose
 * build is missing or stale); either way generated/ is read from the project's build when that is current,
 * else from its TypeScript sources, which only tsx can load.
 */

/** Whether this module runs compiled, from dist/. */
export const FROM_BUILD = import.meta.url.endsWith('.js');

/** The folder of package.json: one level up from scripts/, two from dist/scripts/. */
export const PACKAGE_ROOT = path.resolve(fileURLToPath(new URL('.', import.meta.url)), FROM_BUILD ? '../..' : '..');

/** Whether the build tools (the dev dependencies: TypeScript, tsx) are installed: not in a production install. */
export function buildToolsInstalled(): boolean {
  return existsSync(path.join(PACKAGE_ROOT, 'node_modules/typescript/package.json')) && existsSync(path.join(PACKAGE_ROOT, 'node_modules/tsx/package.json'));
}

export async function generatedBackends(root: string): Promise<BackendModule[]> {
  const compiled = path.join(root, 'dist/generated/index.js');
  const built = existsSync(compiled) && !staleSources(root).some((file) => file.startsWith('generated/'));
  if (built) return ((await import(pathToFileURL(compiled).href)) as { backends: BackendModule[] }).backends;
  const source = pathToFileURL(path.join(root, 'generated/index.ts')).href;
  // From source, tsx's loader is there already; compiled, it is asked for, where the dev dependencies are.
  if (!FROM_BUILD) return ((await import(source)) as { backends: BackendModule[] }).backends;
  let tsx: typeof import('tsx/esm/api');
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    throw new Error(`generated/ has no current build (dist/generated/): run npm run build`);
  }
  return ((await tsx.tsImport(source, import.meta.url)) as { backends: BackendModule[] }).backends;
}

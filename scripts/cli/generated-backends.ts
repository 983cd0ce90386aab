import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BackendModule, checkModuleFormat, type GeneratedIndex } from '../../runtime/index.js';
import { FROM_BUILD, staleSourcesOf } from '../install.js';

/**
 * What a command knows of the project it runs in: the backends generated/ serves (explain, key create,
 * doctor), read as the server reads them. The `xmlrest` command runs compiled from dist/ (a production
 * install: no tsx, no TypeScript compiler) or from source through tsx (`npm run xmlrest`, and a checkout whose
 * build is missing or stale); either way generated/ is read from the project's build when that is current,
 * else from its TypeScript sources, which only tsx can load. The project is the folder the command runs in.
 */
export async function generatedBackends(root: string): Promise<BackendModule[]> {
  // Modules of a format this runtime does not serve are refused as npm start refuses them (runtime/module-format.ts).
  const index = await generatedIndex(root);
  checkModuleFormat(index);
  return [...index.backends];
}

async function generatedIndex(root: string): Promise<GeneratedIndex> {
  const compiled = path.join(root, 'dist/generated/index.js');
  const source = path.join(root, 'generated/index.ts');
  if (!existsSync(compiled) && !existsSync(source)) {
    throw new Error(`${path.resolve(root)} holds no generated/: run xmlrest in the project's folder (where resources/ and generated/ are)`);
  }
  const built = existsSync(compiled) && !staleSourcesOf(root).some((file) => file.startsWith('generated/'));
  if (built) return (await import(pathToFileURL(compiled).href)) as GeneratedIndex;
  // From source, tsx's loader is there already; compiled, it is asked for, where the dev dependencies are.
  if (!FROM_BUILD) return (await import(pathToFileURL(source).href)) as GeneratedIndex;
  let tsx: typeof import('tsx/esm/api');
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    throw new Error(`generated/ has no current build (dist/generated/): run npm run build`);
  }
  return (await tsx.tsImport(pathToFileURL(source).href, import.meta.url)) as GeneratedIndex;
}

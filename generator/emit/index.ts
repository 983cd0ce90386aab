import path from 'node:path/posix';
import type { Project, Resource } from '../ir.js';
import type { RunCache } from '../run-cache.js';
import { emitBackendIndex, emitProjectIndex } from './indexes.js';
import { type EmitOptions, moduleName } from './layout.js';
import { emitResource } from './resource.js';

/**
 * Stage 3: the IR to TypeScript, one module per resource, one index per
 * backend and one for all backends. It never looks at XML. Every output is
 * formatted here, so that it is compared and written exactly as it will read.
 * It imports only downward: what its emitters share with it lives in layout.ts.
 */
export { type EmitOptions, moduleName } from './layout.js';

/**
 * Emitted modules kept by a long-running process (`npm run dev`), so that one
 * changed file re-emits one module: a resource's module by its file, made from
 * its IR (`resourceKeys`); a backend's index by its file, made from its
 * settings and the names of its resources (a changed statement leaves the
 * index as it was).
 */
export interface EmitCache {
  modules: RunCache<string>;
  keys: ResourceKeys;
}

/** Each resource's IR as JSON, with the options and the backend's name and scheme: all its module and its OpenAPI paths are made from. */
export type ResourceKeys = ReadonlyMap<Resource, string>;

export function resourceKeys(project: Project, options: EmitOptions): ResourceKeys {
  return new Map(
    project.backends.flatMap((backend) =>
      backend.resources.map((resource) => [resource, JSON.stringify([options, backend.name, backend.authScheme, resource])] as const),
    ),
  );
}

export function emit(project: Project, options: EmitOptions, cache?: EmitCache): Map<string, string> {
  const files = new Map<string, string>();
  for (const backend of project.backends) {
    for (const resource of backend.resources) {
      const file = path.join(options.outDir, backend.name, `${moduleName(resource)}.ts`);
      const make = () => emitResource(resource, file, options);
      files.set(file, cache ? cache.modules.through(file, cache.keys.get(resource)!, make) : make());
    }
    const index = path.join(options.outDir, backend.name, 'index.ts');
    const make = () => emitBackendIndex(backend, index, options);
    const from = cache ? JSON.stringify([options, { ...backend, resources: backend.resources.map(moduleName) }]) : '';
    files.set(index, cache ? cache.modules.through(index, from, make) : make());
  }
  const index = path.join(options.outDir, 'index.ts');
  files.set(index, emitProjectIndex(project, index, options));
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

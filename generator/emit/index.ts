import path from 'node:path/posix';
import type { Project, Resource } from '../ir.js';
import { emitBackendIndex, emitProjectIndex } from './indexes.js';
import { emitResource } from './resource.js';

/**
 * Stage 3: the IR to TypeScript, one module per resource, one index per
 * backend and one for all backends. It never looks at XML. Every output is
 * formatted here, so that it is compared and written exactly as it will read.
 */
export interface EmitOptions {
  /** Project-relative folder the modules go to, such as `generated`. */
  outDir: string;
  /** Project-relative folder of the runtime, such as `runtime`. */
  runtimeDir: string;
  /** Project-relative folder of the resource files, named in the index modules' headers. */
  resourcesDir: string;
  /** Absolute folder the other paths are relative to; relative imports are computed between real places. */
  projectRoot: string;
}

/**
 * Emitted resource modules keyed by everything they are made from, kept by a
 * long-running process (`npm run dev`) so that one changed file re-emits one module.
 */
export type EmitCache = Map<string, string>;

export function emit(project: Project, options: EmitOptions, cache?: EmitCache): Map<string, string> {
  const files = new Map<string, string>();
  for (const backend of project.backends) {
    for (const resource of backend.resources) {
      const file = path.join(options.outDir, backend.name, `${moduleName(resource)}.ts`);
      const key = cache ? JSON.stringify([file, options, resource]) : '';
      let text = cache?.get(key);
      if (text === undefined) {
        text = emitResource(resource, file, options);
        cache?.set(key, text);
      }
      files.set(file, text);
    }
    const index = path.join(options.outDir, backend.name, 'index.ts');
    files.set(index, emitBackendIndex(backend, index, options));
  }
  const index = path.join(options.outDir, 'index.ts');
  files.set(index, emitProjectIndex(project, index, options));
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

export function moduleName(resource: Resource): string {
  return resource.version === '1.0' ? resource.name : `${resource.name}@${resource.version}`;
}

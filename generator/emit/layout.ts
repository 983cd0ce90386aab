// Where the emitted modules go (the folders the options name) and what a resource's module is called: apart from the
// stage (index.ts), so that the emitters it calls (indexes.ts, resource.ts, print.ts) import these without importing it.
import type { Resource } from '../ir.js';

/** The stage's folders: where the modules go, and the runtime and resource files they name. */
export interface EmitOptions {
  /** Project-relative folder the modules go to, such as `generated`. */
  outDir: string;
  /**
   * Project-relative folder of a runtime the modules import by path (the bench's copies of an older build); absent,
   * they import the installed package by its name, `xmlrest/runtime`, as a team's project and this repository do.
   */
  runtimeDir?: string | undefined;
  /** Project-relative folder of the resource files, named in the index modules' headers. */
  resourcesDir: string;
  /** Absolute folder the other paths are relative to; relative imports are computed between real places. */
  projectRoot: string;
  /** The generator's package version, named in every module's header and stamped on the project index. */
  generatorVersion: string;
}

/** A resource's module's name in its backend's folder: the resource's, with its version unless 1.0. */
export function moduleName(resource: Resource): string {
  return resource.version === '1.0' ? resource.name : `${resource.name}@${resource.version}`;
}

import { analyse, type SourceFile } from './analyse.js';
import { Diagnostics } from './diagnostics.js';
import { emit } from './emit.js';
import type { Project } from './ir.js';

export type { SourceFile } from './analyse.js';

export interface GenerateOptions {
  /** Project-relative folder holding one folder per backend; default `resources`. */
  resourcesDir?: string;
  /** Project-relative output folder; default `generated`. */
  outDir?: string;
  /** Project-relative runtime folder; default `runtime`. */
  runtimeDir?: string;
  /** Whether a project-relative file exists (user plug-in modules). */
  exists?: (path: string) => boolean;
}

export type GenerateResult =
  | { ok: true; files: Map<string, string>; project: Project }
  | { ok: false; errors: string[] };

/**
 * The generator's core, a pure function: resource files in, module texts out
 * (keyed by project-relative path), or every error of the run.
 */
export function generate(sources: readonly SourceFile[], options: GenerateOptions = {}): GenerateResult {
  const diagnostics = new Diagnostics();
  const resourcesDir = options.resourcesDir ?? 'resources';
  const project = analyse(sources, diagnostics, { resourcesDir, exists: options.exists ?? (() => false) });
  if (diagnostics.count > 0) return { ok: false, errors: diagnostics.lines() };
  const files = emit(project, { outDir: options.outDir ?? 'generated', runtimeDir: options.runtimeDir ?? 'runtime', resourcesDir });
  return { ok: true, files, project };
}

import path from 'node:path';
import { XMLREST_VERSION } from '../runtime/version.js';
import { accessText } from './analyse/access.js';
import { analyse, type SourceFile } from './analyse/index.js';
import { lintUnownedReads } from './analyse/ownership.js';
import { lockSuffix, proveTenants } from './analyse/tenant-proof.js';
import { Diagnostics } from './diagnostics.js';
import { emit, resourceKeys } from './emit/index.js';
import { FileTexts } from './file-texts.js';
import type { Project } from './ir.js';
import { openApiDocument, type PathItem } from './openapi.js';
import type { RawElement } from './parse.js';
import { checkPluginCalls, type PluginCheckCache } from './plugin-check.js';
import { applyArgumentBounds } from './plugins.js';
import { RunCache } from './run-cache.js';
import { markSecrets } from './secrets.js';
import type { ScannedSql } from './sql/index.js';
import { applyTypes, describedSql, snapshotText, sqlSteps, type TypeSnapshot } from './types.js';

export type { SourceFile } from './analyse/index.js';
export type { TypeSnapshot } from './types.js';

export interface GenerateOptions {
  /** Project-relative folder holding one folder per backend; default `resources`. */
  resourcesDir?: string;
  /** Project-relative output folder; default `generated`. */
  outDir?: string;
  /** Project-relative path of the access lock; default `access.lock` (docs/internals/contract.md §8). */
  lockFile?: string;
  /** A project-relative runtime folder the modules import by path; default none: they import `xmlrest/runtime`. */
  runtimeDir?: string;
  /** Whether a project-relative file exists (user plug-in modules). */
  exists?: (path: string) => boolean;
  /** Whether a project-relative path, its symbolic links followed, leads outside the project; default never. */
  leavesProject?: (path: string) => boolean;
  /** Column types from the database (types.ts); steps without an entry are typed `unknown`. */
  types?: TypeSnapshot;
  /** Absolute folder that plug-in module paths are relative to; default the working directory. */
  projectRoot?: string;
  /** Kept between runs by a long-running process (`npm run dev`). */
  cache?: GeneratorCache;
  /** Warnings (the lint for unowned reads, analyse/ownership.ts) are errors: `generate --strict`. */
  strict?: boolean;
  /** The version named in the modules' headers and stamped on the project index; default the installed package's. */
  generatorVersion?: string;
}

/** What `npm run dev` keeps between runs, so that a one-file change among 1,000 resources redoes one file's work. */
export interface GeneratorCache {
  /** Resource files parsed, by path. */
  parsed: RunCache<RawElement>;
  /** Statements scanned, by text. */
  scans: RunCache<ScannedSql>;
  /** Modules emitted (resources and backend indexes), by file. */
  modules: RunCache<string>;
  /** Each resource's paths of the OpenAPI document, by path. */
  pathItems: RunCache<PathItem>;
  plugins: PluginCheckCache;
  /** The resources and modules on disk as the last run read or wrote them. */
  files: FileTexts;
  /**
   * openapi.d.ts being typed after the run that changed the document (project.ts): a long-running process does
   * not wait a second and more for openapi-typescript before it serves the change. Settles when written.
   */
  clientTypes: { pending: Promise<void>; latest: string | undefined };
}

export function newGeneratorCache(): GeneratorCache {
  return {
    parsed: new RunCache(),
    scans: new RunCache(),
    modules: new RunCache(),
    pathItems: new RunCache(),
    plugins: {},
    files: new FileTexts(),
    clientTypes: { pending: Promise.resolve(), latest: undefined },
  };
}

/** Ends a run of the generator: each cache forgets what the run did not use. */
export function endRun(cache: GeneratorCache): void {
  for (const part of [cache.parsed, cache.scans, cache.modules, cache.pathItems]) part.endRun();
}

export type GenerateResult =
  | { ok: true; files: Map<string, string>; project: Project; untyped: string[]; warnings: string[] }
  | { ok: false; errors: string[] };

/** Stages 1 and 2 on their own: the CLI asks the database for types between them and emit. */
export function analyseSources(sources: readonly SourceFile[], options: GenerateOptions = {}): { project: Project; diagnostics: Diagnostics } {
  const diagnostics = new Diagnostics();
  const project = analyse(sources, diagnostics, {
    resourcesDir: options.resourcesDir ?? 'resources',
    exists: options.exists ?? (() => false),
    leavesProject: options.leavesProject ?? (() => false),
    ...(options.cache ? { parsed: options.cache.parsed, scans: options.cache.scans } : {}),
  });
  return { project, diagnostics };
}

/**
 * The generator's core, a pure function: resource files (and the type
 * snapshot) in, module texts out keyed by project-relative path, or every
 * error of the run. The snapshot goes out too, trimmed to the current steps.
 */
export function generate(sources: readonly SourceFile[], options: GenerateOptions = {}): GenerateResult {
  try {
    const { project, diagnostics } = analyseSources(sources, options);
    if (diagnostics.count > 0) return { ok: false, errors: diagnostics.lines() };
    return emitProject(project, diagnostics, options);
  } finally {
    if (options.cache) endRun(options.cache);
  }
}

export function emitProject(project: Project, diagnostics: Diagnostics, options: GenerateOptions = {}): GenerateResult {
  const types = options.types ?? {};
  const untyped = applyTypes(project, types, diagnostics);
  applyArgumentBounds(project);
  markSecrets(project, diagnostics);
  if (diagnostics.count === 0) checkPluginCalls(project, options.projectRoot ?? process.cwd(), diagnostics, options.cache?.plugins);
  const keyOf = (file: string, method: string, step: string) => `${file} ${method} ${step}`;
  lintUnownedReads(project, types, keyOf, diagnostics);
  proveTenants(project, types, keyOf, describedSql, diagnostics);
  const warnings = diagnostics.warnings();
  // --strict: a warning stops the run as an error does, said in the same words without the "warning:".
  if (options.strict && warnings.length > 0)
    return { ok: false, errors: [...diagnostics.lines(), ...warnings.map((line) => line.replace(': warning: ', ': '))] };
  if (diagnostics.count > 0) return { ok: false, errors: diagnostics.lines() };
  const outDir = options.outDir ?? 'generated';
  const emitOptions = {
    outDir,
    runtimeDir: options.runtimeDir,
    resourcesDir: options.resourcesDir ?? 'resources',
    projectRoot: toPosix(path.resolve(options.projectRoot ?? '.')),
    generatorVersion: options.generatorVersion ?? XMLREST_VERSION,
  };
  // With a cache, each resource's IR (typed, bounded) as text, once: what its module and its paths are made from.
  const cache = options.cache && { modules: options.cache.modules, pathItems: options.cache.pathItems, keys: resourceKeys(project, emitOptions) };
  const files = emit(project, emitOptions, cache);
  const openapi = openApiDocument(project, cache);
  files.set(`${outDir}/openapi.json`, JSON.stringify(openapi, null, 2) + '\n');
  files.set(options.lockFile ?? 'access.lock', accessLock(project));
  const used: TypeSnapshot = {};
  for (const { key, step } of sqlSteps(project)) {
    const entry = types[key];
    if (entry && entry.sql === describedSql(step)) used[key] = entry;
  }
  if (Object.keys(used).length > 0 || options.types !== undefined) files.set(`${outDir}/column-types.json`, snapshotText(used));
  return { ok: true, files: new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1))), project, untyped, warnings };
}

/**
 * access.lock: who may call what, one sorted line per backend, path, method
 * and the roles that admit it (`public`, `*`, or the roles), so that a change
 * of access shows in review as a diff of this file, and `--check` fails on
 * one nobody generated. Paths are served paths without BASE_PATH.
 */
export function accessLock(project: Project): string {
  const lines = project.backends.flatMap((backend) =>
    backend.resources.flatMap((resource) =>
      resource.operations.map(
        (operation) =>
          `${backend.name} /${backend.name}/v${resource.version}/${resource.name} ${operation.method} ${accessText(operation.access)}${lockSuffix(backend, operation)}`,
      ),
    ),
  );
  const header = [
    '# access.lock: written by `npm run generate`; do not edit. Who may call what: backend, path, method,',
    '# then the roles that admit (any one of them), * (any authenticated user) or public.',
  ];
  return [...header, ...lines.sort()].join('\n') + '\n';
}

function toPosix(file: string): string {
  return file.split(path.sep).join('/');
}

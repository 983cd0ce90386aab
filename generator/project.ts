import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { currentClientTypes, makeClientTypes } from './client-types.js';
import { analyseSources, emitProject, endRun, type GenerateOptions, type GeneratorCache, type SourceFile } from './core.js';
import { openDescriber } from './database.js';
import type { Diagnostics } from './diagnostics.js';
import { FileTexts } from './file-texts.js';
import type { Project } from './ir.js';
import { inferTypes, type TypeSnapshot } from './types.js';
import { listFiles, writeOutput } from './write.js';

/**
 * The generator on a project folder, stage after stage: read the resource
 * files, parse and analyse them (analyse/), type every statement (the
 * committed snapshot, or the database), emit the modules (emit/), write what
 * changed (write.ts). `npm run generate`, `npm run dev` and the console all
 * run this; with `check` it writes nothing and returns 1 naming every file
 * that would change.
 */
export interface RunOptions {
  root: string;
  check: boolean;
  /** Ask the database again for every step's types, naming what changed. */
  refreshTypes?: boolean;
  /** Where to ask for types; without one, the committed snapshot alone types the modules. */
  databaseUrl?: string | undefined;
  resourcesDir?: string;
  outDir?: string;
  /** A project-relative runtime folder the modules import by path; default none: they import `xmlrest/runtime`. */
  runtimeDir?: string;
  /** Project-relative path of access.lock; default beside the resources folder (the project root for `resources`). */
  lockFile?: string;
  log?: (line: string) => void;
  /** Kept between runs by `npm run dev`, so that a one-file change re-emits one module. */
  cache?: GeneratorCache;
  /** Warnings are errors (`generate --strict`): nothing is written and the run fails. */
  strict?: boolean;
}

export async function generateProject(options: RunOptions): Promise<number> {
  try {
    return await run(options);
  } finally {
    if (options.cache) endRun(options.cache);
  }
}

async function run(options: RunOptions): Promise<number> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const resourcesDir = options.resourcesDir ?? 'resources';
  const outDir = options.outDir ?? 'generated';
  const sources = readSources(options.root, resourcesDir, options.cache?.files);
  const generateOptions = {
    resourcesDir,
    outDir,
    runtimeDir: options.runtimeDir,
    lockFile: options.lockFile ?? path.posix.join(path.posix.dirname(resourcesDir), 'access.lock'),
    projectRoot: path.resolve(options.root),
    ...(options.cache ? { cache: options.cache } : {}),
    exists: (file: string) => existsSync(path.join(options.root, file)),
    leavesProject: (file: string) => leavesProject(options.root, file),
    ...(options.strict ? { strict: true } : {}),
  };
  const { project, diagnostics } = analyseSources(sources, generateOptions);
  const snapshotFile = path.join(options.root, outDir, 'column-types.json');
  let types: TypeSnapshot = existsSync(snapshotFile) ? (JSON.parse(readFileSync(snapshotFile, 'utf8')) as TypeSnapshot) : {};
  if (diagnostics.count === 0 && options.databaseUrl) {
    let database: Awaited<ReturnType<typeof openDescriber>>;
    try {
      database = await openDescriber(options.databaseUrl);
    } catch (error) {
      log(`xmlrest: cannot reach the database for types (${(error as Error).message}); ${options.refreshTypes ? 'nothing was written' : 'using the snapshot'}`);
      if (options.refreshTypes) return 1;
      return finishRun(project, diagnostics, types, options, generateOptions, log);
    }
    try {
      const inferred = await inferTypes(project, types, database, diagnostics, { refresh: options.refreshTypes ?? false });
      types = inferred.snapshot;
      for (const change of inferred.changes) log(`types: ${change}`);
    } catch (error) {
      // The connection lost, or no answer in time (database.ts): no statement's fault, and nothing to type with.
      if ((error as { fatal?: boolean }).fatal !== true) throw error;
      log(`xmlrest: lost the database while asking it for types (${(error as Error).message}); nothing was written`);
      return 1;
    } finally {
      await database.close();
    }
  } else if (options.refreshTypes) {
    log('xmlrest: --refresh-types needs a database: set DATABASE_URL');
    return 2;
  }
  return finishRun(project, diagnostics, types, options, generateOptions, log);
}

async function finishRun(
  project: Project,
  diagnostics: Diagnostics,
  types: TypeSnapshot,
  options: RunOptions,
  generateOptions: GenerateOptions,
  log: (line: string) => void,
): Promise<number> {
  const outDir = generateOptions.outDir ?? 'generated';
  const result = diagnostics.count > 0 ? { ok: false as const, errors: diagnostics.lines() } : emitProject(project, diagnostics, { ...generateOptions, types });
  if (!result.ok) {
    for (const line of result.errors) log(line);
    log(`xmlrest: ${result.errors.length} error${result.errors.length === 1 ? '' : 's'}; nothing was written`);
    return 1;
  }
  for (const line of result.warnings) log(line);
  await addClientTypes(result.files, options, outDir, log);
  if (result.untyped.length > 0) {
    log(
      `xmlrest: ${result.untyped.length} step${result.untyped.length === 1 ? ' is' : 's are'} typed unknown (no snapshot entry): set DATABASE_URL and run npm run generate`,
    );
  }
  const lockFile = generateOptions.lockFile ?? 'access.lock';
  const lockBefore = existsSync(path.join(options.root, lockFile)) ? readFileSync(path.join(options.root, lockFile), 'utf8') : '';
  const changes = writeOutput(result.files, { root: options.root, outDir, check: options.check, ...(options.cache ? { texts: options.cache.files } : {}) });
  if (options.check) {
    if (changes.length === 0) return 0;
    for (const change of changes) log(change);
    // Who may call what changed: say exactly which lines, as a reviewer would want to read them.
    for (const line of lockDiff(lockBefore, result.files.get(lockFile) ?? '')) log(`  ${lockFile}: ${line}`);
    log(`xmlrest: ${outDir}/ is stale (${changes.length} file${changes.length === 1 ? '' : 's'}); run npm run generate`);
    return 1;
  }
  for (const change of changes) log(change);
  log(
    `xmlrest: ${result.files.size} files from ${project.backends.reduce((n, b) => n + b.resources.length + (b.source ? 1 : 0), 0)} resource files, ${changes.length} changed`,
  );
  return 0;
}

/**
 * `<outDir>/openapi.d.ts` beside the document it types (client-types.ts): kept when it types this document
 * already; else made now, or, in a long-running process (a cache: `npm run dev`, the console), made after the
 * run, its text kept meanwhile, so that the server serves the change without waiting for openapi-typescript.
 * Where the tool is not installed (a production install, whose console regenerates), the file is kept as it
 * is, and said so.
 */
async function addClientTypes(files: Map<string, string>, options: RunOptions, outDir: string, log: (line: string) => void): Promise<void> {
  const openapi = files.get(`${outDir}/openapi.json`);
  if (openapi === undefined) return;
  const file = `${outDir}/openapi.d.ts`;
  const absolute = path.join(options.root, file);
  const texts = options.cache?.files;
  const existing = texts ? texts.read(absolute) : existsSync(absolute) ? readFileSync(absolute, 'utf8') : undefined;
  let types = currentClientTypes(openapi, outDir, existing);
  const later = options.cache !== undefined && !options.check;
  if (types === undefined && later) {
    typeLater(options.cache!, openapi, outDir, absolute, log);
    types = existing;
  } else if (types === undefined) {
    types = await makeClientTypes(openapi, outDir);
    if (types === undefined) {
      types = existing;
      if (existing !== undefined) log(`xmlrest: ${file} ${options.check ? 'not compared' : 'kept as it was'}: ${NO_TOOL}`);
    }
  }
  if (types === undefined) return;
  // In its place among the others, so that what changed is listed in order.
  const sorted = [...files, [file, types] as const].sort(([a], [b]) => (a < b ? -1 : 1));
  files.clear();
  for (const [name, text] of sorted) files.set(name, text);
}

const NO_TOOL = 'openapi-typescript, which writes it, is a build-time tool (a dev dependency)';

/** Types the document after the run, one document at a time, only the latest: an earlier one is skipped. */
function typeLater(cache: GeneratorCache, openapi: string, outDir: string, absolute: string, log: (line: string) => void): void {
  // A team's project, whose xmlrest brings no openapi-typescript, has no such file: nothing kept, nothing to say.
  const had = cache.files.read(absolute) !== undefined;
  cache.clientTypes.latest = openapi;
  cache.clientTypes.pending = cache.clientTypes.pending.then(async () => {
    if (cache.clientTypes.latest !== openapi) return;
    try {
      const types = await makeClientTypes(openapi, outDir);
      if (types === undefined) {
        if (had) log(`xmlrest: ${outDir}/openapi.d.ts kept as it was: ${NO_TOOL}`);
      } else if (cache.clientTypes.latest === openapi && existsSync(path.dirname(absolute)) && cache.files.read(absolute) !== types) {
        cache.files.write(absolute, types);
        log(`update ${outDir}/openapi.d.ts`);
      }
    } catch (error) {
      log(`xmlrest: ${outDir}/openapi.d.ts not written: ${(error as Error).message}`);
    }
  });
}

/** The lines of access.lock that differ: `- <line>` gone, `+ <line>` new. */
function lockDiff(before: string, after: string): string[] {
  const entries = (text: string) => new Set(text.split('\n').filter((line) => line !== '' && !line.startsWith('#')));
  const old = entries(before);
  const now = entries(after);
  return [...[...old].filter((line) => !now.has(line)).map((line) => `- ${line}`), ...[...now].filter((line) => !old.has(line)).map((line) => `+ ${line}`)];
}

/**
 * Whether a project-relative path leads outside the project once its symbolic
 * links are followed; a path that does not exist yet is judged by its nearest
 * folder that does.
 */
export function leavesProject(root: string, file: string): boolean {
  let probe = path.resolve(root, file);
  while (!existsSync(probe) && path.dirname(probe) !== probe) probe = path.dirname(probe);
  const relative = path.relative(realpathSync(root), realpathSync(probe));
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

/** Every .xml file under resources/, at any depth, so that misplaced files are reported, not ignored. */
export function readSources(root: string, resourcesDir: string, texts = new FileTexts()): SourceFile[] {
  return listFiles(root, resourcesDir)
    .filter((file) => file.endsWith('.xml'))
    .flatMap((file) => {
      const text = texts.read(path.join(root, file));
      // Listed a moment ago and gone now (an editor's save): the next run, which the change triggers, reads it.
      return text === undefined ? [] : [{ path: file, text }];
    });
}

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { newGeneratorCache, type Regeneration, regenerateProject } from '../generator/index.js';
import { ConfigError, resolveEnvironment } from '../runtime/config.js';
import { type BackendModule, checkModuleFormat, type GeneratedIndex, type ReloadableApp } from '../runtime/index.js';

/**
 * A project served by a running server that can regenerate itself: `npm run
 * dev` on every change, the console when it sets a resource's role. One
 * regeneration at a time; each ends by swapping the new routes in.
 *
 * A regenerated module is compiled to JavaScript (TypeScript's transpiler,
 * which the generator brings) and imported as a module of its own, each
 * version under its own URL, importing the very runtime modules the server
 * runs. From the build (`npm start`, `npm run demo`, a production install)
 * the compiled module replaces the build's own copy in `dist/generated/`, so
 * that a restart serves it too; from source (`npm run dev`, tests) it is
 * imported from memory through tsx, with its relative imports made absolute.
 * Nothing is written into generated/ but what the generator writes.
 */
export interface ProjectHostOptions {
  /** The project folder holding resources/ and generated/. */
  root: string;
  /** A runtime folder, relative to root, the modules import by path (test fixtures); default none: `xmlrest/runtime`. */
  runtimeDir?: string;
  databaseUrl: string | undefined;
  server: ReloadableApp;
  /** Generator output: file changes and errors. */
  log: (line: string) => void;
  /** The build the server runs from (holding generated/ compiled); absent when it runs from source. */
  buildDir?: string | undefined;
}

export class ProjectHost {
  private readonly cache = newGeneratorCache();
  private readonly imported = new Map<string, unknown>();
  private queue: Promise<unknown> = Promise.resolve();
  private current: readonly BackendModule[] = [];
  constructor(private readonly options: ProjectHostOptions) {}

  /** The backends the server serves now. */
  get backends(): readonly BackendModule[] {
    return this.current;
  }

  /** Tells the host what the server started with (compiled modules, say). */
  adopt(backends: readonly BackendModule[]): void {
    this.current = backends;
  }

  /** Regenerates, and on success swaps the new routes in. Calls queue up and run one at a time. */
  regenerate(): Promise<Regeneration> {
    const next = this.queue.then(() => this.regenerateNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async regenerateNow(): Promise<Regeneration> {
    const started = performance.now();
    const result = await regenerateProject(
      { root: this.options.root, check: false, databaseUrl: this.options.databaseUrl, runtimeDir: this.options.runtimeDir, cache: this.cache },
      this.options.log,
    );
    if (!result.ok) return result;
    let loaded: Awaited<ReturnType<ProjectHost['load']>>;
    try {
      loaded = await this.load();
    } catch (error) {
      // A `${NAME}` whose variable is unset or wrong (docs/internals/contract.md §7): said as generate's errors are, the running routes kept.
      if (error instanceof ConfigError) return { ok: false, ms: performance.now() - started, errors: [...error.problems] };
      throw error;
    }
    const { backends, openapi } = loaded;
    this.options.server.reload(backends, openapi);
    this.current = backends;
    return { ok: true, ms: performance.now() - started, errors: [] };
  }

  /** Imports generated/: a module whose text changed afresh, the others from the module cache. */
  async load(): Promise<{ backends: BackendModule[]; openapi: object | undefined }> {
    const generated = path.join(this.options.root, 'generated');
    const index = await this.fresh<GeneratedIndex>(path.join(generated, 'index.ts'));
    // Modules of a format this runtime does not serve are refused as npm start refuses them (runtime/module-format.ts).
    checkModuleFormat(index);
    const { backends } = index;
    const loaded: BackendModule[] = [];
    for (const backend of backends) {
      // The index's own imports are cached by specifier: each resource module is taken by its content instead.
      const folder = path.join(generated, backend.name);
      const settings = (await this.fresh<{ backend: BackendModule }>(path.join(folder, 'index.ts'))).backend;
      const resources = [];
      for (const resource of settings.resources) {
        const file = path.join(folder, `${resource.version === '1.0' ? resource.name : `${resource.name}@${resource.version}`}.ts`);
        resources.push((await this.fresh<{ resource: BackendModule['resources'][number] }>(file)).resource);
      }
      loaded.push({ ...settings, resources });
    }
    const openapiFile = path.join(generated, 'openapi.json');
    const openapi = existsSync(openapiFile) ? readFileSync(openapiFile, 'utf8') : undefined;
    if (openapi !== undefined && this.options.buildDir) writeIfChanged(path.join(this.options.buildDir, 'generated/openapi.json'), openapi);
    // `${NAME}` settings read from the environment, as at start (docs/internals/contract.md §7): one unset refuses the reload.
    return { backends: resolveEnvironment(loaded, process.env), openapi: openapi === undefined ? undefined : (JSON.parse(openapi) as object) };
  }

  /** A module by its current text: imported once per version of that text. */
  private async fresh<T>(file: string): Promise<T> {
    const text = readFileSync(file, 'utf8');
    const version = createHash('sha1').update(text).digest('hex').slice(0, 12);
    const key = `${file}#${version}`;
    if (!this.imported.has(key)) this.imported.set(key, await this.importCompiled(file, text, version));
    return this.imported.get(key) as T;
  }

  private async importCompiled(file: string, text: string, version: string): Promise<unknown> {
    const { ts } = await import('ts-morph');
    const relative = path.relative(this.options.root, file);
    const { outputText } = ts.transpileModule(text, {
      fileName: relative,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    if (this.options.buildDir) {
      const target = path.join(this.options.buildDir, relative.replace(/\.ts$/, '.js'));
      writeIfChanged(target, outputText);
      // `xmlrest/runtime` resolves from the build as from the project: to the installed package the server runs.
      this.compileImportedSources(file, outputText, ts);
      return import(`${pathToFileURL(target).href}?v=${version}`);
    }
    // From memory: a data: URL resolves no relative import, so each becomes the absolute URL it names; tsx
    // (a dev dependency, as running from source is) resolves those to the TypeScript sources. The package's
    // name resolves from no data: URL either: it is the runtime this very server runs.
    const absolute = outputText
      .replace(
        RELATIVE_IMPORT,
        (_match, head: string, quote: string, specifier: string) => `${head}${quote}${pathToFileURL(path.resolve(path.dirname(file), specifier)).href}${quote}`,
      )
      .replace(RUNTIME_IMPORT, (_match, head: string, quote: string) => `${head}${quote}${RUNTIME_URL}${quote}`);
    const { tsImport } = await import('tsx/esm/api');
    return tsImport(`data:text/javascript;base64,${Buffer.from(absolute).toString('base64')}`, import.meta.url);
  }

  /**
   * The project's own TypeScript a compiled module imports (the modules an index names, a plug-in and what it
   * imports), compiled beside it in the build folder when the build has no current copy: a team's dev server (no
   * tsx) starts with an empty one. The build of `npm start` has them already.
   */
  private compileImportedSources(file: string, compiled: string, ts: typeof import('ts-morph').ts): void {
    for (const [, , , specifier] of compiled.matchAll(RELATIVE_IMPORT)) {
      const source = path.resolve(path.dirname(file), specifier!).replace(/\.js$/, '.ts');
      if (!source.startsWith(this.options.root + path.sep) || !existsSync(source)) continue;
      const target = path.join(this.options.buildDir!, path.relative(this.options.root, source).replace(/\.ts$/, '.js'));
      if (existsSync(target) && statSync(target).mtimeMs >= statSync(source).mtimeMs) continue;
      const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
        fileName: path.relative(this.options.root, source),
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      });
      writeIfChanged(target, outputText);
      this.compileImportedSources(source, outputText, ts);
    }
  }
}

/** `from './x.js'` and `import('./x.js')`: the relative specifiers of compiled JavaScript. */
const RELATIVE_IMPORT = /(from\s+|import\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;

/** `from 'xmlrest/runtime'`: the package's public entry, as generated modules import it. */
const RUNTIME_IMPORT = /(from\s+|import\s*\(\s*)(['"])xmlrest\/runtime\2/g;

/** The runtime this server runs (from source: tsx resolves the .js to its .ts). */
const RUNTIME_URL = new URL('../runtime/index.js', import.meta.url).href;

function writeIfChanged(file: string, text: string): void {
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return;
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { run } from '../generator/cli.js';
import { newGeneratorCache } from '../generator/index.js';
import type { BackendModule, ReloadableApp } from '../runtime/index.js';

/**
 * A project served by a running server that can regenerate itself: `npm run
 * dev` on every change, the console when it sets a resource's role. One
 * regeneration at a time; each ends by swapping the new routes in.
 */
export interface ProjectHostOptions {
  /** The project folder holding resources/ and generated/. */
  root: string;
  /** The runtime folder, relative to root; default `runtime`. */
  runtimeDir?: string;
  databaseUrl: string | undefined;
  server: ReloadableApp;
  /** Generator output: file changes and errors. */
  log: (line: string) => void;
}

export class ProjectHost {
  private readonly cache = newGeneratorCache();
  private readonly imported = new Map<string, unknown>();
  private queue: Promise<unknown> = Promise.resolve();
  private current: readonly BackendModule[] = [];
  private readonly runtimeDir: string;

  constructor(private readonly options: ProjectHostOptions) {
    this.runtimeDir = options.runtimeDir ?? 'runtime';
  }

  /** The backends the server serves now. */
  get backends(): readonly BackendModule[] {
    return this.current;
  }

  /** Tells the host what the server started with (compiled modules, say). */
  adopt(backends: readonly BackendModule[]): void {
    this.current = backends;
  }

  /** Regenerates, and on success swaps the new routes in. Calls queue up and run one at a time. */
  regenerate(): Promise<{ ok: boolean; ms: number }> {
    const next = this.queue.then(() => this.regenerateNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async regenerateNow(): Promise<{ ok: boolean; ms: number }> {
    const started = performance.now();
    const code = await run({ root: this.options.root, check: false, databaseUrl: this.options.databaseUrl, runtimeDir: this.runtimeDir, cache: this.cache, log: this.options.log });
    if (code !== 0) return { ok: false, ms: performance.now() - started };
    const { backends, openapi } = await this.load();
    this.options.server.reload(backends, openapi);
    this.current = backends;
    return { ok: true, ms: performance.now() - started };
  }

  /** Imports generated/: a module whose text changed afresh, the others from the module cache. */
  async load(): Promise<{ backends: BackendModule[]; openapi: object | undefined }> {
    const generated = path.join(this.options.root, 'generated');
    const { backends } = await this.fresh<{ backends: BackendModule[] }>(path.join(generated, 'index.ts'));
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
    return { backends: loaded, openapi: existsSync(openapiFile) ? (JSON.parse(readFileSync(openapiFile, 'utf8')) as object) : undefined };
  }

  /**
   * tsx caches a module's compiled text by its path, query string or not, so
   * a changed module is imported through a copy beside it (same folder, same
   * relative imports) named by its content; the copy is removed at once.
   */
  private async fresh<T>(file: string): Promise<T> {
    const text = readFileSync(file);
    const version = createHash('sha1').update(text).digest('hex').slice(0, 12);
    const key = `${file}#${version}`;
    if (!this.imported.has(key)) {
      const copy = path.join(path.dirname(file), `.host-${version}-${path.basename(file)}`);
      writeFileSync(copy, text);
      try {
        this.imported.set(key, await tsImport(pathToFileURL(path.resolve(copy)).href, import.meta.url));
      } finally {
        rmSync(copy, { force: true });
      }
    }
    return this.imported.get(key) as T;
  }
}

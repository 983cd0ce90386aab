import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import mysql from 'mysql2/promise';
import { databaseUrlFromEnvironment, run } from '../generator/cli.js';
import { newGeneratorCache } from '../generator/index.js';
import { createLogger, createReloadableApp, listen, openDatabase, type BackendModule } from '../runtime/index.js';
import { startPrivateMariadb, type PrivateMariadb } from './mariadb.js';
import { createDefaultTables } from './schema.js';

/**
 * `npm run dev`: generates, serves, then watches resources/. A change
 * regenerates only what changed and swaps the new routes into the running
 * server; requests under way finish on the old ones. Errors are printed with
 * file:line:col and the last good version keeps serving.
 */
const { values } = parseArgs({ options: { root: { type: 'string' } } });
const root = path.resolve(values.root ?? '.');
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const say = (line: string) => process.stdout.write(`dev: ${line}\n`);
const complain = (line: string) => process.stderr.write(`${line}\n`);

let privateDb: PrivateMariadb | undefined;
let databaseUrl = databaseUrlFromEnvironment(root);
if (!databaseUrl) {
  say('starting a private MariaDB under .xmlrest/dev-db ...');
  privateDb = await startPrivateMariadb({ dir: path.join(repo, '.xmlrest/dev-db'), log: say });
  databaseUrl = privateDb.url;
  const connection = await mysql.createConnection({ uri: databaseUrl, multipleStatements: true });
  await createDefaultTables(connection);
  await connection.query(readFileSync(path.join(repo, 'scripts/demo.sql'), 'utf8'));
  await connection.end();
}

const cache = newGeneratorCache();
const runtimeDir = path.relative(root, path.join(repo, 'runtime')).split(path.sep).join('/');
const generated = path.join(root, 'generated');
const generate = () => run({ root, check: false, databaseUrl, runtimeDir, cache, log: complain });

/**
 * Imports the generated modules; a module whose text changed is imported
 * afresh, the others come from the module cache. tsx caches a module's
 * compiled text by its path, query string or not, so a changed module is
 * imported through a copy beside it (same folder, same relative imports)
 * named by its content, then the copy is removed.
 */
const imported = new Map<string, unknown>();
async function fresh<T>(file: string): Promise<T> {
  const text = readFileSync(file);
  const version = createHash('sha1').update(text).digest('hex').slice(0, 12);
  const key = `${file}#${version}`;
  if (!imported.has(key)) {
    const copy = path.join(path.dirname(file), `.dev-${version}-${path.basename(file)}`);
    writeFileSync(copy, text);
    try {
      imported.set(key, await import(pathToFileURL(copy).href));
    } finally {
      rmSync(copy, { force: true });
    }
  }
  return imported.get(key) as T;
}

async function load(): Promise<{ backends: BackendModule[]; openapi: object | undefined }> {
  const { backends } = await fresh<{ backends: BackendModule[] }>(path.join(generated, 'index.ts'));
  const loaded: BackendModule[] = [];
  for (const backend of backends) {
    // The index's own imports are cached by specifier: take each resource module by its content instead.
    const folder = path.join(generated, backend.name);
    const settings = (await fresh<{ backend: BackendModule }>(path.join(folder, 'index.ts'))).backend;
    const resources = [];
    for (const resource of settings.resources) {
      const file = path.join(folder, `${resource.version === '1.0' ? resource.name : `${resource.name}@${resource.version}`}.ts`);
      resources.push((await fresh<{ resource: BackendModule['resources'][number] }>(file)).resource);
    }
    loaded.push({ ...settings, resources });
  }
  const openapiFile = path.join(generated, 'openapi.json');
  return { backends: loaded, openapi: existsSync(openapiFile) ? (JSON.parse(readFileSync(openapiFile, 'utf8')) as object) : undefined };
}

if ((await generate()) !== 0) say('fix the errors above; serving what generated/ holds');
const initial = existsSync(path.join(generated, 'index.ts')) ? await load() : { backends: [], openapi: undefined };
const database = openDatabase(databaseUrl);
const server = createReloadableApp({
  backends: initial.backends,
  openapi: initial.openapi,
  database,
  jwtSecret: process.env.JWT_SECRET || randomBytes(32).toString('base64url'),
  basePath: process.env.BASE_PATH,
  logger: createLogger(process.env.LOG_LEVEL === undefined ? 'warn' : (process.env.LOG_LEVEL as 'info')),
});
const running = await listen(server.app, Number(process.env.PORT ?? 3000), process.env.HOST || '127.0.0.1');
say(`serving ${running.url}${process.env.BASE_PATH ?? ''}; watching ${path.relative(process.cwd(), path.join(root, 'resources')) || 'resources'}/`);

// One regeneration at a time; changes that arrive meanwhile are taken by one more run.
let busy = false;
let again = false;
let timer: NodeJS.Timeout | undefined;
async function regenerate(): Promise<void> {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  const started = performance.now();
  try {
    if ((await generate()) === 0) {
      const next = await load();
      server.reload(next.backends, next.openapi);
      say(`reloaded in ${Math.round(performance.now() - started)} ms`);
    } else {
      say('kept the running version');
    }
  } catch (error) {
    say(`reload failed, kept the running version: ${(error as Error).message}`);
  } finally {
    busy = false;
    if (again) {
      again = false;
      void regenerate();
    }
  }
}
// Folders, not files, are watched: an editor that saves by renaming a new file into place would
// leave a watch on the old file behind. (Node 20's recursive watch on Linux watches files.)
const watchers = new Map<string, FSWatcher>();
function watchFolders(): void {
  const resources = path.join(root, 'resources');
  const folders = [resources, ...readdirSync(resources, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => path.join(resources, entry.name))];
  for (const folder of folders) {
    if (watchers.has(folder)) continue;
    watchers.set(
      folder,
      watch(folder, (_event, file) => {
        if (folder === resources) watchFolders();
        if (file && folder !== resources && !String(file).endsWith('.xml')) return;
        clearTimeout(timer);
        // Editors write a file in several steps; one run after they settle.
        timer = setTimeout(() => void regenerate(), 30);
      }),
    );
  }
  for (const [folder, watcher] of watchers) {
    if (!existsSync(folder)) {
      for (const watcher of watchers.values()) watcher.close();
      watchers.delete(folder);
    }
  }
}
watchFolders();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const watcher of watchers.values()) watcher.close();
    void running
      .close()
      .then(() => database.end())
      .then(() => privateDb?.stop())
      .then(() => process.exit(0));
  });
}

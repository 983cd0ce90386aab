import { randomBytes } from 'node:crypto';
import { existsSync, type FSWatcher, readdirSync, watch, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { consoleMiddleware } from '../console/server.js';
import { DEV_DATABASE_URL_FILE, databaseUrlFromEnvironment } from '../generator/environment.js';
import { consoleModeOf } from '../runtime/config.js';
import { createLogger, createReloadableApp, listen, openDatabase, parseLogLevel, startTracing } from '../runtime/index.js';
import { connectTo } from './connection.js';
import { FROM_BUILD, PACKAGE_ROOT } from './install.js';
import { type PrivateMariadb, socketUser, startPrivateMariadb } from './mariadb.js';
import { ProjectHost } from './project-host.js';
import { createDefaultTables, createDemoDatabase } from './schema.js';

/**
 * `npm run dev` (`xmlrest dev` in a team's project): generates, serves, then watches resources/. A change
 * regenerates only what changed and swaps the new routes into the running
 * server; requests under way finish on the old ones. Errors are printed with
 * file:line:col and the last good version keeps serving.
 */
export async function serveDev(root: string): Promise<void> {
  const say = (line: string) => process.stdout.write(`dev: ${line}\n`);
  const complain = (line: string) => process.stderr.write(`${line}\n`);

  // CONSOLE=off serves none; dev has no admin listener, so CONSOLE=admin is refused before anything starts.
  let consoleMode: ReturnType<typeof consoleModeOf>;
  try {
    consoleMode = consoleModeOf(process.env.CONSOLE);
    if (consoleMode === 'admin') throw new Error('CONSOLE=admin serves the console on ADMIN_PORT, which npm run dev does not open: use CONSOLE=on or off here');
  } catch (error) {
    complain(`dev: ${(error as Error).message}`);
    process.exit(1);
  }

  let privateDb: PrivateMariadb | undefined;
  // Its own private database is started afresh, never taken from where an earlier run saved its URL (the demo's is).
  let databaseUrl = databaseUrlFromEnvironment(root, undefined, { skip: DEV_DATABASE_URL_FILE });
  if (!databaseUrl) {
    say('starting a private MariaDB under .xmlrest/dev-db ...');
    privateDb = await startPrivateMariadb({ dir: path.join(root, '.xmlrest/dev-db'), log: say });
    databaseUrl = privateDb.url;
    // This repository's own project is the demo, with its tables and users; a team's gets what `xmlrest db init` makes.
    if (root === PACKAGE_ROOT) await createDemoDatabase(databaseUrl);
    else await createDefaultTablesAt(databaseUrl);
    // For `npx xmlrest` in another terminal of the project, which takes it when DATABASE_URL is unset (generator/environment.ts).
    writeFileSync(path.join(root, DEV_DATABASE_URL_FILE), `${databaseUrl}\n`, { mode: 0o600 });
    say(`DATABASE_URL=${databaseUrl}`);
    say(`mariadb --socket=${privateDb.socket} --user=${socketUser()} ${new URL(databaseUrl).pathname.slice(1)}`);
  }

  // This repository's demo desk backend sends its webhook to a URL, signed by a secret, from the environment: as the
  // demo does, a secret made and a receiver of its own unless they are set. Named by a variable, so that the build
  // leaves it out of the package: it needs a dev dependency (standardwebhooks) that a team's install lacks.
  if (root === PACKAGE_ROOT && !FROM_BUILD) {
    const demoReceiver = './demo-receiver.js';
    const { setDemoWebhookEnv } = (await import(demoReceiver)) as { setDemoWebhookEnv(env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<void> };
    await setDemoWebhookEnv(process.env, say);
  }
  const database = openDatabase(databaseUrl);
  let host: ProjectHost | undefined;
  const jwtSecret = process.env.JWT_SECRET || randomBytes(32).toString('base64url');
  const adminConsole =
    consoleMode === 'on'
      ? consoleMiddleware({
          basePath: process.env.BASE_PATH ?? '',
          backends: () => host?.backends ?? [],
          database,
          root,
          regenerate: () => host!.regenerate(),
          assetsDir: await consolePage(),
          server: () => server,
        })
      : undefined;
  const server = createReloadableApp({
    backends: [],
    middleware: adminConsole ? [adminConsole] : [],
    database,
    jwtSecret,
    basePath: process.env.BASE_PATH,
    // Webhooks sign with the secrets their `secret` names (docs/internals/contract.md §12); a missing one refuses the reload.
    webhookSecrets: process.env,
    // Pretty lines for a person at a terminal (pino-pretty); npm start writes JSON.
    logger: createLogger(process.env.LOG_LEVEL === undefined ? 'warn' : parseLogLevel(process.env.LOG_LEVEL), { pretty: prettyLogsInstalled() }),
    // Traces as npm start sends them, when OTEL_EXPORTER_OTLP_ENDPOINT is set (a local Jaeger, say).
    tracing: await startTracing(),
  });
  // From source (this repository, tsx) regenerated modules are imported through tsx; from the package's build (a
  // team's project, no tsx) they are compiled into .xmlrest/dev-build/ and imported from there.
  host = new ProjectHost({ root, databaseUrl, server, log: complain, buildDir: FROM_BUILD ? path.join(root, '.xmlrest/dev-build') : undefined });
  const first = await host.regenerate();
  if (!first.ok) {
    say('fix the errors above; serving what generated/ holds');
    if (existsSync(path.join(root, 'generated/index.ts'))) {
      // Modules of a format this runtime does not serve (runtime/module-format.ts) stop it, as they stop npm start.
      const loaded = await host.load().catch(async (error: unknown) => {
        complain(`dev: cannot start: ${(error as Error).message}`);
        await database.end();
        await privateDb?.stop();
        process.exit(1);
      });
      server.reload(loaded.backends, loaded.openapi);
      host.adopt(loaded.backends);
    }
  }
  const running = await listen(server.app, Number(process.env.PORT ?? 3000), process.env.HOST || '127.0.0.1');
  say(`serving ${running.url}${process.env.BASE_PATH ?? ''}; watching ${path.relative(process.cwd(), path.join(root, 'resources')) || 'resources'}/`);

  let timer: NodeJS.Timeout | undefined;
  async function regenerate(): Promise<void> {
    try {
      const result = await host!.regenerate();
      say(result.ok ? `reloaded in ${Math.round(result.ms)} ms` : 'kept the running version');
    } catch (error) {
      say(`reload failed, kept the running version: ${(error as Error).message}`);
    }
  }

  // Folders, not files, are watched: an editor that saves by renaming a new file into place would
  // leave a watch on the old file behind. (Node 20's recursive watch on Linux watches files.)
  const watchers = new Map<string, FSWatcher>();
  function watchFolders(): void {
    const resources = path.join(root, 'resources');
    const folders = [
      resources,
      ...readdirSync(resources, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => path.join(resources, entry.name)),
    ];
    for (const folder of folders) {
      if (watchers.has(folder)) continue;
      const watcher = watch(folder, (_event, file) => {
        if (folder === resources) watchFolders();
        if (file && folder !== resources && !String(file).endsWith('.xml')) return;
        clearTimeout(timer);
        // Editors write a file in several steps; one run after they settle.
        timer = setTimeout(() => void regenerate(), 30);
      });
      // A folder removed under a watch reports an error: forget that one watch, keep the others.
      watcher.on('error', () => {
        watcher.close();
        watchers.delete(folder);
      });
      watchers.set(folder, watcher);
    }
    for (const [folder, watcher] of [...watchers]) {
      if (!existsSync(folder)) {
        watcher.close();
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
}

/**
 * The console page: the package's built page (a team's project), or in this repository, where its sources are,
 * built once per dev session (under a second) so that an edit to console/ui shows.
 */
async function consolePage(): Promise<string> {
  if (FROM_BUILD) return path.join(PACKAGE_ROOT, 'dist/console-ui');
  const { build } = await import('vite');
  await build({ configFile: path.join(PACKAGE_ROOT, 'console/vite.config.ts'), root: path.join(PACKAGE_ROOT, 'console/ui'), logLevel: 'warn' });
  return path.join(PACKAGE_ROOT, 'dist/console-ui');
}

/** `xmlrest db init` on the private database: the default tables, with no users. */
async function createDefaultTablesAt(url: string): Promise<void> {
  const connection = await connectTo(url, { multipleStatements: true });
  try {
    await createDefaultTables(connection);
  } finally {
    await connection.end();
  }
}

/** pino-pretty is a dev dependency of this repository, not of the package: a team's dev server writes JSON without it. */
function prettyLogsInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

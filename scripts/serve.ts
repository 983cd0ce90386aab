import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from '../runtime/config.js';
import { webhookSecretsNeeded } from '../runtime/events/index.js';
import {
  adminApp,
  type BackendModule,
  checkModuleFormat,
  createLogger,
  createReloadableApp,
  type GeneratedIndex,
  type Logger,
  listen,
  ModuleFormatError,
  openDatabase,
  pagedBackends,
  parseDatabaseUrl,
  REGENERATE,
  type ReloadableApp,
  resourcePath,
  shutDown,
  startTracing,
  XMLREST_VERSION,
} from '../runtime/index.js';
import { FROM_BUILD, PACKAGE_ROOT, packageVersion } from './install.js';

/**
 * `npm start`: serves every backend generated from resources/, configured by
 * the environment (runtime/config.ts), with the admin console at
 * {base}/_console/ (on the main port, on ADMIN_PORT only, or nowhere:
 * CONSOLE), health and readiness at /healthz and /readyz, and on ADMIN_PORT
 * those and /metrics. SIGTERM and SIGINT stop it gracefully.
 */
/**
 * The project served: the current folder, holding generated/ and, built, dist/generated/ (this repository, or a
 * team's project where xmlrest is a dependency and this module lies in node_modules/xmlrest/dist/scripts/).
 */
const project = process.cwd();
/** Where the served modules are: compiled in the project's build, or from source through tsx. */
const modules = FROM_BUILD ? path.join(project, 'dist/generated') : path.join(project, 'generated');

/** The generated modules as written (their `${NAME}` settings read in prepare), refused when of an unserved format. */
const generated = await servedModules();

/** Configuration, pool, logger, console and app; throws when the configuration is wrong. */
async function prepare() {
  const config = loadConfig(process.env, '.env', {
    bearerBackends: generated.filter((backend) => backend.authScheme === 'Bearer').map((backend) => backend.name),
    webhookSecrets: webhookSecretsNeeded(generated),
    pagedBackends: pagedBackends(generated),
    backends: generated,
  });
  // Served with their `${NAME}` settings read from the environment (docs/internals/contract.md §7).
  const backends = config.backends;
  const database = openDatabase(config.databaseUrl, {
    statementTimeoutMs: config.statementTimeoutMs,
    acquireTimeoutMs: config.acquireTimeoutMs,
    queueLimit: config.queueLimit,
    syncWait: config.syncWait,
  });
  try {
    const logger = createLogger(config.logLevel);
    // OpenTelemetry is imported only when an OTLP endpoint is set (runtime/tracing/).
    const tracing = await startTracing(process.env, packageVersion());
    const openapi = JSON.parse(readFileSync(path.join(modules, 'openapi.json'), 'utf8')) as object;
    const middleware = [];
    const adminConsole = config.console === 'off' ? undefined : await loadConsole(config, database, logger, backends);
    if (adminConsole && config.console === 'on') middleware.push(adminConsole.middleware);
    const server = createReloadableApp({
      backends,
      database,
      openapi,
      middleware,
      jwtSecret: config.jwtSecret,
      basePath: config.basePath,
      logger,
      corsOrigins: config.corsOrigins,
      maxParams: config.maxParams,
      etags: config.etags,
      loginLimits: config.loginLimits,
      loginCounters: config.loginCounters,
      proxyHops: config.proxyHops,
      requireTlsForCredentials: config.requireTlsForCredentials,
      issuerKeyTimings: config.issuerKeys,
      webhookSecrets: config.webhookSecrets,
      events: config.events,
      audit: config.audit,
      idempotency: config.idempotency,
      tracing,
    });
    adminConsole?.attach(server);
    // An outside issuer whose discovery document names another issuer is a wrong configuration: refused at start,
    // as docs/internals/contract.md §9 has it. A provider that does not answer is not: the server starts, and /readyz says so.
    // A provider that does not answer delays the start by 6 s at most (its fetch's own bound is 5 s).
    const loaded = await Promise.race([server.issuerKeys.loaded(), new Promise<[]>((resolve) => setTimeout(() => resolve([]), 6000).unref())]);
    for (const keys of loaded) {
      if (keys.misconfigured !== undefined) throw new Error(`identity provider ${keys.settings.iss}: ${keys.misconfigured}`);
    }
    return { config, database, server, logger, adminConsole, tracing, backends };
  } catch (error) {
    await database.end();
    throw error;
  }
}

type ServedBackends = ReturnType<typeof loadConfig>['backends'];

let started: Awaited<ReturnType<typeof prepare>>;
try {
  started = await prepare();
} catch (error) {
  if (error instanceof ConfigError) {
    // Checked before anything connected; said to the person starting it, in words. No value is printed.
    process.stderr.write(
      `xmlrest: cannot start: ${error.problems.length === 1 ? 'a problem' : `${error.problems.length} problems`} with the configuration (the environment, or .env):\n${error.problems.map((problem) => `  - ${problem}\n`).join('')}`,
    );
  } else {
    // Only the message: the configuration's values (secrets among them) stay out of the log.
    createLogger().error({ error: (error as Error).message }, 'refusing to start');
  }
  process.exit(1);
}
const { config, database, server, logger, adminConsole, tracing, backends } = started;
const listenOptions = {
  maxHeaderBytes: config.maxHeaderBytes,
  requestTimeoutMs: config.requestTimeoutMs,
  headersTimeoutMs: config.headersTimeoutMs,
  tls: config.tls,
};
// Known to the other servers on the database before serving (the console asks them before it edits a
// file); a database that does not answer delays the start by a second at most.
await Promise.race([server.peers.beat(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
const running = await listen(server.app, config.port, config.host, listenOptions);
// Health, readiness and metrics on a port of their own (PostgREST's admin server), on the same host; the
// console too with CONSOLE=admin.
const admin =
  config.adminPort === undefined
    ? undefined
    : await listen(server.adminApp(config.console === 'admin' && adminConsole ? [adminConsole.middleware] : []), config.adminPort, config.host, listenOptions);
const routes = backends.flatMap((backend) =>
  backend.resources.map((resource) => `${Object.keys(resource.operations).join(',')} ${resourcePath(config.basePath, backend.name, resource)}`),
);
if (process.env.NODE_ENV === 'production' && config.console === 'on') {
  logger.warn(
    { console: `${running.url}${config.basePath}/_console/` },
    'the admin console is served on the public port: set CONSOLE=admin (with ADMIN_PORT) or CONSOLE=off in production',
  );
}
// How the database link is protected (ssl-mode in DATABASE_URL), said once: plain text is a choice to see.
logger.info(
  { url: running.url + config.basePath, admin: admin?.url, databaseTls: parseDatabaseUrl(config.databaseUrl).sslMode, tracing: tracing !== undefined, routes },
  'listening',
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'stopping');
    void shutDown({ app: server, server: running, admin, database, logger, timeoutMs: config.shutdownTimeoutMs, tracing }).then((clean) => {
      logger.info({ clean }, 'stopped');
      logger.flush();
      process.exit(0);
    });
  });
}

/**
 * The console rewrites resource files and regenerates, so it needs the
 * generator (its packages are dependencies, not build tools). From the build
 * (dist/), regenerated modules are compiled into the build and loaded from
 * there; from source (tsx), through tsx.
 */
async function loadConsole(config: ReturnType<typeof loadConfig>, database: ReturnType<typeof openDatabase>, log: Logger, backends: ServedBackends) {
  try {
    const [{ consoleMiddleware }, { ProjectHost }] = await Promise.all([import('../console/server.js'), import('./project-host.js')]);
    // The project's resources and generated modules; the console's page is the package's.
    const root = project;
    let host: InstanceType<typeof ProjectHost> | undefined;
    let app: ReloadableApp | undefined;
    const middleware = consoleMiddleware({
      basePath: config.basePath,
      backends: () => host?.backends ?? backends,
      database,
      root,
      regenerate: () => (host ? host.regenerate() : Promise.resolve({ ok: false, ms: 0, errors: ['the server is starting'] })),
      assetsDir: path.join(PACKAGE_ROOT, 'dist/console-ui'),
      server: () => app,
      logger: log,
      requireTlsForCredentials: config.requireTlsForCredentials,
    });
    return {
      middleware,
      attach(server: ReloadableApp) {
        app = server;
        host = new ProjectHost({
          root,
          databaseUrl: config.databaseUrl,
          server,
          buildDir: FROM_BUILD ? path.join(project, 'dist') : undefined,
          log: (line) => (/^[^\s:]+:\d+:\d+: /.test(line) ? log.warn({ line }, 'generate') : log.info({ line }, 'generate')),
        });
        host.adopt(backends);
      },
    };
  } catch (error) {
    log.warn({ error: (error as Error).message }, 'console disabled: the generator is not installed');
    return undefined;
  }
}

/**
 * generated/, refused before anything reads it when an xmlrest of a module format this one does not serve made
 * it (runtime/module-format.ts): said in words with the command that fixes it, exit 1, no stack. Modules that
 * cannot even be loaded (a future format may import what this runtime lacks) are named by their header's version.
 */
async function servedModules(): Promise<readonly BackendModule[]> {
  try {
    const index: GeneratedIndex = await import(pathToFileURL(path.join(modules, FROM_BUILD ? 'index.js' : 'index.ts')).href);
    checkModuleFormat(index);
    return index.backends;
  } catch (error) {
    let message = (error as Error).message;
    if (!(error instanceof ModuleFormatError)) {
      const header = /^\/\/ Code generated by xmlrest (\S+) from /.exec(readFirstLine(path.join(modules, FROM_BUILD ? 'index.js' : 'index.ts')));
      message = `the modules in generated/${header ? `, made by xmlrest ${header[1]},` : ''} cannot be loaded by xmlrest ${XMLREST_VERSION} (${message}): run \`${REGENERATE}\` (then \`npm run build\` before \`npm start\`)`;
    }
    process.stderr.write(`xmlrest: cannot start: ${message}\n`);
    process.exit(1);
  }
}

function readFirstLine(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
  } catch {
    return '';
  }
}

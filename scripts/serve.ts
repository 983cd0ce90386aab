import { readFileSync } from 'node:fs';
import { backends } from '../generated/index.js';
import { loadConfig } from '../runtime/config.js';
import { createApp, createLogger, listen, openDatabase, resourcePath } from '../runtime/index.js';

/**
 * `npm start`: serves every backend generated from resources/, configured by
 * DATABASE_URL, JWT_SECRET, PORT, HOST and BASE_PATH.
 */
let started;
try {
  const config = loadConfig();
  const database = openDatabase(config.databaseUrl);
  try {
    const openapi = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8')) as object;
    const app = createApp({ backends, database, openapi, jwtSecret: config.jwtSecret, basePath: config.basePath, logger: createLogger(config.logLevel) });
    started = { config, database, app };
  } catch (error) {
    await database.end();
    throw error;
  }
} catch (error) {
  // Only the message: the configuration's values (secrets among them) stay out of the log.
  createLogger().error('refusing to start', { error: (error as Error).message });
  process.exit(1);
}
const { config, database, app } = started;
const logger = createLogger(config.logLevel);
const running = await listen(app, config.port, config.host);
const routes = backends.flatMap((backend) =>
  backend.resources.map((resource) => `${Object.keys(resource.operations).join(',')} ${resourcePath(config.basePath, backend.name, resource)}`),
);
logger.info('listening', { url: running.url + config.basePath, routes });

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    void running.close().then(() => database.end()).then(() => process.exit(0));
  });
}

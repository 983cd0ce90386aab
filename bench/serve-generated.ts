/** The generated server, as `npm start` runs it, over the benchmark's resources (bench/generated). */
import { readFileSync } from 'node:fs';
import { resolveEnvironment } from '../runtime/config.js';
import { type BackendModule, createApp, createLogger, listen, openDatabase, startTracing } from '../runtime/index.js';

// Generated at benchmark time into bench/generated (git-ignored); a computed specifier keeps the
// repository's type-check independent of whether a benchmark has run.
const modulePath = './generated/index.js';
const generated = (await import(modulePath)) as { backends: BackendModule[] };
// Their `${NAME}` settings read from the environment, as npm start reads them (docs/internals/contract.md §7).
const backends = resolveEnvironment(generated.backends, process.env);

// The generated OpenAPI document, which npm start reads too: a backend's MCP tools are made from it
// (docs/internals/contract.md §16). bench/run.ts names it; the server of 1,000 routes is started without.
const openapi = process.env.OPENAPI_FILE ? (JSON.parse(readFileSync(process.env.OPENAPI_FILE, 'utf8')) as object) : undefined;

const app = createApp({
  backends,
  openapi,
  database: openDatabase(process.env.DATABASE_URL ?? ''),
  jwtSecret: process.env.JWT_SECRET,
  logger: createLogger('warn'),
  // The webhook's secret from the environment; EVENTS_DELIVERY=on for the servers that deliver (the generated
  // server of the scenarios, as servers run by default, and the two whose deliveries are counted), off for the others.
  webhookSecrets: process.env,
  events: { deliver: process.env.EVENTS_DELIVERY !== 'off' },
  // ETAGS=off: no ETag, no 304 (docs/internals/contract.md §15), so that one build runs both ways side by side.
  etags: process.env.ETAGS !== 'off',
  // With OTEL_EXPORTER_OTLP_ENDPOINT set (the bench's traced server), as npm start: OpenTelemetry, else nothing.
  tracing: await startTracing(),
});
await listen(app, Number(process.env.PORT));
process.stdout.write('ready\n');
// Ends by exiting rather than by the signal, so that a profile asked for (BENCH_SERVER_NODE_ARGS=--cpu-prof) is written.
process.once('SIGTERM', () => process.exit(0));

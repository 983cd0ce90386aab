/**
 * Every environment setting `npm start` reads, in one list: what each does and its default (or, for one without
 * a default, an example). `xmlrest init` writes a project's `.env.example` from it, and a unit test scans the
 * sources that read the environment (config.ts, config/, tracing/, scripts/serve.ts) for names missing here, so
 * that the list cannot fall behind them. It describes the settings; config.ts reads and checks them.
 *
 * Not listed, as their names are the project's own: the variable each Webhook's `secret` names, and each
 * `${NAME}` a backend.xml attribute names (docs/internals/contract.md §7).
 */
export interface Setting {
  name: string;
  /** One line: what it does. */
  about: string;
  /** Its default, or an example when it has none (`example` set). */
  value: string;
  /** The value is an example, not the default: the setting has no default (required, or off when unset). */
  example?: true;
  /** Read by OpenTelemetry's SDK itself, not by xmlrest's sources: documented, not found by the scan. */
  readBy?: 'opentelemetry';
}

export const SETTINGS: readonly Setting[] = [
  {
    name: 'DATABASE_URL',
    about: 'the database, required (npm run dev starts a private MariaDB when unset); ?connectionLimit=20 sets the pool size',
    value: 'mysql://app:password@127.0.0.1:3306/app',
    example: true,
  },
  {
    name: 'JWT_SECRET',
    about: 'needed for Bearer backends (and paged lists): at least 32 random bytes; a JSON object of key ids to secrets rotates keys',
    value: 'a-secret-of-at-least-32-random-bytes',
    example: true,
  },
  { name: 'PORT', about: 'listening port', value: '3000' },
  { name: 'HOST', about: 'listening address', value: '127.0.0.1' },
  { name: 'ADMIN_PORT', about: 'a second listener for /healthz, /readyz and /metrics (and the console with CONSOLE=admin)', value: '9000', example: true },
  { name: 'BASE_PATH', about: 'prefix of every API path, such as /api (not of /healthz, /readyz, /metrics)', value: '' },
  { name: 'LOG_LEVEL', about: 'debug, info, warn, error or silent; JSON lines on stdout', value: 'info' },
  { name: 'NODE_ENV', about: 'production: the server warns when the console is served on the public port', value: 'production', example: true },
  { name: 'CONSOLE', about: 'where the admin console is served: on (the main port), admin (ADMIN_PORT only) or off', value: 'on' },
  { name: 'CORS_ORIGINS', about: 'comma-separated browser origins allowed to call the API; empty: CORS off', value: '' },
  { name: 'QUERY_TIMEOUT_MS', about: 'longest a statement may run before the client gets 503', value: '10000' },
  { name: 'DB_ACQUIRE_TIMEOUT_MS', about: 'longest a request waits for a pooled connection before 503', value: '1000' },
  { name: 'DB_QUEUE_LIMIT', about: 'most requests waiting for a connection; past it, 503 at once', value: '200' },
  { name: 'DB_SYNC_WAIT', about: 'on a Galera node, causal reads (wsrep_sync_wait=1)', value: 'true' },
  { name: 'SHUTDOWN_TIMEOUT_MS', about: 'longest a graceful stop waits for requests in flight', value: '10000' },
  { name: 'MAX_PARAMS', about: 'most query-string and body fields in one request (400 past it)', value: '100' },
  { name: 'ETAGS', about: "on: GETs answer ETags and 304 to If-None-Match; off: neither (a proxy's own, the bench)", value: 'on' },
  { name: 'MAX_HEADER_BYTES', about: 'largest header block (431 past it)', value: '16384' },
  { name: 'REQUEST_TIMEOUT_MS', about: 'longest a client may take to send a whole request (408 past it)', value: '30000' },
  { name: 'HEADERS_TIMEOUT_MS', about: 'longest a client may take to send its headers', value: '10000' },
  { name: 'LOGIN_COUNTERS', about: 'memory, or database to share failed-login counts between servers', value: 'memory' },
  { name: 'LOGIN_MAX_FAILURES', about: 'failed password checks per user name from one client in the window, then 429; 0 off', value: '10' },
  { name: 'LOGIN_MAX_FAILURES_PER_ADDRESS', about: 'failed password checks per client in the window, then 429; 0 off', value: '50' },
  { name: 'LOGIN_WINDOW_SECONDS', about: 'the window of the failed-login counts', value: '300' },
  { name: 'LOGIN_BACKOFF_MAX_MS', about: 'longest wait added to each check of a user name that failed too often; 0 off', value: '3000' },
  { name: 'LOGIN_MAX_SESSIONS', about: 'sessions a user may begin in the window (backends with refresh_lifetime); 0 off', value: '60' },
  { name: 'TLS_CERT_FILE', about: 'PEM certificate chain: with TLS_KEY_FILE, the server speaks HTTPS itself', value: '/etc/xmlrest/cert.pem', example: true },
  { name: 'TLS_KEY_FILE', about: 'PEM key of TLS_CERT_FILE', value: '/etc/xmlrest/key.pem', example: true },
  { name: 'PROXY_HOPS', about: 'how many proxies in front append to X-Forwarded-For; 0 reads neither it nor X-Forwarded-Proto', value: '0' },
  { name: 'TRUST_PROXY', about: 'the older form of PROXY_HOPS=1', value: 'false' },
  { name: 'REQUIRE_TLS_FOR_CREDENTIALS', about: 'refuse (403) credentials sent over plain HTTP from anywhere but loopback', value: 'false' },
  { name: 'IDP_STALE_SECONDS', about: "how long an identity provider's last good keys serve once it stops answering", value: '3600' },
  { name: 'IDP_REFETCH_SECONDS', about: "least time between two fetches of one provider's keys", value: '30' },
  { name: 'EVENTS_DELIVERY', about: 'off: this server emits events but leaves their delivery to the others', value: 'on' },
  { name: 'EVENTS_TIMEOUT_MS', about: 'longest one webhook delivery may take', value: '10000' },
  { name: 'EVENTS_RETRY_BASE_MS', about: 'about the first retry delay, doubled for each next one', value: '5000' },
  { name: 'EVENTS_RETRY_MAX_MS', about: 'longest retry delay', value: '3600000' },
  { name: 'EVENTS_RETRY_SECONDS', about: "from an event's first attempt: not delivered within it, it is kept as failed", value: '86400' },
  { name: 'EVENTS_LEASE_SECONDS', about: "how long a claimed event is its server's; at least three times EVENTS_TIMEOUT_MS", value: '60' },
  { name: 'EVENTS_POLL_MS', about: 'how often an idle server looks for due events', value: '1000' },
  { name: 'EVENTS_CONCURRENCY', about: 'most deliveries in flight on one server', value: '16' },
  { name: 'EVENTS_MAX_BYTES', about: 'largest event body; a larger one fails its request', value: '65536' },
  { name: 'EVENTS_RETENTION_SECONDS', about: 'delivered events are removed after this', value: '604800' },
  { name: 'AUDIT_RETENTION_DAYS', about: 'audit rows older than this are removed', value: '90' },
  { name: 'IDEMPOTENCY_RETENTION_SECONDS', about: 'Idempotency-Key records older than this are removed: a retry after it runs again', value: '86400' },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    about: 'an OTLP/HTTP collector: every request is a span; unset, tracing is off',
    value: 'http://127.0.0.1:4318',
    example: true,
  },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', about: 'the same, for traces alone', value: 'http://127.0.0.1:4318/v1/traces', example: true },
  { name: 'OTEL_SDK_DISABLED', about: 'true: no tracing even with an endpoint set', value: 'false' },
  { name: 'OTEL_TRACES_SAMPLER', about: "which requests are traced; a caller's traceparent continues its trace", value: 'parentbased_always_on' },
  { name: 'OTEL_TRACES_SAMPLER_ARG', about: 'the ratio of a ratio sampler', value: '1' },
  { name: 'OTEL_PROPAGATORS', about: 'trace headers read and sent; W3C trace context only when unset', value: 'tracecontext', example: true },
  { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', about: 'http/protobuf or http/json', value: 'http/protobuf', readBy: 'opentelemetry' },
  { name: 'OTEL_SERVICE_NAME', about: "the traces' service name", value: 'xmlrest', readBy: 'opentelemetry' },
  {
    name: 'OTEL_RESOURCE_ATTRIBUTES',
    about: "more attributes of the traces' resource, key=value,...",
    value: 'deployment.environment=production',
    example: true,
    readBy: 'opentelemetry',
  },
];

/**
 * Every message the server writes to its log (pino's JSON lines on stdout, `msg`), with its level and when: one
 * list, from which `npm run docs` writes docs/reference/logs.md. test/unit/reference.test.ts reads the sources
 * `npm start` runs (runtime/, console/, scripts/serve.ts) for the messages they write, and fails when one is
 * missing here or one here is written nowhere. `*` stands for a value put in. The refusal and fault reasons of
 * the `request` line are runtime/statuses.ts's.
 */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  /** When it is written, and the fields beside `msg` worth knowing. */
  when: string;
}

export const LOG_LINES: readonly LogLine[] = [
  {
    level: 'info',
    msg: 'request',
    when: 'every request once answered: requestId, method, path, status, ms, backend, resource, userId, keyId, tenant (on a tenant backend), reason (a refusal or fault), trace_id',
  },
  { level: 'info', msg: 'listening', when: 'the server is ready: url, admin, databaseTls, tracing, routes' },
  { level: 'info', msg: 'stopping', when: 'SIGTERM or SIGINT: signal, timeoutMs' },
  { level: 'info', msg: 'stopped', when: 'the graceful stop ended: clean' },
  { level: 'error', msg: 'MCP endpoint not made', when: "a backend's MCP tools could not be made at start (backend, error); its endpoint answers 500" },
  {
    level: 'warn',
    msg: 'MCP endpoint not mounted: no OpenAPI document to make its tools from (generated/openapi.json)',
    when: 'a backend has mcp="on" but the server was given no OpenAPI document (backend)',
  },
  { level: 'error', msg: 'refusing to start', when: 'a setting or the project is wrong (error says which); the process exits 1' },
  { level: 'info', msg: 'generate', when: "a line of the generator's output when the console regenerates (line)" },
  { level: 'warn', msg: 'generate', when: 'a generator error or warning when the console regenerates (line: file:line:col: ...)' },
  { level: 'warn', msg: 'console disabled: the generator is not installed', when: 'a production install without the generator' },
  {
    level: 'warn',
    msg: 'the admin console is served on the public port: set CONSOLE=admin (with ADMIN_PORT) or CONSOLE=off in production',
    when: 'NODE_ENV=production with CONSOLE=on',
  },
  { level: 'warn', msg: 'console change refused by the generator', when: "the console's change of auth did not generate: errors" },
  { level: 'error', msg: 'request failed', when: 'a fault of the server answered 500: requestId, error, code, sql, stack' },
  { level: 'warn', msg: 'database fault', when: 'a database fault answered 503: requestId, reason (db_*), error, code, errno' },
  { level: 'warn', msg: 'database operation run again', when: 'a deadlock, Galera conflict, lock wait or lost connection retried: reason, attempt' },
  { level: 'warn', msg: 'requests still running at the shutdown limit: cut off', when: 'SHUTDOWN_TIMEOUT_MS passed with requests in flight' },
  { level: 'warn', msg: 'cannot announce this server in xmlrest_server; trying again every few seconds', when: 'the peers table cannot be written' },
  { level: 'warn', msg: 'cannot read token revocations; keeping the last lists', when: 'the revocation poll failed' },
  {
    level: 'warn',
    msg: 'cannot end grants whose time has come (the server deletes them from usr_role: it needs DELETE there, and the tables of xmlrest db init); trying again at every poll',
    when: 'grants that end cannot be deleted',
  },
  { level: 'warn', msg: 'a revocation table is of an earlier version: run xmlrest db init', when: 'the revocation tables are older than the server' },
  { level: 'warn', msg: 'cannot record when API keys were last used', when: "the keys' last-use write failed" },
  { level: 'warn', msg: "identity provider's keys not fetched", when: "an outside issuer's key set could not be fetched: issuer, problem" },
  { level: 'warn', msg: 'rate limits admit every call for a second: the database did not answer', when: 'a rate-limit lease failed: fail open' },
  {
    level: 'warn',
    msg: 'rate limits admit every call: the table xmlrest_rate_limit is missing (run xmlrest db init)',
    when: 'the rate-limit table is missing',
  },
  { level: 'info', msg: '* pruned', when: 'housekeeping removed aged rows (delivered events, audit rows): removed, more' },
  { level: 'warn', msg: 'cannot prune *', when: 'housekeeping failed (a missing table is named)' },
  { level: 'warn', msg: 'audit rows dropped: * wait already for the database', when: 'the audit queue is full' },
  { level: 'warn', msg: 'cannot write audit rows: they wait (in memory, bounded) for the database', when: 'an audit batch failed' },
  { level: 'warn', msg: 'audit row dropped: the database refused a value of it', when: 'the database refused one audit row' },
  { level: 'info', msg: 'event delivered', when: 'a webhook delivery succeeded (only while info lines are logged): event, webhook, status' },
  { level: 'warn', msg: 'event delivery failed; it will be tried again', when: 'a delivery failed: retryInMs, error' },
  { level: 'warn', msg: 'event delivery failed after its lease ended: another server has it now', when: 'a delivery outlived its lease' },
  {
    level: 'error',
    msg: 'event not delivered within the retry window: kept as failed (xmlrest events retry)',
    when: 'EVENTS_RETRY_SECONDS passed without a delivery',
  },
  {
    level: 'warn',
    msg: 'webhook stopped: its receiver answered 410 Gone; nothing more is sent to it until an operator retries (xmlrest events retry)',
    when: 'a receiver answered 410',
  },
  {
    level: 'warn',
    msg: 'cannot record delivery outcomes: the database did not answer; those events will be delivered again',
    when: 'an outcome batch failed',
  },
  { level: 'warn', msg: 'cannot claim events: the database did not answer; trying again', when: 'the delivery worker cannot claim' },
  { level: 'warn', msg: 'cannot hand an event back; its lease ends', when: 'a claimed event cannot be released' },
  { level: 'warn', msg: 'events: *', when: "the delivery worker's other failures" },
  { level: 'warn', msg: 'events: the table xmlrest_outbox is missing (run xmlrest db init)', when: 'the outbox table is missing' },
  {
    level: 'warn',
    msg: 'events: the procedure that writes an event with its COMMIT is missing (run xmlrest db init); each event takes a round trip of its own meanwhile',
    when: 'the outbox procedure is missing',
  },
  {
    level: 'warn',
    msg: 'an event over EVENTS_MAX_BYTES refused its request (413): emit a smaller step (the ids and what receivers need, not whole rows of text)',
    when: 'an event too large (reason event_too_large)',
  },
];

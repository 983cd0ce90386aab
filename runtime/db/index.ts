/**
 * The database room: what the rest of the runtime imports of it.
 * - database.ts: `Database`, every operation bounded in time, run again when that is safe, in a transaction or not;
 * - statements.ts: statements on one connection, each held as its connection's prepared statement;
 * - faults.ts: which driver errors are faults (503), when an operation runs again, and the deadlines;
 * - pool.ts: the pool, or mysql2's pool cluster over several hosts, and each connection's session setup;
 * - url.ts: DATABASE_URL read into hosts and pool options; tls.ts: its TLS options (ssl-mode and friends);
 * - schema-errors.ts: a table or column of xmlrest's schema that is not there (`xmlrest db init` makes it).
 */
export { type ConnectionSource, Database, type DatabaseTimings, DEFAULT_TIMINGS, type TransactionOptions } from './database.js';
export { DatabaseFault, type FaultKind, faultOf } from './faults.js';
export { type DatabaseOptions, openDatabase } from './pool.js';
export { errnoOf, NO_COLUMN, NO_PROCEDURE, NO_TABLE } from './schema-errors.js';
export type { Queryable, SqlValue, WriteResult } from './statements.js';
export { SSL_MODES, type SslMode } from './tls.js';
export { connectionOptions, type DatabaseHost, type DatabaseUrl, DatabaseUrlError, parseDatabaseUrl } from './url.js';

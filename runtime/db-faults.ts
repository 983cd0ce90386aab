/**
 * What went wrong with the database, sorted by what the server may do about
 * it (docs/contract.md §7). A fault is never the client's doing: it answers
 * 503 with Retry-After, never 500. Errors that are the client's (a duplicate
 * key, a value a column refuses) are not faults; errors.ts maps those.
 */
export type FaultKind =
  /** The transaction was rolled back whole (a deadlock, a Galera certification conflict, a lock wait): run it again. */
  | 'conflict'
  /** The connection failed or could not be made: nothing it carried was committed, unless it failed during COMMIT. */
  | 'connection'
  /** The database did not answer in time (a statement past its limit, a pool with no free connection). */
  | 'timeout'
  /** The database (a Galera node) says it cannot serve now. */
  | 'unavailable';

/** A database fault, with a reason code for the log and the metrics. */
export class DatabaseFault extends Error {
  constructor(
    readonly kind: FaultKind,
    /** `db_unreachable`, `db_timeout`, `db_pool_exhausted`, `db_conflict`, `db_commit_unknown`, `db_not_ready`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`database fault: ${reason}`, options);
    this.name = 'DatabaseFault';
  }
}

const CONFLICT_ERRNOS = new Set([
  1213, // ER_LOCK_DEADLOCK; on Galera also a certification conflict
  1205, // ER_LOCK_WAIT_TIMEOUT
]);
const TIMEOUT_ERRNOS = new Set([
  1969, // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
  3024, // ER_QUERY_TIMEOUT (MySQL max_execution_time)
]);
const UNAVAILABLE_ERRNOS = new Set([
  1047, // ER_UNKNOWN_COM_ERROR: "WSREP has not yet prepared node for application use"
  1053, // ER_SERVER_SHUTDOWN
  1040, // ER_CON_COUNT_ERROR: too many connections
  1927, // ER_CONNECTION_KILLED
  2002, // CR_CONNECTION_ERROR
  2003, // CR_CONN_HOST_ERROR
  2006, // CR_SERVER_GONE_ERROR
  2013, // CR_SERVER_LOST
]);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  // mysql2's pool cluster: every host is resting after a failure.
  'POOL_NONEONLINE',
  'POOL_NOEXIST',
]);

/** The fault an error from the driver is, or undefined when it is not one. */
export function faultOf(error: unknown): DatabaseFault | undefined {
  if (error instanceof DatabaseFault) return error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { errno, code, fatal, message } = error as { errno?: unknown; code?: unknown; fatal?: unknown; message?: unknown };
  if (typeof errno === 'number') {
    if (CONFLICT_ERRNOS.has(errno)) return new DatabaseFault('conflict', 'db_conflict', { cause: error });
    if (TIMEOUT_ERRNOS.has(errno)) return new DatabaseFault('timeout', 'db_timeout', { cause: error });
    if (errno === 1047) return new DatabaseFault('unavailable', 'db_not_ready', { cause: error });
    if (UNAVAILABLE_ERRNOS.has(errno)) return new DatabaseFault('connection', 'db_unreachable', { cause: error });
  }
  if (code === 'PROTOCOL_SEQUENCE_TIMEOUT') return new DatabaseFault('timeout', 'db_timeout', { cause: error });
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return new DatabaseFault('connection', 'db_unreachable', { cause: error });
  // mysql2 marks every error that ends the connection as fatal; and says so in words when a closed one is used.
  if (fatal === true || (typeof message === 'string' && /connection is in closed state|Pool is closed|Connection lost/i.test(message))) {
    return new DatabaseFault('connection', 'db_unreachable', { cause: error });
  }
  return undefined;
}

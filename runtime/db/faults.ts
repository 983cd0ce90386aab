/**
 * What went wrong with the database, sorted by what the server may do about
 * it (docs/internals/contract.md §7). A fault is never the client's doing: it answers
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
  | 'unavailable'
  /**
   * The database refused a write for want of space (a full disk, a full table): the statement is undone and the
   * connection sound, so it is neither run again at once nor dropped; reads still work.
   */
  | 'full';

/** A database fault, with a reason code for the log and the metrics. */
export class DatabaseFault extends Error {
  constructor(
    readonly kind: FaultKind,
    /** `db_unreachable`, `db_tls`, `db_timeout`, `db_pool_exhausted`, `db_conflict`, `db_commit_unknown`, `db_not_ready`, `db_full`. */
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
const FULL_ERRNOS = new Set([
  1114, // ER_RECORD_FILE_FULL: "The table is full" (InnoDB on a full disk or tablespace; a MEMORY table at its size)
  1021, // ER_DISK_FULL
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

/** mysql2's codes for a TLS handshake that failed, and for a server that offers no TLS when it was asked for. */
const TLS_CODES = new Set(['HANDSHAKE_SSL_ERROR', 'HANDSHAKE_NO_SSL_SUPPORT']);

/** The fault an error from the driver is, or undefined when it is not one. */
export function faultOf(error: unknown): DatabaseFault | undefined {
  if (error instanceof DatabaseFault) return error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { errno, code, fatal, message } = error as { errno?: unknown; code?: unknown; fatal?: unknown; message?: unknown };
  if (typeof errno === 'number') {
    if (CONFLICT_ERRNOS.has(errno)) return new DatabaseFault('conflict', 'db_conflict', { cause: error });
    if (TIMEOUT_ERRNOS.has(errno)) return new DatabaseFault('timeout', 'db_timeout', { cause: error });
    if (errno === 1047) return new DatabaseFault('unavailable', 'db_not_ready', { cause: error });
    if (FULL_ERRNOS.has(errno)) return new DatabaseFault('full', 'db_full', { cause: error });
    if (UNAVAILABLE_ERRNOS.has(errno)) return new DatabaseFault('connection', 'db_unreachable', { cause: error });
  }
  if (code === 'PROTOCOL_SEQUENCE_TIMEOUT') return new DatabaseFault('timeout', 'db_timeout', { cause: error });
  // The link's TLS failed (a certificate not verified, a server without TLS): never retried in plain text.
  if (typeof code === 'string' && TLS_CODES.has(code)) return new DatabaseFault('connection', 'db_tls', { cause: error });
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return new DatabaseFault('connection', 'db_unreachable', { cause: error });
  // mysql2 marks every error that ends the connection as fatal; and says so in words when a closed one is used.
  if (fatal === true || (typeof message === 'string' && /connection is in closed state|Pool is closed|Connection lost/i.test(message))) {
    return new DatabaseFault('connection', 'db_unreachable', { cause: error });
  }
  return undefined;
}

/** Deadlines: every database operation is bounded in time, and a late answer is a fault, never a hang. */
export function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

export const TIMED_OUT = () => new DatabaseFault('timeout', 'db_timeout');
export const POOL_EXHAUSTED = () => new DatabaseFault('timeout', 'db_pool_exhausted');

/**
 * What `work` settles to, or the fault `timeout` makes once `ms` have passed.
 * Work that settles later settles nothing and is never unhandled; a value
 * that came too late is handed to `late` (a connection goes back to its pool).
 */
export function bounded<T>(work: Promise<T>, ms: number, timeout: () => DatabaseFault, late?: (value: T) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      reject(timeout());
    }, ms);
    work.then(
      (value) => {
        if (expired) late?.(value);
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Whether an operation that failed with `fault` runs again (docs/internals/contract.md §7): a transaction the database
 * rolled back (deadlock, Galera conflict, lock wait) always may; a connection that failed before COMMIT was
 * sent committed nothing, so an operation that allows it (`retryConnectionFaults`: a read, a transaction) may;
 * a node that says it is not ready (1047) ran nothing; a failure during COMMIT (`db_commit_unknown`) never.
 */
export function mayRunAgain(
  fault: DatabaseFault,
  options: { retryConnectionFaults: boolean },
  attempt: number,
  attempts: number,
  remainingMs: number,
): boolean {
  return (
    attempt < attempts &&
    fault.reason !== 'db_commit_unknown' &&
    (fault.kind === 'conflict' || fault.kind === 'unavailable' || (fault.kind === 'connection' && options.retryConnectionFaults)) &&
    remainingMs > 50
  );
}

/**
 * The wait before try `attempt + 1`. Full jitter: anywhere up to an exponentially growing bound, so that two
 * requests that collided do not collide again in step; never more than half the time left.
 */
export function pause(attempt: number, remainingMs: number): Promise<void> {
  const ms = Math.min(remainingMs / 2, Math.random() * 50 * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

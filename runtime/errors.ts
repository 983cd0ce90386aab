import type Koa from 'koa';
import type { ErrorBody } from './contract.js';
import { faultOf } from './db/index.js';
import type { Logger } from './log.js';

/**
 * Every failure a client may see is an HttpError; `errorResponses` turns it
 * into `{"message", "status"}` JSON in one place. Anything else that escapes
 * a handler is a 500 whose details go to the log only.
 */
const BRAND = Symbol.for('xmlrest.HttpError');

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra response headers, such as WWW-Authenticate or Allow. */
    readonly headers: Record<string, string> = {},
    /** Why, for the log and the metrics (`no_credentials`, `bad_password`, `role_not_held`, ...); never sent. */
    readonly reason?: string,
  ) {
    // An answer to a client, not a fault: nobody reads its stack, and capturing one is a real part of the
    // cost of refusing a forged token (a flood of them is an attack to answer cheaply).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'HttpError';
  }

  /**
   * Recognised by a global brand, not by class identity: a module the console
   * regenerates is loaded from source beside a compiled server, and its
   * plug-ins throw the source copy of this class.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  get [BRAND](): true {
    return true;
  }
}

export const FORBIDDEN_MESSAGE = 'Forbidden access to resource';

export function forbidden(reason = 'role_not_held'): HttpError {
  return new HttpError(403, FORBIDDEN_MESSAGE, {}, reason);
}

export function badRequest(message: string): HttpError {
  return new HttpError(400, message);
}

/**
 * MariaDB error numbers that are the client's fault, not the server's.
 * https://mariadb.com/kb/en/mariadb-error-code-reference/
 */
const CONFLICT_ERRNOS = new Set([
  1062, // ER_DUP_ENTRY
  1451, // ER_ROW_IS_REFERENCED_2
  1452, // ER_NO_REFERENCED_ROW_2
  1586, // ER_DUP_ENTRY_WITH_KEY_NAME
]);
const REJECTED_VALUE_ERRNOS = new Set([
  1048, // ER_BAD_NULL_ERROR
  1264, // ER_WARN_DATA_OUT_OF_RANGE
  1690, // ER_DATA_OUT_OF_RANGE: arithmetic past its type (`stock - $quantity` below 0 unsigned, a version past its largest)
  1265, // WARN_DATA_TRUNCATED
  1292, // ER_TRUNCATED_WRONG_VALUE
  1366, // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
  1406, // ER_DATA_TOO_LONG
  1411, // ER_WRONG_VALUE_FOR_TYPE
  3819, // ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
  4025, // ER_CONSTRAINT_FAILED (MariaDB CHECK)
  4078, // ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION
]);

/**
 * Maps a database driver error to the HttpError a client should see, or
 * undefined when it is a server fault (500). Nothing of the driver's text
 * reaches the client: no constraint, table or column name, which would map
 * the schema for an attacker (the request id leads to the log, which has it).
 */
export function httpErrorFromDatabase(error: unknown): HttpError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const errno = (error as { errno?: unknown }).errno;
  if (typeof errno !== 'number') return undefined;
  if (CONFLICT_ERRNOS.has(errno)) {
    return new HttpError(
      409,
      errno === 1062 || errno === 1586 ? 'Conflict: a row with this key already exists' : 'Conflict: the row refers to, or is referred to by, another row',
    );
  }
  if (REJECTED_VALUE_ERRNOS.has(errno)) return new HttpError(400, 'A value was rejected by the database: check the parameters');
  return undefined;
}

/** Errors raised by koa-bodyparser and Koa itself carry a 4xx status. */
function clientErrorFromKoa(error: unknown): HttpError | undefined {
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (status === 413) return new HttpError(413, 'Request body too large');
  if (status === 415) return new HttpError(415, 'Unsupported body type: send JSON or form-encoded');
  if (status === 400) return new HttpError(400, 'Malformed request body');
  return new HttpError(status, (error as Error).message);
}

/** Seconds a client should wait before trying again after a database fault. */
const RETRY_AFTER = '1';

/**
 * What a client is answered for a failure, as `errorResponder` classifies it: a refusal (its HttpError, a database
 * refusal, a bad body), a database fault (503 with Retry-After and the fault's reason), or undefined for a fault of
 * the server's own (500). For an answer that holds failures of its own (a batch's failing operation, runtime/batch/).
 */
export function answerFor(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  const fault = faultOf(error);
  if (fault) return new HttpError(503, 'Service unavailable', { 'Retry-After': RETRY_AFTER }, fault.reason);
  return httpErrorFromDatabase(error) ?? clientErrorFromKoa(error);
}

/**
 * The one place where failures become JSON bodies (docs/internals/contract.md §3, §7):
 * the front door (front-door.ts) hands it whatever a request threw. A
 * database fault is 503 with Retry-After, never 500; the SQL and the
 * driver's text go to the log only, never to the client. The reason of a
 * refusal (`ctx.state.reason`) is left for the access log and the metrics.
 */
export function errorResponder(logger: Logger): (ctx: Koa.Context, error: unknown) => void {
  return (ctx, error) => {
    const requestId = String(ctx.state.requestId);
    const fault = error instanceof HttpError ? undefined : faultOf(error);
    const known = fault ? undefined : answerFor(error);
    let body: ErrorBody;
    if (known) {
      ctx.set(known.headers);
      if (known.reason !== undefined) ctx.state.reason = known.reason;
      body = { message: known.message, status: known.status };
    } else if (fault) {
      ctx.set('Retry-After', RETRY_AFTER);
      ctx.state.reason = fault.reason;
      const cause = fault.cause as { message?: unknown; code?: unknown; errno?: unknown } | undefined;
      logger.warn({ requestId, reason: fault.reason, error: cause?.message, code: cause?.code, errno: cause?.errno }, 'database fault');
      body = { message: 'Service unavailable', status: 503, requestId };
    } else {
      const detail = error as { message?: unknown; code?: unknown; sql?: unknown; stack?: unknown };
      logger.error(
        { requestId, method: ctx.method, path: ctx.path, error: String(detail.message ?? error), code: detail.code, sql: detail.sql, stack: detail.stack },
        'request failed',
      );
      body = { message: 'Internal error', status: 500, requestId };
    }
    ctx.status = body.status;
    ctx.body = body;
  };
}

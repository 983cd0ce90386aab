/**
 * Writes a client can retry and race safely (docs/internals/contract.md §15): validators on reads, conditional
 * writes, idempotency keys and batches. The shapes both sides speak of; the runtime's parts live in
 * runtime/conditional/, runtime/idempotency/ and runtime/batch/.
 *
 * Entity tags. Every tag the server answers is strong, and of one of two forms:
 * - a digest: `"` + 27 characters of base64url (the first 160 bits of a SHA-256) + `"`, of the answer's bytes (a
 *   GET without a validator), or of a `<Validator>`'s rows together with what else the answer depends on (the
 *   route, the caller's `$uid` and `$tenant`, the query string);
 * - a version: `"` + the canonical decimal text of a version column's value + `"` (`"7"`), answered by a GET whose
 *   `<Validator>` reads the resource's version column, and by a versioned write that moved it. It is the only form
 *   If-Match compares: a digest, a weak tag (`W/"…"`) or anything else never matches a version.
 */

/** A version tag's value: canonical digits of an unsigned 64-bit integer (`0`, `7`, never `07`). */
export const VERSION_VALUE = /^(0|[1-9][0-9]{0,19})$/;

/** How a GET's `<Validator>` turns its rows into the answer's ETag (RequestScope.validate). */
export type ValidatorKind =
  /** A digest of the rows, the route, `$uid`, `$tenant` and the query string. */
  | 'rows'
  /** The one row's one column is the resource's version column: the tag is its value (`"7"`); no row, no tag. */
  | 'version';

/**
 * A versioned write's precondition (`version="<column>"` on a Request, `if_match="required"`): what
 * RequestScope.ifMatch found in the request's If-Match.
 * - `null`: the request sent none (and the route does not require one): the write runs unconditionally, and still
 *   moves the version on.
 * - a string: the version the caller last saw; the write's statement compares it (`and <version> = ?`) in the write
 *   itself, so that no other write can come between a check and the change.
 */
export type ExpectedVersion = string | null;

/** Default bounds of a backend's batches (`batch="on"` in backend.xml; `batch_max_operations`, `batch_timeout`). */
export const DEFAULT_BATCH_MAX_OPERATIONS = 100;
export const DEFAULT_BATCH_TIMEOUT_SECONDS = 10;

/** A backend's batches (`batch="on"`): absent when off, the default. */
export interface BatchSettings {
  /** Most operations in one batch; past it, 400 before any runs. */
  maxOperations: number;
  /** Longest a batch's transaction may run, in milliseconds; past it, rolled back and 503 with Retry-After. */
  timeoutMs: number;
}

/**
 * One operation of `POST {base}/<backend>/batch`, as the client sends it. `path` is a path of one of the backend's
 * own resource routes (with the base path, a query string allowed). Any value inside `body` may be a reference
 * `{"$ref": "/<index>/<pointer…>"}` to a value an earlier operation answered: a JSON Pointer (RFC 6901) into the
 * list of the earlier operations' bodies (`{"$ref": "/0/order/insertId"}`). A reference to an operation not yet run,
 * or to nothing, is a 400 naming the operation.
 */
export interface BatchOperation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
  /** Only `If-Match` and `If-None-Match` are taken; any other header is a 400. */
  headers?: Record<string, string>;
}

/** What a batch that committed answers: 200, each operation's status and body, in order. */
export interface BatchAnswer {
  results: { status: number; body: unknown }[];
}

/**
 * What a batch that did not commit answers, with the failing operation's own status (a 503 with its Retry-After):
 * `{"message": "Operation <index> failed: <its message>", "status", "index", "error": <its error body>}`.
 */
export interface BatchFailure {
  message: string;
  status: number;
  index: number;
  error: { message: string; status: number };
}

/** How long an idempotency record is kept by default (IDEMPOTENCY_RETENTION_SECONDS). */
export const DEFAULT_IDEMPOTENCY_RETENTION_SECONDS = 86_400;

/** The longest Idempotency-Key accepted: printable ASCII (0x21-0x7E), 1 to this many characters; otherwise 400. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

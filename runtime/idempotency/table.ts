// The idempotency records' table as `xmlrest db init` makes it, and the statements on it (docs/internals/contract.md §15).

/**
 * A row per (backend, caller, Idempotency-Key) whose request committed. `id` and `fingerprint` are SHA-256 digests
 * (key.ts): neither the key nor the caller is kept in the clear, and nothing secret is (an answer that carries a token
 * is never recorded). `status` and `body` are NULL only inside the transaction that claimed the row: it fills them in
 * as its last statement, so no other transaction ever sees a row without them (there is no "stuck" record to mend).
 */
export const IDEMPOTENCY_TABLE = `create table if not exists xmlrest_idempotency (
  id binary(32) not null primary key,
  fingerprint binary(32) not null,
  status smallint unsigned null,
  body mediumtext character set utf8mb4 collate utf8mb4_bin null,
  created_at timestamp(3) not null default current_timestamp(3),
  key xmlrest_idempotency_created (created_at)
) engine = InnoDB`;

/**
 * The claim: the first statement of the request's transaction. A concurrent first use of the key holds the row's lock
 * until it commits or rolls back; this waits for it at most a second (MariaDB's SET STATEMENT, for this statement
 * alone), then fails with 1205, which the caller answers 409. MySQL has no SET STATEMENT (this statement is a syntax
 * error there): it would need `set session innodb_lock_wait_timeout = 1` before the claim and the session's value set
 * back after it, two more round trips.
 */
export const CLAIM_SQL = 'set statement innodb_lock_wait_timeout = 1 for insert into xmlrest_idempotency (id, fingerprint) values (?, ?)';

/** A committed record, read when the claim found one. */
export const READ_SQL = 'select fingerprint, status, body from xmlrest_idempotency where id = ?';

/** The answer recorded, as the transaction's last statement before its COMMIT. */
export const COMPLETE_SQL = 'update xmlrest_idempotency set status = ?, body = ? where id = ?';

/** An answer that carries a token is never kept: the claim goes, in the same transaction, and a retry runs again. */
export const RELEASE_SQL = 'delete from xmlrest_idempotency where id = ?';

/** Most rows one pruning removes (runtime/housekeeping.ts: a bounded batch a tick). */
export const PRUNE_BATCH = 5000;

/** Records older than the retention (IDEMPOTENCY_RETENTION_SECONDS), a batch at a time, by the `created_at` index. */
export const PRUNE_SQL = `delete from xmlrest_idempotency where created_at < now(3) - interval ? second limit ${PRUNE_BATCH}`;

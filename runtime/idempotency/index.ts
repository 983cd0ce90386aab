/**
 * Idempotency-Key on POSTs (docs/internals/contract.md §15, the IETF httpapi draft as Stripe has it): a POST that
 * runs a transaction and carries the header runs once per backend, caller and key. Its record is claimed as the
 * first statement of the request's own transaction and completed with the answer as its last, so a committed write
 * always has its record and a rolled-back one never does, and every server sees it. A retry finds the committed
 * record: the same request (fingerprint) is answered the recorded status and body (`IdempotentReplay`), another is
 * 422; a first use still running holds the row's lock, and a retry that waited a second for it is 409.
 *
 * A batch (runtime/batch/) opens its own transaction: it wraps its work in `idempotently` just as a request's
 * scope does (runtime/scope.ts).
 */
import type { Queryable } from '../contract.js';
import { errnoOf, NO_TABLE } from '../db/index.js';
import { HttpError } from '../errors.js';
import type { Chore } from '../housekeeping.js';
import { fingerprint, recordId } from './key.js';
import { CLAIM_SQL, COMPLETE_SQL, PRUNE_BATCH, PRUNE_SQL, READ_SQL, RELEASE_SQL } from './table.js';

export { callerOf, canonicalText, fingerprint, framedDigest, idempotencyKeyOf, recordId } from './key.js';
export { IDEMPOTENCY_TABLE } from './table.js';

const DUPLICATE_KEY = 1062; // ER_DUP_ENTRY
const LOCK_WAIT_TIMEOUT = 1205; // ER_LOCK_WAIT_TIMEOUT

/** The record a request claims: its id (backend, caller, key) and what a retry must repeat. */
export interface Claim {
  id: Buffer;
  fingerprint: Buffer;
}

/** What a request is, for its record: who sent which key, and the request a retry must repeat. */
export interface IdempotentRequest {
  backend: string;
  /** `callerOf(ctx.state)` once the guard has run: `u:<user>`, `k:<key id>` or `public`. */
  caller: string;
  key: string;
  method: string;
  /** The route's path as registered. */
  route: string;
  query: string;
  /** The parsed body, undefined when there is none. */
  body: unknown;
}

export function claimOf(request: IdempotentRequest): Claim {
  return {
    id: recordId(request.backend, request.caller, request.key),
    fingerprint: fingerprint(request.method, request.route, request.query, request.body),
  };
}

/** The answer recorded: its status and the exact text of its body; null when it carries a token (never recorded). */
export type RecordedAnswer = { status: number; body: string } | null;

/**
 * A retry of a committed request: thrown from inside its transaction (which then rolls back, having written nothing),
 * and answered by routes.ts (or a batch) with the first answer's status and body, marked `Idempotent-Replayed: true`.
 */
export class IdempotentReplay extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super('idempotent replay');
    this.name = 'IdempotentReplay';
  }
}

/**
 * `work` as one attempt of a transaction that carries an Idempotency-Key: the claim first, the answer last. Each
 * attempt claims afresh: a deadlocked attempt's claim was rolled back with it. For a batch:
 * `db.transaction(idempotently(claim, run, (answer) => ({ status: 200, body: JSON.stringify(answer) })))`.
 */
export function idempotently<T>(claim: Claim, work: (db: Queryable) => Promise<T>, answer: (result: T) => RecordedAnswer): (db: Queryable) => Promise<T> {
  return async (db) => {
    await claimIn(db, claim);
    const result = await work(db);
    const recorded = answer(result);
    if (recorded === null) await db.write(RELEASE_SQL, [claim.id]);
    else await db.write(COMPLETE_SQL, [recorded.status, recorded.body, claim.id]);
    return result;
  };
}

/** Claims the record, or throws what a request whose key was used before answers. */
async function claimIn(db: Queryable, claim: Claim): Promise<void> {
  try {
    await db.write(CLAIM_SQL, [claim.id, claim.fingerprint]);
    return;
  } catch (error) {
    const errno = errnoOf(error);
    // Caught here, before the database layer would take a lock wait for a conflict to run again (db/faults.ts).
    if (errno === LOCK_WAIT_TIMEOUT) throw inProgress();
    if (errno === NO_TABLE)
      throw new HttpError(503, 'Idempotency-Key is not available: run xmlrest db init', { 'Retry-After': '60' }, 'idempotency_unavailable');
    if (errno !== DUPLICATE_KEY) throw error;
  }
  // No consistent read has run in this transaction yet: this one sees the record as committed.
  const [row] = await db.select<{ fingerprint: Buffer; status: number | null; body: string | null }>(READ_SQL, [claim.id]);
  // Gone since (pruned, or a token answer's claim released): run again after a moment.
  if (row === undefined) throw inProgress();
  if (!Buffer.from(row.fingerprint).equals(claim.fingerprint)) {
    throw new HttpError(422, 'This Idempotency-Key was used with another request', {}, 'idempotency_key_reused');
  }
  // Never seen committed (completed in the claiming transaction); said rather than assumed.
  if (row.status === null || row.body === null) throw inProgress();
  throw new IdempotentReplay(row.status, row.body);
}

function inProgress(): HttpError {
  return new HttpError(409, 'A request with this Idempotency-Key is still running', { 'Retry-After': '1' }, 'idempotency_in_progress');
}

/**
 * Records past IDEMPOTENCY_RETENTION_SECONDS, a bounded batch a tick (runtime/housekeeping.ts: one server at a time),
 * at least as often as the retention, so that a short one is kept to closely.
 */
export function idempotencyPruning(db: Queryable, retentionSeconds: number): Chore {
  return {
    name: 'idempotency records',
    everyMs: Math.min(60_000, Math.max(1000, retentionSeconds * 1000)),
    run: async () => {
      const { affectedRows } = await db.write(PRUNE_SQL, [retentionSeconds]);
      return { removed: affectedRows, more: affectedRows >= PRUNE_BATCH };
    },
  };
}

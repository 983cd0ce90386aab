import type { Queryable, SqlValue } from '../db/index.js';
import { OUTBOX_COMMIT_PROCEDURE } from './outbox-schema.js';

/**
 * The outbox (docs/internals/contract.md §12): one row per event and webhook, written
 * by the request's own transaction (so a rolled-back request emits nothing),
 * delivered by whichever server claims it. A claim is a short transaction:
 * `SELECT ... FOR UPDATE SKIP LOCKED` (MariaDB 10.6+, MySQL 8), so that
 * servers claiming at once never wait for each other nor take the same row,
 * then the claimed rows' `due` moves to the end of a lease. The delivery
 * itself holds no transaction: a server killed in the middle of it leaves the
 * row due again when its lease ends, for any server to take. Times are the
 * database's own (`now(3)`), so that servers whose clocks differ agree.
 *
 * States: `pending` (waiting for its next attempt, or leased: `leased_by`
 * says by whom), `delivered` (`due` is when; pruned after the retention), and
 * `failed` (no 2xx within the retry window, or a 410: kept until retried).
 *
 * Here: the request's insert, claims and their outcomes. The tables are in outbox-schema.ts; what operators and
 * housekeeping do with the rows (lists, retries, pruning, the depth) in outbox-admin.ts.
 */

/** Where an event goes: a backend's webhook, by its URL (the row holds the URL, so a row goes nowhere else). */
export interface Target {
  backend: string;
  url: string;
}

/** One event's row for one webhook, as the request writes it. */
export interface NewEvent {
  msgId: string;
  backend: string;
  type: string;
  orderKey: string | null;
  payload: string;
}

/** A row a server claimed: what its delivery needs. */
export interface Claimed {
  id: number;
  msg_id: string;
  event: string;
  payload: string;
  attempts: number;
  /** Its key's order (a successor waits for it), or null. */
  order_key: string | null;
}

export interface Lease {
  serverId: string;
  seconds: number;
  /** Seconds from the first attempt until a row that was never answered with a 2xx is failed. */
  retryWindowSeconds: number;
}

/** `(?, ?, ...)` for `count` values: a few texts only, so that each connection holds a few prepared statements. */
function placeholders(count: number): string {
  return `(${Array.from({ length: count }, () => '?').join(', ')})`;
}
export /** Values for an `in (...)` list padded to a power of two (the last one repeated): at most 8 texts for 1 to 128 values. */
function idList<Value>(ids: readonly Value[]): { sql: string; values: Value[] } {
  let size = 1;
  while (size < ids.length) size *= 2;
  const values = Array.from({ length: size }, (_, index) => ids[Math.min(index, ids.length - 1)]!);
  return { sql: placeholders(size), values };
}

/** An event for one of its webhooks: one row of the outbox. */
export interface EventRow extends NewEvent {
  url: string;
}

/** The insert of `count` rows, made once per count. */
const INSERTS: string[] = [];
function insertFor(count: number): string {
  return (INSERTS[count] ??=
    `insert into xmlrest_outbox (msg_id, backend, event, url, order_key, payload) values ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`);
}

const valuesOf = (row: EventRow): SqlValue[] => [row.msgId, row.backend, row.type, row.url, row.orderKey, row.payload];

/** The request path: a transaction's events, every webhook's row of each, in one statement (in the order emitted). */
export async function insertEvents(db: Queryable, rows: readonly EventRow[]): Promise<void> {
  await db.write(insertFor(rows.length), rows.flatMap(valuesOf));
}

/** The request path when its transaction has one row to write: the row and the COMMIT, in one round trip (OUTBOX_ROUTINES). */
export async function commitEvent(db: Queryable, row: EventRow): Promise<void> {
  await db.write(`call ${OUTBOX_COMMIT_PROCEDURE}(?, ?, ?, ?, ?, ?)`, valuesOf(row));
}

/** What a claim needs of the database: a transaction, in READ COMMITTED. */
export interface Transactions {
  transaction<T>(work: (db: Queryable) => Promise<T>, options?: { isolation?: 'read committed' }): Promise<T>;
}

/** A row's `order_key`, hidden behind a parked successor's head: see `claim`. */
type Candidate = Claimed & { blocked_until: Date | string | null };

/**
 * The rows of one webhook a server may deliver now, leased to it: due, its webhook not stopped, and no
 * earlier row of the same order key still pending (delivered in order per key; a leased one is pending
 * too). `limit` is a power of two (the worker rounds its free slots down), so the text takes few forms.
 *
 * The claim costs what it takes, never what waits:
 * - READ COMMITTED: the locking scan takes no gap locks, and the rows it reads but does not claim are
 *   unlocked at once, so a request inserting its event into the same range never waits for a claim (in
 *   REPEATABLE READ it waited until the claim committed);
 * - a stopped webhook's rows are not read at all: its stop is a constant of the statement (MariaDB finds the
 *   WHERE impossible before reading a row), not a test of each held row;
 * - a row behind a pending row of its key (its head, retrying or leased) is not left in the due range for the
 *   next claim to walk again: it is parked until its head's next attempt (or this lease's end, if later),
 *   and the head's outcome releases the next one of its key at once (`releaseNext`). So a key whose head
 *   retries for hours costs each of its rows one look per attempt of the head, not one per poll. A claim says
 *   how many it parked: a full batch of parked rows means more may wait in front of claimable ones, so the
 *   worker claims again at once rather than at its next poll (a backlog is set aside a batch a round trip).
 */
export async function claim(db: Transactions, target: Target, limit: number, lease: Lease): Promise<{ claimed: Claimed[]; parked: number }> {
  return db.transaction(
    async (tx) => {
      const rows = await tx.select<Candidate>(
        `select o.id, o.msg_id, o.event, o.payload, o.attempts, o.order_key,
          (select p.due from xmlrest_outbox p force index (xmlrest_outbox_order)
            where p.backend = o.backend and p.url = o.url and p.order_key = o.order_key and p.state = 'pending' and p.id < o.id
            order by p.id limit 1) as blocked_until
        from xmlrest_outbox o
        where o.state = 'pending' and o.backend = ? and o.url = ? and o.due <= now(3)
          and not exists (select 1 from xmlrest_webhook_stop s where s.backend = ? and s.url = ?)
        order by o.due, o.id limit ${Math.trunc(limit)}
        for update skip locked`,
        [target.backend, target.url, target.backend, target.url],
      );
      const claimed = rows.filter((row) => row.blocked_until === null);
      const blocked = rows.filter((row) => row.blocked_until !== null);
      if (claimed.length > 0) {
        const ids = idList(claimed.map((row) => Number(row.id)));
        await tx.write(
          `update xmlrest_outbox set due = now(3) + interval ? second, leased_by = ?, attempts = attempts + 1,
            give_up = coalesce(give_up, now(3) + interval ? second) where id in ${ids.sql}`,
          [lease.seconds, lease.serverId, lease.retryWindowSeconds, ...ids.values],
        );
      }
      if (blocked.length > 0) {
        // Parked until the earliest head's next attempt, and at least this lease: a head claimed now is leased that long.
        const until = new Date(Math.min(...blocked.map((row) => new Date(row.blocked_until!).getTime())));
        const ids = idList(blocked.map((row) => Number(row.id)));
        await tx.write(`update xmlrest_outbox set due = greatest(?, now(3) + interval ? second) where id in ${ids.sql}`, [until, lease.seconds, ...ids.values]);
      }
      return {
        claimed: claimed.map(({ blocked_until: _blocked, ...row }) => ({ ...row, id: Number(row.id), attempts: Number(row.attempts) + 1 })),
        parked: blocked.length,
      };
    },
    { isolation: 'read committed' },
  );
}

/**
 * The head of each of these keys is done (delivered, or failed for good): the next pending row of each, parked
 * behind it by a claim, is due now rather than when its parking ends.
 */
export async function releaseNext(db: Queryable, target: Target, orderKeys: readonly string[]): Promise<void> {
  for (let start = 0; start < orderKeys.length; start += 64) {
    const keys = idList(orderKeys.slice(start, start + 64));
    await db.write(
      `update xmlrest_outbox o join (select min(p.id) as id from xmlrest_outbox p force index (xmlrest_outbox_order)
          where p.backend = ? and p.url = ? and p.state = 'pending' and p.order_key in ${keys.sql} group by p.order_key) n on o.id = n.id
        set o.due = now(3) where o.leased_by is null and o.due > now(3)`,
      [target.backend, target.url, ...keys.values],
    );
  }
}

/** Rows this server claimed and will not send (a graceful stop): due at once, for any server. */
export async function release(db: Queryable, ids: readonly number[], serverId: string): Promise<void> {
  for (let start = 0; start < ids.length; start += 64) {
    const list = idList(ids.slice(start, start + 64));
    await db.write(`update xmlrest_outbox set due = now(3), leased_by = null, attempts = attempts - 1 where leased_by = ? and id in ${list.sql}`, [
      serverId,
      ...list.values,
    ]);
  }
}

/** Rows this server delivered (a 2xx, `status`), unless its lease ended and another server took them meanwhile. */
export async function markDelivered(db: Queryable, ids: readonly number[], status: number, serverId: string): Promise<void> {
  const list = idList(ids);
  await db.write(
    `update xmlrest_outbox set state = 'delivered', due = now(3), leased_by = null, last_status = ?, last_error = null
      where leased_by = ? and id in ${list.sql}`,
    [status, serverId, ...list.values],
  );
}

/**
 * An attempt that failed: the row is due again after `delayMs`, or failed when that is past its retry
 * window. Says which, or `lost` when this server's lease ended and another server took the row meanwhile
 * (nothing recorded: that server's outcome counts).
 */
export async function markAttemptFailed(
  db: Queryable,
  id: number,
  outcome: { status: number | null; error: string; delayMs: number },
  serverId: string,
): Promise<'retry' | 'failed' | 'lost'> {
  const rows = await db.select<{ failed: number }>(
    `select give_up < now(3) + interval ? microsecond as failed from xmlrest_outbox where id = ? and leased_by = ?`,
    [outcome.delayMs * 1000, id, serverId],
  );
  if (rows.length === 0) return 'lost';
  const failed = Number(rows[0]!.failed) === 1;
  const { affectedRows } = await db.write(
    `update xmlrest_outbox set state = ?, due = now(3) + interval ? microsecond, leased_by = null, last_status = ?, last_error = ?
      where id = ? and leased_by = ?`,
    [failed ? 'failed' : 'pending', failed ? 0 : outcome.delayMs * 1000, outcome.status, outcome.error.slice(0, 255), id, serverId],
  );
  if (affectedRows === 0) return 'lost';
  return failed ? 'failed' : 'retry';
}

/** A 410 Gone: the row is failed, and its webhook stopped until an operator retries a failed row of it. */
export async function markGone(
  db: { transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> },
  id: number,
  target: Target,
  serverId: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.write(
      `update xmlrest_outbox set state = 'failed', due = now(3), leased_by = null, last_status = 410,
        last_error = 'the receiver answered 410 Gone: deliveries to this webhook are stopped' where id = ? and leased_by = ?`,
      [id, serverId],
    );
    await tx.write(
      `insert into xmlrest_webhook_stop (backend, url, outbox_id) values (?, ?, ?)
        on duplicate key update stopped = now(3), outbox_id = values(outbox_id)`,
      [target.backend, target.url, id],
    );
  });
}

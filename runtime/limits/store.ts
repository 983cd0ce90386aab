import type { Queryable } from '../db/index.js';

/**
 * Where the calls of every server are counted (docs/internals/contract.md §10): one row
 * per caller and window in `xmlrest_rate_limit`, made by `xmlrest db init`. A
 * server never counts a call in the database: it takes a lease, a number of
 * calls it may admit by itself, in one statement; the leases of every server
 * together never pass the limit, so a deployment admits no more than the
 * limit, and a server asks the database once per lease, not once per call.
 */
export const RATE_LIMIT_TABLE = `create table if not exists xmlrest_rate_limit (
  bucket char(43) character set ascii collate ascii_bin not null,
  window_start int unsigned not null,
  used int unsigned not null,
  granted int unsigned not null,
  lease bigint unsigned not null,
  primary key (bucket, window_start)
) engine = InnoDB`;

/** Leases are at most this many calls, so that the lease and the count after it fit one exact JavaScript number. */
export const MAX_LEASE = 4_000_000;
/** The count after a lease fits under 2^30 (a limit has at most 9 digits); the lease is the bits above it. */
const SHIFT = 2 ** 30;

export interface Lease {
  /** Calls this server may admit: fewer than asked once the window's calls reach the limit, 0 after. */
  granted: number;
  /** The window's calls leased by every server, this lease included. */
  used: number;
}

export interface LeaseStore {
  lease(bucket: string, windowStart: number, want: number, limit: number): Promise<Lease>;
  /** Removes the rows of windows that ended before `before` (seconds). */
  prune(before: number): Promise<void>;
}

/**
 * The lease in one statement, whichever server asks and however many at once:
 * the row's lock makes each grant see the others, and MariaDB's
 * `last_insert_id(expr)` hands the grant and the count back in the statement's
 * own answer (its insert id), with no second statement and no transaction.
 */
const LEASE_SQL = `insert into xmlrest_rate_limit (bucket, window_start, used, granted, lease)
values (?, ?, least(?, ?), least(?, ?), last_insert_id(least(?, ?) * ${SHIFT} + least(?, ?)))
on duplicate key update
  granted = least(?, greatest(cast(? as signed) - cast(used as signed), 0)),
  used = used + granted,
  lease = last_insert_id(granted * ${SHIFT} + used)`;

export class DatabaseLeases implements LeaseStore {
  constructor(private readonly db: Queryable) {}

  async lease(bucket: string, windowStart: number, want: number, limit: number): Promise<Lease> {
    const result = await this.db.write(LEASE_SQL, [bucket, windowStart, want, limit, want, limit, want, limit, want, limit, want, limit]);
    const packed = result.insertId ?? 0;
    return { granted: Math.floor(packed / SHIFT), used: packed % SHIFT };
  }

  async prune(before: number): Promise<void> {
    await this.db.write('delete from xmlrest_rate_limit where window_start < ? limit 10000', [before]);
  }
}
